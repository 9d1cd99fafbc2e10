package docker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/arenabots/arena/sandbox"
)

// Owner identifies this arena process: host, PID and the PID's start time, so a
// reused PID is not mistaken for us (sandbox.Owner).
func Owner() string { return sandbox.Owner() }

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
		if owner == Owner() || (!all && sandbox.OwnerAlive(owner)) {
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
		if owner == Owner() || (!all && sandbox.OwnerAlive(owner)) {
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
