package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var ownerOnce = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), startTime(os.Getpid()))
})

// Owner identifies this arena process: host, PID and the PID's start time,
// so a reused PID is not mistaken for us. A container backend labels what
// it creates with it, so that what a dead process left can be found.
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

// OwnerAlive reports whether the arena process named by an Owner still runs
// on this host. Owners on other hosts are presumed alive.
func OwnerAlive(owner string) bool {
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
