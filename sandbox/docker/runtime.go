package docker

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/system"

	"github.com/arenabots/arena/sandbox"
)

// Runtime is the OCI runtime an engine runs a backend's containers with:
// runc (the engine's usual default), or gVisor's runsc, a user-space kernel
// between the bot and the host's.
type Runtime struct {
	// Name is the runtime as the engine registers it ("runc", "runsc").
	Name string
	// Path is the engine's path to it ("" when the engine does not say).
	Path string
	// GVisor says the runtime is gVisor's runsc: the bot's system calls are
	// served by gVisor's kernel, and the host's cgroup of a container holds
	// that kernel's threads and memory too (see Translate).
	GVisor bool
}

// String is the runtime's name and what it is.
func (r Runtime) String() string {
	if r.GVisor {
		return r.Name + " (gVisor)"
	}
	return r.Name
}

// isGVisor says whether a runtime registered as name with path is gVisor's
// runsc: by the binary's name (runsc, runsc-*) or the runtime's (runsc, a
// containerd shim io.containerd.runsc.v1).
func isGVisor(name, path string) bool {
	base := strings.ToLower(filepath.Base(path))
	return strings.HasPrefix(base, "runsc") || strings.Contains(strings.ToLower(name), "runsc")
}

// MissingRuntimeError is a runtime the engine does not have.
type MissingRuntimeError struct {
	// Name is the runtime asked for; Have are the engine's.
	Name string
	Have []string
}

func (e *MissingRuntimeError) Error() string {
	return fmt.Sprintf("the engine has no runtime %q (it has %s)", e.Name, strings.Join(e.Have, ", "))
}

// Fix says how to give the engine the runtime.
func (e *MissingRuntimeError) Fix() string {
	if isGVisor(e.Name, "") {
		return "install gVisor's runsc (scripts/runsc.sh builds it from source) and register it with the engine: " +
			`"runtimes": {"` + e.Name + `": {"path": "/usr/local/bin/runsc"}} in its daemon.json, then restart it; or leave --runtime out to run under ` + "runc"
	}
	return `register it with the engine ("runtimes" in its daemon.json, or dockerd --add-runtime), or leave --runtime out`
}

// ResolveRuntime finds the runtime name names on the engine info describes:
// "" is the engine's default. A name the engine does not have is a
// *MissingRuntimeError.
func ResolveRuntime(info system.Info, name string) (Runtime, error) {
	if name == "" {
		name = info.DefaultRuntime
	}
	if name == "" {
		name = "runc"
	}
	rt, ok := info.Runtimes[name]
	if !ok {
		// An engine from before runtimes were listed still runs runc.
		if len(info.Runtimes) == 0 && name == "runc" {
			return Runtime{Name: name}, nil
		}
		have := make([]string, 0, len(info.Runtimes))
		for k := range info.Runtimes {
			have = append(have, k)
		}
		slices.Sort(have)
		return Runtime{}, &MissingRuntimeError{Name: name, Have: have}
	}
	return Runtime{Name: name, Path: rt.Path, GVisor: isGVisor(name, rt.Path)}, nil
}

// GVisorRuntimes are the gVisor runtimes an engine has, by name.
func GVisorRuntimes(info system.Info) []string {
	var out []string
	for name, rt := range info.Runtimes {
		if isGVisor(name, rt.Path) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// gVisor's own cost, as the host's cgroup of a sandbox counts it. Under
// runsc a container's pids and memory limits are applied to the host's
// cgroup of the whole sandbox: gVisor's kernel (the Sentry, a Go program with
// its own threads), its file proxy, and for each thread of the bot a host
// thread that runs it and one that serves it. These are what Translate adds
// so that the bot gets what the organizer set; docs/sandbox.md has the
// measurements they come from.
const (
	// gvisorPidsPerTask is the host threads per thread of the bot.
	gvisorPidsPerTask = 2
	// gvisorPidsBase is the host threads of an idle sandbox (its kernel's,
	// its file proxy's), with room for the threads the Go runtime adds under
	// load.
	gvisorPidsBase = 256
	// gvisorMemory is the host memory of an idle sandbox beyond what the bot
	// uses: its kernel's heap and page tables, its file proxy.
	gvisorMemory = 96 * sandbox.MiB
)

// Translate is what the engine is asked for so that a bot under runtime r
// gets lim: under runc, lim itself. Under gVisor the host's cgroup also holds
// gVisor's own threads and memory: the pids limit becomes room for the bot's
// lim.Pids tasks, each with its host threads, plus gVisor's own; the memory
// limit grows by gVisor's own memory. Inside, gVisor's kernel holds the bot
// to lim.Pids itself (the agent sets RLIMIT_NPROC, which gVisor counts per
// sandbox) and reports lim.Memory as the machine's memory.
func (r Runtime) Translate(lim sandbox.Limits) sandbox.Limits {
	if !r.GVisor {
		return lim
	}
	out := lim
	out.Pids = lim.Pids*gvisorPidsPerTask + gvisorPidsBase
	out.Memory = lim.Memory + gvisorMemory
	return out
}
