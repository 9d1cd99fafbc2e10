package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
)

var ownerOnce = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), startTime(os.Getpid()))
})

// Owner identifies this arena process: host, PID and the PID's start time, so a
// reused PID is not mistaken for us.
func Owner() string { return ownerOnce() }

// startTime is field 22 of /proc/PID/stat, the process start in clock ticks.
func startTime(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "0"
	}
	s := string(data)
	// The command name may contain spaces; fields restart after its ')'.
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 20 {
		return "0"
	}
	return f[19]
}

// ownerAlive reports whether the arena process named by an owner label still runs
// on this host. Owners on other hosts are presumed alive.
func ownerAlive(owner string) bool {
	parts := strings.Split(owner, "/")
	if len(parts) != 3 {
		return false
	}
	host, _ := os.Hostname()
	if parts[0] != host {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	return startTime(pid) == parts[2]
}

// SweepResult counts what Sweep removed.
type SweepResult struct {
	Containers, Volumes int
}

// Sweep removes containers and volumes labelled by arena processes that are no
// longer running on this host (all=true: by any arena process, anywhere). The
// engine can create a container and still fail the call that asked for it, so a
// killed or interrupted run may leave some behind.
func Sweep(ctx context.Context, cli *client.Client, all bool) (SweepResult, error) {
	var res SweepResult
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelOwner))})
	if err != nil {
		return res, fmt.Errorf("list containers: %w", err)
	}
	for _, c := range list {
		owner := c.Labels[LabelOwner]
		if owner == Owner() || (!all && ownerAlive(owner)) {
			continue
		}
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			slog.Debug("docker: swept a leftover container", "container", shortID(c.ID), "owner", owner)
			res.Containers++
		} else {
			slog.Warn("docker: a leftover container could not be removed", "container", shortID(c.ID), "owner", owner, "err", err)
		}
	}
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelOwner), filters.Arg("dangling", "true"))})
	if err != nil {
		return res, fmt.Errorf("list volumes: %w", err)
	}
	for _, v := range vols.Volumes {
		owner := v.Labels[LabelOwner]
		if owner == Owner() || (!all && ownerAlive(owner)) {
			continue
		}
		if err := cli.VolumeRemove(ctx, v.Name, true); err == nil {
			slog.Debug("docker: swept a leftover volume", "volume", v.Name, "owner", owner)
			res.Volumes++
		} else {
			slog.Warn("docker: a leftover volume could not be removed", "volume", v.Name, "owner", owner, "err", err)
		}
	}
	return res, nil
}

// Count returns how many containers carry arena's label with the given extra
// label (key=value), or any arena label when extra is empty.
func Count(ctx context.Context, cli *client.Client, extra string) (int, error) {
	args := filters.NewArgs(filters.Arg("label", LabelOwner))
	if extra != "" {
		args.Add("label", extra)
	}
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	return len(list), err
}
