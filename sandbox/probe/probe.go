// Package probe holds what the doctor checks and measures in any sandbox
// backend's boxes, written once for Docker and Kubernetes: a hardened box's
// limits read back from inside by a probe bot, an out-of-memory kill
// reported as such, a turn deadline's precision, and the no-op bot's turns
// the bench times. The rows they give (sandbox.Check, sandbox.Timing) are
// the sandbox package's, which the doctor reads without importing a
// backend.
//
// A probe must never report a check as passed that it could not run: a box
// that did not open, or a bot whose answer is missing, fails the row with
// why. Every box it opens is closed before it returns.
package probe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// Script is a shell script run as a bot's program.
func Script(name, script string) sandbox.Program {
	return sandbox.Program{Name: name, Entry: name, Files: []sandbox.File{{Name: name, Data: []byte(script), Mode: 0o755}}}
}

// probeScript runs as a bot and reports, from inside, what the box allows.
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
echo "sa=$(ls /var/run/secrets/kubernetes.io/serviceaccount 2>/dev/null | tr '\n' ' ')"
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

// Facts are what the probe bot read from inside its box: uid, mem (the
// memory cgroup's limit), pids (the pids cgroup's), rootfs, netdevs,
// capeff, kernel, nproc (RLIMIT_NPROC), sa (the service-account token
// directory's files).
type Facts map[string]string

// GVisor says whether the bot saw gVisor's kernel.
func (f Facts) GVisor() bool { return strings.Contains(f["kernel"], "gvisor") }

// ProbeLimits are the limits the hardened check asks for.
func ProbeLimits() sandbox.Limits {
	lim := sandbox.DefaultLimits()
	lim.Memory = 256 * sandbox.MiB
	lim.Pids = 64
	lim.TurnTimeout = 10 * time.Second
	return lim
}

// Expect judges a backend's limits from the facts read inside a box opened
// with lim: what was read back, said for the row, and what is wrong.
type Expect func(f Facts, lim sandbox.Limits) (limits string, bad []string)

// Opened is a box the hardened check opened, with the facts its probe
// read, handed to a backend's further probes before the box closes.
type Opened struct {
	Box   sandbox.Box
	Facts Facts
}

// Hardened opens a box of be with ProbeLimits and a probe bot, and checks
// what every backend owes: the bot is not root, its root file system is
// read-only, it holds no capability, no service-account token is mounted,
// a child it left behind is killed at the turn's end; expect judges the
// limits and the network. then, when not nil, runs while the box is open.
func Hardened(ctx context.Context, be sandbox.Backend, expect Expect, then func(Opened)) sandbox.Check {
	lim := ProbeLimits()
	c := sandbox.Check{Name: "hardened " + boxWord(be)}
	start := time.Now()
	bx, err := be.Open(ctx, sandbox.Spec{Program: Script("doctor-probe", probeScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail, c.Fix = sandbox.Fail, err.Error(), "the "+be.Name()+" backend must honour read-only root, no capabilities, no privilege escalation, pids and memory limits"
		return c
	}
	defer bx.Close(ctx)
	startup := time.Since(start)
	rep, err := bx.Run(ctx, sandbox.Turn{Collect: "answer.txt", CollectMax: 4096})
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		return c
	}
	if !rep.Answer.Present {
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("the probe bot wrote no answer (exit %d, stderr %q)", rep.ExitCode, rep.Stderr.Data)
		return c
	}
	facts := Facts{}
	for _, line := range strings.Split(string(rep.Answer.Data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			facts[k] = strings.TrimSpace(v)
		}
	}
	var bad []string
	if facts["uid"] == "0" || facts["uid"] == "" {
		bad = append(bad, "bot ran as uid "+facts["uid"])
	}
	limits, more := expect(facts, lim)
	bad = append(bad, more...)
	if facts["rootfs"] != "read-only" {
		bad = append(bad, "root file system is "+facts["rootfs"])
	}
	if strings.Trim(facts["capeff"], "0") != "" {
		bad = append(bad, "bot has capabilities "+facts["capeff"])
	}
	if facts["sa"] != "" {
		bad = append(bad, "a service-account token is mounted: "+facts["sa"])
	}
	if rep.Survivors < 1 {
		bad = append(bad, "a setsid child was not reported killed")
	}
	if then != nil {
		then(Opened{Box: bx, Facts: facts})
	}
	if len(bad) > 0 {
		c.Status, c.Detail = sandbox.Fail, strings.Join(bad, "; ")
		c.Fix = "use a runtime image built by arena image build where limits are applied"
		return c
	}
	c.Status = sandbox.OK
	c.Detail = fmt.Sprintf("started in %v; uid %s, read-only root, no capabilities, %s, leftover child killed",
		startup.Round(time.Millisecond), facts["uid"], limits)
	return c
}

// boxWord is what a backend's box is called in a row's name.
func boxWord(be sandbox.Backend) string {
	if be.Name() == "kubernetes" {
		return "pod"
	}
	return "container"
}

// OOM checks that a hog without bound under a 48 MiB limit is reported as
// killed for memory.
func OOM(ctx context.Context, be sandbox.Backend, fix string) sandbox.Check {
	lim := sandbox.DefaultLimits()
	lim.Memory = 48 * sandbox.MiB
	lim.TurnTimeout = 20 * time.Second
	c := sandbox.Check{Name: "out-of-memory detection"}
	bx, err := be.Open(ctx, sandbox.Spec{Program: Script("doctor-hog", hogScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		return c
	}
	defer bx.Close(ctx)
	rep, err := bx.Run(ctx, sandbox.Turn{})
	switch {
	case err != nil:
		c.Status, c.Detail = sandbox.Fail, err.Error()
	case !rep.OOMKilled:
		c.Status = sandbox.Fail
		c.Detail = fmt.Sprintf("a hog without bound under a 48 MiB limit was not reported as out of memory (exit %d, signal %d, timed out %v)", rep.ExitCode, rep.Signal, rep.TimedOut)
		c.Fix = fix
	default:
		c.Status = sandbox.OK
		c.Detail = fmt.Sprintf("hog killed for memory after %v and reported as such", rep.Wall.Round(time.Millisecond))
	}
	return c
}

// Deadline checks that a sleeping bot's 250 ms turn limit is enforced,
// three times, and says by how much it was overshot at worst.
func Deadline(ctx context.Context, be sandbox.Backend) sandbox.Check {
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 250 * time.Millisecond
	c := sandbox.Check{Name: "turn deadline"}
	bx, err := be.Open(ctx, sandbox.Spec{Program: Script("doctor-sleeper", sleepScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		return c
	}
	defer bx.Close(ctx)
	var worst time.Duration
	for range 3 {
		rep, err := bx.Run(ctx, sandbox.Turn{})
		if err != nil {
			c.Status, c.Detail = sandbox.Fail, err.Error()
			return c
		}
		if !rep.TimedOut {
			c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("a sleeping bot was not reported as timed out (wall %v)", rep.Wall)
			return c
		}
		worst = max(worst, rep.Wall-lim.TurnTimeout)
	}
	c.Status = sandbox.OK
	c.Detail = fmt.Sprintf("a 250 ms limit is enforced with at most %v overshoot", worst.Round(10*time.Microsecond))
	if worst > 20*time.Millisecond {
		c.Status = sandbox.Warn
		c.Fix = "the host is overloaded or its timers are coarse; short turn limits will be unfair"
	}
	return c
}

// noopScript is the bot the bench runs: it answers and exits at once.
const noopScript = "#!/bin/sh\necho '{}' > move.json\n"

// Noop is the bench's bot: it answers and exits at once.
func Noop() sandbox.Program { return Script("noop", noopScript) }

// NoopTurn is the turn the bench's no-op bot is given.
func NoopTurn() sandbox.Turn {
	return sandbox.Turn{Remove: []string{"move.json"}, Put: []sandbox.File{{Name: "state.json", Data: []byte("{}")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10}
}

// Turns times runs turns of the no-op bot in one box of be.
func Turns(ctx context.Context, be sandbox.Backend, lim sandbox.Limits, runs int) ([]time.Duration, error) {
	bx, err := be.Open(ctx, sandbox.Spec{Program: Noop(), Limits: lim})
	if err != nil {
		return nil, err
	}
	defer bx.Close(ctx)
	turn := NoopTurn()
	var d []time.Duration
	for range runs {
		t := time.Now()
		r, err := bx.Run(ctx, turn)
		if err != nil {
			return nil, err
		}
		if r.ExitCode != 0 || !r.Answer.Present {
			return nil, fmt.Errorf("the no-op bot failed (exit %d, %s)", r.ExitCode, r.Stderr.Data)
		}
		d = append(d, time.Since(t))
	}
	return d, nil
}
