package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hostCgroup is a container's cgroup as the engine's host sees it: where a
// runtime that keeps its own view inside (gVisor shows the bot a cgroup file
// system of its own making) is checked from outside. It is found only when
// arena runs on the engine's machine, in its process namespace.
type hostCgroup struct {
	// memory and pids are the directories of the container's memory and
	// pids controllers (the same directory under cgroup v2).
	memory, pids string
	v2           bool
}

// cgroupRoot is where the host's cgroup file systems are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// findHostCgroup finds the cgroup of the container id whose process on the
// engine's host is pid (the engine's inspect says which). The process must
// belong to a cgroup named after the container: a pid of another namespace
// is somebody else's.
func findHostCgroup(pid int, id string) (*hostCgroup, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("the engine gives the container no process")
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return nil, fmt.Errorf("the container's process %d is not visible here (is the engine on another machine?): %w", pid, err)
	}
	return parseProcCgroup(string(data), id)
}

// parseProcCgroup reads /proc/PID/cgroup of the container id.
func parseProcCgroup(data, id string) (*hostCgroup, error) {
	cg := &hostCgroup{}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], id) {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			switch c {
			case "memory":
				cg.memory = filepath.Join(cgroupRoot, "memory", parts[2])
			case "pids":
				cg.pids = filepath.Join(cgroupRoot, "pids", parts[2])
			}
		}
	}
	if cg.memory == "" && cg.pids == "" && unified != "" {
		dir := filepath.Join(cgroupRoot, unified)
		return &hostCgroup{memory: dir, pids: dir, v2: true}, nil
	}
	if cg.memory == "" || cg.pids == "" {
		return nil, fmt.Errorf("no memory and pids cgroup of container %s in /proc's list", shortID(id))
	}
	return cg, nil
}

// OOMKills is how many processes the kernel has killed in the cgroup for
// memory, or -1 when it cannot be read.
func (cg *hostCgroup) OOMKills() int64 {
	file := filepath.Join(cg.memory, "memory.oom_control")
	if cg.v2 {
		file = filepath.Join(cg.memory, "memory.events")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// Limits reads the cgroup's memory and pids limits ("max" reads as -1).
func (cg *hostCgroup) Limits() (memory, pids int64, err error) {
	memFile := filepath.Join(cg.memory, "memory.limit_in_bytes")
	if cg.v2 {
		memFile = filepath.Join(cg.memory, "memory.max")
	}
	if memory, err = readLimit(memFile); err != nil {
		return 0, 0, err
	}
	if pids, err = readLimit(filepath.Join(cg.pids, "pids.max")); err != nil {
		return 0, 0, err
	}
	return memory, pids, nil
}

func readLimit(file string) (int64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is no limit", file, s)
	}
	return n, nil
}
