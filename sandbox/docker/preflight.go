package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"

	"github.com/arenabots/arena/internal/version"
	"github.com/arenabots/arena/sandbox"
)

// Status of one preflight check.
type Status string

// Check statuses.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Check is one line of the preflight table.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// probeScript runs as a bot and reports, from inside, what the container allows.
const probeScript = `#!/bin/sh
{
echo "uid=$(id -u)"
echo "mem=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)"
echo "pids=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null)"
if (echo x > /probe) 2>/dev/null; then echo "rootfs=writable"; else echo "rootfs=read-only"; fi
echo "netdevs=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
echo "capeff=$(grep CapEff /proc/self/status | tr -d '\t' | cut -d: -f2)"
echo "kernel=$(cat /proc/version)"
echo "nproc=$(grep 'Max processes' /proc/self/limits | tr -s ' ' | cut -d' ' -f3)"
} > answer.txt
setsid sleep 1000 >/dev/null 2>&1 < /dev/null &
exit 0
`

// hogScript grows without bound: tail keeps the last line of /dev/zero,
// which never ends.
const hogScript = `#!/bin/sh
tail /dev/zero > /dev/null
echo survived
`

const sleepScript = `#!/bin/sh
exec sleep 1000
`

// Preflight checks what official matches need from the engine, its runtime
// runtime ("": the engine's default) and the runtime image. It starts a few
// short-lived hardened containers.
func Preflight(ctx context.Context, cli *client.Client, image, runtime string) []Check {
	var out []Check
	add := func(c Check) { out = append(out, c) }

	if err := Ping(ctx, cli); err != nil {
		add(Check{"engine", Fail, err.Error(), "start the engine (scripts/ensure-docker.sh) or point --docker-host / DOCKER_HOST at one"})
		return skipAfter(out, "engine", "needs the engine")
	}
	add(Check{"engine", OK, "reachable at " + cli.DaemonHost(), ""})

	if v, err := cli.ServerVersion(ctx); err != nil {
		add(Check{"versions", Warn, err.Error(), ""})
	} else {
		api := cli.ClientVersion()
		st := OK
		fix := ""
		if version.Less(api, "1.41") {
			st, fix = Warn, "arena is tested against API 1.41 and later; upgrade the engine"
		}
		add(Check{"versions", st, fmt.Sprintf("Docker %s, API %s negotiated (server %s, minimum %s), kernel %s", v.Version, api, v.APIVersion, v.MinAPIVersion, v.KernelVersion), fix})
	}
	info, err := cli.Info(ctx)
	if err != nil {
		add(Check{"cgroups", Warn, err.Error(), ""})
		add(Check{"storage driver", Warn, err.Error(), ""})
	} else {
		st, fix := OK, ""
		if info.CgroupVersion != "1" && info.CgroupVersion != "2" {
			st, fix = Warn, "memory and pids limits need cgroups; check the engine's cgroup setup"
		}
		add(Check{"cgroups", st, fmt.Sprintf("v%s, driver %s, %d CPUs, %.1f GiB", info.CgroupVersion, info.CgroupDriver, info.NCPU, float64(info.MemTotal)/(1<<30)), fix})
		st, fix = OK, ""
		if info.Driver == "vfs" {
			st, fix = Warn, "vfs copies whole images per container; use overlay2"
		}
		add(Check{"storage driver", st, info.Driver, fix})
	}

	rt, row := runtimeCheck(info, err, runtime)
	add(row)
	if row.Status == Fail {
		return skipAfter(out, "runtime", "needs the runtime")
	}
	b := New(cli, image)
	b.UseRuntime(rt.Name)
	id, err := b.CheckImage(ctx)
	if err != nil {
		add(Check{"runtime image", Fail, err.Error(), "arena image build (offline: arena image testbase && arena image build --base arena-testbase:trixie)"})
		return skipAfter(out, "runtime image", "needs the runtime image")
	}
	add(Check{"runtime image", OK, fmt.Sprintf("%s (%s)", image, shortID(id)), ""})

	add(hardenedCheck(ctx, b, rt))
	add(oomCheck(ctx, b))
	add(deadlineCheck(ctx, b))
	return out
}

// preflightRows are Preflight's rows, in order.
var preflightRows = []string{"engine", "versions", "cgroups", "storage driver", "runtime", "runtime image", "hardened container", "out-of-memory detection", "turn deadline"}

// skipAfter adds to out every row after the row named failed, skipped
// because they need what it checked.
func skipAfter(out []Check, failed, why string) []Check {
	for _, name := range preflightRows[slices.Index(preflightRows, failed)+1:] {
		out = append(out, Check{name, Skip, why, ""})
	}
	return out
}

func scriptProgram(name, script string) sandbox.Program {
	return sandbox.Program{Name: name, Entry: name, Files: []sandbox.File{{Name: name, Data: []byte(script), Mode: 0o755}}}
}

// runtimeCheck says which runtime bots run under and what it protects
// against; info is the engine's (infoErr when it could not be read).
func runtimeCheck(info system.Info, infoErr error, name string) (Runtime, Check) {
	c := Check{Name: "runtime"}
	if infoErr != nil {
		c.Status, c.Detail = Fail, "the engine's runtimes could not be read: "+infoErr.Error()
		return Runtime{}, c
	}
	rt, err := ResolveRuntime(info, name)
	var missing *MissingRuntimeError
	if errors.As(err, &missing) {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), missing.Fix()
		return rt, c
	}
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return rt, c
	}
	c.Status = OK
	if rt.GVisor {
		c.Detail = fmt.Sprintf("%s at %s: gVisor's kernel serves the bots' system calls, a second wall between a kernel bug and this host; a fresh process per turn costs more (doctor --bench), and each game gets a new container", rt, rt.Path)
		return rt, c
	}
	c.Detail = rt.Name + ": bots' system calls reach this host's kernel (namespaces, cgroups, seccomp, no capabilities)"
	if g := GVisorRuntimes(info); len(g) > 0 {
		c.Detail += "; gVisor is available as --runtime " + g[0]
	} else {
		c.Detail += "; no gVisor runtime registered for a second wall (see docs/sandbox.md)"
	}
	return rt, c
}

func hardenedCheck(ctx context.Context, b *Backend, rt Runtime) Check {
	lim := sandbox.DefaultLimits()
	lim.Memory = 256 * sandbox.MiB
	lim.Pids = 64
	lim.TurnTimeout = 10 * time.Second
	c := Check{Name: "hardened container"}
	start := time.Now()
	bx, err := b.Open(ctx, sandbox.Spec{Program: scriptProgram("doctor-probe", probeScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), "the engine must honour read-only root, cap-drop, no-new-privileges, pids and memory limits"
		return c
	}
	defer bx.Close(ctx)
	startup := time.Since(start)
	rep, err := bx.Run(ctx, sandbox.Turn{Collect: "answer.txt", CollectMax: 4096})
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	facts := map[string]string{}
	for _, line := range strings.Split(string(rep.Answer.Data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			facts[k] = strings.TrimSpace(v)
		}
	}
	var bad []string
	if facts["uid"] == "0" || facts["uid"] == "" {
		bad = append(bad, "bot ran as uid "+facts["uid"])
	}
	gvisor := strings.Contains(facts["kernel"], "gvisor")
	limits := fmt.Sprintf("limits read back (memory %d MiB, pids %d)", lim.Memory/sandbox.MiB, lim.Pids)
	switch {
	case rt.GVisor && !gvisor:
		bad = append(bad, fmt.Sprintf("runtime %s is taken for gVisor, but the bot sees the kernel %q", rt.Name, facts["kernel"]))
	case !rt.GVisor && gvisor:
		bad = append(bad, fmt.Sprintf("runtime %s is taken for runc, but the bot sees gVisor's kernel", rt.Name))
	case rt.GVisor:
		// gVisor shows the bot a cgroup file system of its own: the
		// limits were read back on the host's cgroup when the box opened,
		// and the bot's process limit is gVisor's own count.
		if facts["nproc"] != strconv.FormatInt(lim.Pids, 10) {
			bad = append(bad, fmt.Sprintf("process limit inside is %q, asked %d", facts["nproc"], lim.Pids))
		}
		host := rt.Translate(lim)
		limits = fmt.Sprintf("under gVisor (%s); limits read back on the host's cgroup (memory %d MiB, pids %d: the bot's %d MiB and %d, plus gVisor's own) and the bot's process limit inside (%s)",
			strings.TrimSpace(facts["kernel"]), host.Memory/sandbox.MiB, host.Pids, lim.Memory/sandbox.MiB, lim.Pids, facts["nproc"])
	default:
		if facts["mem"] != strconv.FormatInt(lim.Memory, 10) {
			bad = append(bad, fmt.Sprintf("memory limit inside is %q, asked %d", facts["mem"], lim.Memory))
		}
		if facts["pids"] != strconv.FormatInt(lim.Pids, 10) {
			bad = append(bad, fmt.Sprintf("pids limit inside is %q, asked %d", facts["pids"], lim.Pids))
		}
	}
	if facts["rootfs"] != "read-only" {
		bad = append(bad, "root file system is "+facts["rootfs"])
	}
	// gVisor's netstack may list no device at all to the bot: no network
	// either.
	if nd := strings.Fields(facts["netdevs"]); !(len(nd) == 1 && nd[0] == "lo") && !(rt.GVisor && len(nd) == 0) {
		bad = append(bad, "network devices: "+facts["netdevs"])
	}
	if strings.Trim(facts["capeff"], "0") != "" {
		bad = append(bad, "bot has capabilities "+facts["capeff"])
	}
	if rep.Survivors < 1 {
		bad = append(bad, "a setsid child was not reported killed")
	}
	if len(bad) > 0 {
		c.Status, c.Detail = Fail, strings.Join(bad, "; ")
		c.Fix = "use a runtime image built by `arena image build` on an engine that applies limits"
		return c
	}
	c.Status = OK
	c.Detail = fmt.Sprintf("started in %v; uid %s, no network, read-only root, no capabilities, %s, leftover child killed",
		startup.Round(time.Millisecond), facts["uid"], limits)
	return c
}

func oomCheck(ctx context.Context, b *Backend) Check {
	lim := sandbox.DefaultLimits()
	lim.Memory = 48 * sandbox.MiB
	lim.TurnTimeout = 20 * time.Second
	c := Check{Name: "out-of-memory detection"}
	bx, err := b.Open(ctx, sandbox.Spec{Program: scriptProgram("doctor-hog", hogScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	defer bx.Close(ctx)
	rep, err := bx.Run(ctx, sandbox.Turn{})
	switch {
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
	case !rep.OOMKilled:
		c.Status = Fail
		c.Detail = fmt.Sprintf("a hog without bound under a 48 MiB limit was not reported as out of memory (exit %d, signal %d, timed out %v)", rep.ExitCode, rep.Signal, rep.TimedOut)
		c.Fix = "the engine must expose the container's memory cgroup (memory.events or memory.oom_control)"
	default:
		c.Status = OK
		c.Detail = fmt.Sprintf("hog killed for memory after %v and reported as such", rep.Wall.Round(time.Millisecond))
	}
	return c
}

func deadlineCheck(ctx context.Context, b *Backend) Check {
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 250 * time.Millisecond
	c := Check{Name: "turn deadline"}
	bx, err := b.Open(ctx, sandbox.Spec{Program: scriptProgram("doctor-sleeper", sleepScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	defer bx.Close(ctx)
	var worst time.Duration
	for i := 0; i < 3; i++ {
		rep, err := bx.Run(ctx, sandbox.Turn{})
		if err != nil {
			c.Status, c.Detail = Fail, err.Error()
			return c
		}
		if !rep.TimedOut {
			c.Status, c.Detail = Fail, fmt.Sprintf("a sleeping bot was not reported as timed out (wall %v)", rep.Wall)
			return c
		}
		worst = max(worst, rep.Wall-lim.TurnTimeout)
	}
	c.Status = OK
	c.Detail = fmt.Sprintf("a 250 ms limit is enforced with at most %v overshoot", worst.Round(10*time.Microsecond))
	if worst > 20*time.Millisecond {
		c.Status = Warn
		c.Fix = "the host is overloaded or its timers are coarse; short turn limits will be unfair"
	}
	return c
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
