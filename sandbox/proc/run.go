// Package proc runs one turn of a bot from right next to it: the process with an
// exact deadline, every process it leaves behind killed and reaped, and the game
// directory prepared before and inspected after, without ever following a link the
// bot planted.
//
// It is shared by the agent that runs as PID 1 inside each bot container and by the
// local backend. Run (a fresh process per turn) and StartSession (one process for a
// whole match) fork, limit, signal and reap the bot through the same code.
//
// What the package must never do:
//
//   - Run a bot without its limits. A limit that cannot be set, or a Started hook
//     that fails, kills and reaps the bot and fails the start with an error naming
//     the limit. (prlimit can only reach the bot once fork and exec have returned,
//     so its first instructions run before its limits; it never runs on without
//     them.)
//   - Leave a child unreaped. The bot is waited for on every path, a failed start
//     included, and with ReapAll every orphan too. Only a bot that cannot be killed
//     is not waited for (that would block for ever), and that is an error.
//   - Let anything of the bot outlive its turn or its session: its process group
//     (ReapGroup) or every other process (ReapAll) is killed once it ends. A
//     ReapGroup child that leaves the group escapes: that mode is for the local
//     backend, which isolates nothing anyway.
//   - Block on anything the bot controls: output is read into bounded tails, FIFOs
//     are opened non-blocking, files are read with a cap.
//   - Follow a link the bot planted, when preparing, reading, listing or wiping.
//   - Drop an error of its own, or charge one to the bot. Only a bot that cannot be
//     executed is the bot's doing (Result.StartError, *ExecError); a pipe, limit,
//     signal, wait or wipe that fails is returned as an error. A wipe that failed
//     leaves a directory that may hold what the bot left: its caller must not run
//     another bot there until a wipe succeeds (Unclean keeps that state for the
//     agent and the local backend alike).
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// Reaping says how the processes of a turn are found and killed.
type Reaping int

const (
	// ReapGroup kills the bot's process group and waits for the bot only. Children
	// that leave the group (setsid) escape it; acceptable only where there is no
	// isolation anyway.
	ReapGroup Reaping = iota
	// ReapAll is for PID 1 of a namespace that holds nothing but the bot: kill(-1)
	// reaches every other process, and every orphan is reparented to us and reaped.
	ReapAll
)

// Spec is one process to run.
type Spec struct {
	Path    string
	Args    []string // argv, including argv[0]
	Dir     string
	Env     []string
	Cred    *syscall.Credential // nil keeps our own user
	Timeout time.Duration
	Tail    int // bytes of stdout and stderr kept
	Reaping Reaping
	// Started runs right after the process started and its Rlimits were set
	// (e.g. to adjust its OOM score). An error fails the start: the process is
	// killed and reaped.
	Started func(pid int) error
	// Meter, when set, measures how long the host keeps the bot off the
	// CPU: the deadline is moved past that wait (see hostwait.go), up to
	// sandbox.WallCap of the timeout, where the turn is the host's fault
	// (Result.HostStalled). Without it the deadline is the wall clock's.
	Meter *Meter
	// GroupMeter, with no Meter, measures that wait on the bot's own
	// process group through /proc (GroupMeter): a host that gives the bot
	// no cgroup of its own.
	GroupMeter bool
	// Rlimits are applied to the process right after it starts (local
	// backend). A limit that cannot be set fails the start: the process is
	// killed and reaped.
	Rlimits []Rlimit
}

// meter is what measures the host's wait on the bot started as pid (the
// leader of its process group), or nil.
func (s Spec) meter(pid int) *Meter {
	if s.Meter == nil && s.GroupMeter {
		return GroupMeter("/proc", pid)
	}
	return s.Meter
}

// Rlimit is one resource limit applied with prlimit.
type Rlimit struct {
	Resource int
	Value    uint64
}

// Result is what happened to the process.
type Result struct {
	StartError string
	ExitCode   int
	Signal     int
	TimedOut   bool
	Wall       time.Duration
	CPU        time.Duration
	PeakRSS    int64
	Survivors  int
	Stdout     sandbox.Tail
	Stderr     sandbox.Tail
	// HostWait is how long the host kept the bot off the CPU (Spec.Meter).
	HostWait time.Duration
	// HostStalled: the turn reached its wall-clock cap with the bot's own
	// time still short of the timeout. The host's fault, never the bot's.
	HostStalled bool
	// MeterError says why the host's wait could not be measured, when the
	// meter failed (the deadline was then the wall clock's).
	MeterError string
}

// Run starts the process, waits for it under the deadline, and kills everything it
// left behind. The error is for failures of our own (pipes, limits, wait, kill);
// a bot that cannot be executed is a Result with StartError set.
func Run(ctx context.Context, s Spec) (Result, error) {
	c, err := startChild(s, false)
	if ee := (*ExecError)(nil); errors.As(err, &ee) {
		return Result{StartError: ee.Error(), ExitCode: -1, Wall: ee.wall}, nil
	}
	if err != nil {
		return Result{}, err
	}
	out, errOut := readTail(c.stdout, s.Tail), readTail(c.stderr, s.Tail)
	d := c.armDeadline(ctx, s.Timeout, s.meter(c.pid))
	var res Result
	status, err := c.waitBot(&res, d.sampleAtExit)
	d.stop()
	if err != nil {
		err = errors.Join(fmt.Errorf("proc: wait: %w", err), wrapKill(c.kill()))
	} else {
		// Nothing of the bot may outlive its turn.
		err = c.reapRest(&res)
	}
	tails := time.Now().Add(tailGrace)
	res.Stdout, res.Stderr = out.finish(tails), errOut.finish(tails)
	if err != nil {
		return res, err
	}
	res.HostWait, res.MeterError = d.hostWait()
	res.HostStalled = d.stalled.Load()
	// The deadline fired when the bot's own time was up; its wait read at
	// the exit, later, may be larger and is not the decision's.
	res.TimedOut = d.fired.Load() && res.Wall >= s.Timeout
	res.setStatus(status)
	if err := d.killErr(); err != nil {
		return res, wrapKill(err)
	}
	return res, nil
}

// setStatus reports how the bot ended.
func (r *Result) setStatus(status syscall.WaitStatus) {
	switch {
	case status.Signaled():
		r.ExitCode = -1
		r.Signal = int(status.Signal())
	case r.TimedOut || r.HostStalled:
		r.ExitCode = -1
	default:
		r.ExitCode = status.ExitStatus()
	}
}

// deadline kills the bot when its time is up or its context is done.
type deadline struct {
	timer   *time.Timer
	stopCtx func() bool
	fired   atomic.Bool // the time ran out
	stalled atomic.Bool // the wall-clock cap came first (the host's fault)

	mu      sync.Mutex
	err     error      // every kill that failed
	clock   *waitClock // the host's wait
	stopped bool
}

// armDeadline arms the kill of c when ctx is done or timeout after its fork
// and exec returned. With a meter, a deadline that comes while the host has
// kept the bot waiting is moved on by that wait, until sandbox.WallCap.
func (c *child) armDeadline(ctx context.Context, timeout time.Duration, meter *Meter) *deadline {
	d := &deadline{clock: startClock(meter, true)}
	kill := func() {
		if err := c.kill(); err != nil {
			d.mu.Lock()
			d.err = errors.Join(d.err, err)
			d.mu.Unlock()
		}
	}
	fire := func() {
		d.mu.Lock()
		again, stalled := d.clock.extend(time.Since(c.forked), timeout)
		if again > 0 && !d.stopped {
			d.timer.Reset(again)
		}
		d.mu.Unlock()
		switch {
		case again > 0:
			return
		case stalled:
			d.stalled.Store(true)
		default:
			d.fired.Store(true)
		}
		kill()
	}
	d.mu.Lock() // fire must not see d.timer unset
	d.timer = time.AfterFunc(timeout-time.Since(c.forked), fire)
	d.mu.Unlock()
	d.stopCtx = context.AfterFunc(ctx, kill)
	return d
}

// sampleAtExit takes the last reading, with the bot ended but not yet
// reaped (its tasks' figures are still there).
func (d *deadline) sampleAtExit() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock.sample()
}

// hostWait is the host's wait over the whole turn, and why its measure
// ended early, if it did.
func (d *deadline) hostWait() (time.Duration, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.clock.wait, d.clock.errString()
}

// stop disarms the deadline.
func (d *deadline) stop() {
	d.mu.Lock()
	d.stopped = true
	d.timer.Stop()
	d.mu.Unlock()
	d.stopCtx()
}

// killErr is what went wrong when the deadline killed the bot, if anything.
func (d *deadline) killErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

func (r *Result) add(ru *syscall.Rusage) {
	r.CPU += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if rss := ru.Maxrss * 1024; rss > r.PeakRSS {
		r.PeakRSS = rss
	}
}

func startError(path string, err error) string {
	switch {
	case errors.Is(err, syscall.ENOEXEC):
		return "cannot execute " + path + ": exec format error (not a Linux x86-64 executable, or a script without a #! line)"
	case errors.Is(err, syscall.EACCES):
		return "cannot execute " + path + ": permission denied"
	case errors.Is(err, syscall.ENOENT):
		return "cannot execute " + path + ": file or its interpreter not found"
	}
	return "cannot execute " + path + ": " + err.Error()
}

// tail keeps the last n bytes written and counts all of them.
type tail struct {
	buf   []byte
	n     int
	total int64
	full  bool
	pos   int
}

func (t *tail) drain(f *os.File, n int) {
	t.n = n
	if n > 0 {
		t.buf = make([]byte, n)
	}
	chunk := make([]byte, 32*1024)
	for {
		k, err := f.Read(chunk)
		if k > 0 {
			t.write(chunk[:k])
		}
		if err != nil {
			return
		}
	}
}

func (t *tail) write(p []byte) {
	t.total += int64(len(p))
	if t.n == 0 {
		return
	}
	if len(p) >= t.n {
		copy(t.buf, p[len(p)-t.n:])
		t.pos, t.full = 0, true
		return
	}
	k := copy(t.buf[t.pos:], p)
	if k < len(p) {
		copy(t.buf, p[k:])
		t.full = true
	}
	t.pos = (t.pos + len(p)) % t.n
	if t.pos == 0 && len(p) > 0 {
		t.full = true
	}
}

func (t *tail) result() sandbox.Tail {
	if t.n == 0 {
		return sandbox.Tail{Total: t.total}
	}
	var out []byte
	if t.full {
		out = append(append(out, t.buf[t.pos:]...), t.buf[:t.pos]...)
	} else {
		out = append(out, t.buf[:t.pos]...)
	}
	if len(out) == 0 {
		out = nil
	}
	return sandbox.Tail{Data: out, Total: t.total}
}
