// Package proc runs one turn of a bot from right next to it: the process with an
// exact deadline, every process it leaves behind killed and reaped, and the game
// directory prepared before and inspected after, without ever following a link the
// bot planted.
//
// It is shared by the agent that runs as PID 1 inside each bot container and by the
// local backend. It must never block on anything the bot controls: output is read
// into bounded tails, FIFOs are opened non-blocking, files are read with a cap.
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

	"golang.org/x/sys/unix"

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
	// Started runs right after the process started (e.g. to adjust its OOM score).
	Started func(pid int)
	// Rlimits are applied to the process right after it starts (local backend).
	Rlimits []Rlimit
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
}

// startMu serialises fork/exec with the file descriptors made for it, so a
// concurrent turn in the same process (local backend, tests) cannot inherit our
// pipe ends and keep them open.
var startMu sync.Mutex

// Run starts the process, waits for it under the deadline, and kills everything it
// left behind. The error is for failures of our own (pipes, wait); a bot that
// cannot be executed is a Result with StartError set.
func Run(ctx context.Context, s Spec) (Result, error) {
	if s.Reaping == ReapAll && os.Getpid() != 1 {
		return Result{}, errors.New("proc: ReapAll needs to run as PID 1")
	}
	var res Result
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return res, err
	}
	defer devnull.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return res, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return res, err
	}
	attr := &syscall.ProcAttr{
		Dir:   s.Dir,
		Env:   s.Env,
		Files: []uintptr{devnull.Fd(), outW.Fd(), errW.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Credential: s.Cred},
	}

	startMu.Lock()
	start := time.Now()
	pid, err := syscall.ForkExec(s.Path, s.Args, attr)
	outW.Close()
	errW.Close()
	startMu.Unlock()
	if err != nil {
		outR.Close()
		errR.Close()
		res.StartError = startError(s.Path, err)
		res.ExitCode = -1
		res.Wall = time.Since(start)
		return res, nil
	}

	var fired atomic.Bool
	kill := func() {
		if s.Reaping == ReapAll {
			syscall.Kill(-1, syscall.SIGKILL)
		} else {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	timer := time.AfterFunc(s.Timeout, func() {
		fired.Store(true)
		kill()
	})
	stopCtx := context.AfterFunc(ctx, kill)
	for _, rl := range s.Rlimits {
		lim := unix.Rlimit{Cur: rl.Value, Max: rl.Value}
		unix.Prlimit(pid, rl.Resource, &lim, nil)
	}
	if s.Started != nil {
		s.Started(pid)
	}

	var outTail, errTail tail
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); outTail.drain(outR, s.Tail) }()
	go func() { defer readers.Done(); errTail.drain(errR, s.Tail) }()

	var ws, status syscall.WaitStatus
	var ru syscall.Rusage
	waitPid := pid
	if s.Reaping == ReapAll {
		waitPid = -1
	}
	for {
		ru = syscall.Rusage{}
		wpid, err := syscall.Wait4(waitPid, &ws, 0, &ru)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			timer.Stop()
			stopCtx()
			kill()
			return res, fmt.Errorf("proc: wait: %w", err)
		}
		res.add(&ru)
		if wpid == pid {
			res.Wall = time.Since(start)
			status = ws
			break
		}
	}
	timer.Stop()
	stopCtx()

	// Nothing of the bot may outlive its turn.
	kill()
	if s.Reaping == ReapAll {
		for {
			ru = syscall.Rusage{}
			_, err := syscall.Wait4(-1, &ws, 0, &ru)
			if err == syscall.EINTR {
				continue
			}
			if err != nil { // ECHILD: nobody left
				break
			}
			res.add(&ru)
			res.Survivors++
			// A fork racing the first kill can leave a child behind it.
			syscall.Kill(-1, syscall.SIGKILL)
		}
	}

	// Every writer is dead in ReapAll mode so the pipes reach EOF at once. A
	// setsid escapee of the local backend may still hold them: stop waiting then.
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(200 * time.Millisecond):
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()

	res.Stdout = outTail.result()
	res.Stderr = errTail.result()
	res.TimedOut = fired.Load() && res.Wall >= s.Timeout
	switch {
	case status.Signaled():
		res.ExitCode = -1
		res.Signal = int(status.Signal())
	case res.TimedOut:
		res.ExitCode = -1
	default:
		res.ExitCode = status.ExitStatus()
	}
	return res, nil
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
