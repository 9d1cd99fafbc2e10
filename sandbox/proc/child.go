package proc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/arenabots/arena/sandbox"
)

// startMu serialises fork/exec with the file descriptors made for it, so a
// concurrent turn in the same process (local backend, tests) cannot inherit our
// pipe ends and keep them open.
var startMu sync.Mutex

// tailGrace is how long the output pipes are read after the bot's processes
// were killed: a setsid escapee of the local backend may still hold them.
const tailGrace = 200 * time.Millisecond

// ExecError is a bot that could not be executed at all (exec format error,
// permission denied, no such file or interpreter): the bot's fault, not the
// sandbox's. StartSession returns it; Run reports it as Result.StartError.
type ExecError struct {
	Path string
	Err  error
	wall time.Duration // from just before the fork to its failure
}

func (e *ExecError) Error() string { return startError(e.Path, e.Err) }
func (e *ExecError) Unwrap() error { return e.Err }

// child is one bot process started by startChild, in a process group of its
// own, its limits set. It is what Run and Session share: the fork, the pipes,
// the limits, the signals and the reaping.
type child struct {
	pid     int
	reaping Reaping
	start   time.Time // just before the fork
	forked  time.Time // when the fork and exec returned
	stdin   *os.File  // write end of the bot's stdin; nil when it reads /dev/null
	stdout  *os.File  // read end of the bot's stdout
	stderr  *os.File  // read end of the bot's stderr
}

// startChild starts s in a process group of its own with stdout and stderr
// piped to us and stdin piped too when withStdin (else /dev/null), then sets
// s.Rlimits and runs s.Started. A bot that cannot be executed is an
// *ExecError. When a limit cannot be set or Started fails, the bot is killed
// and reaped before startChild returns the error: a bot never runs on without
// its limits.
//
// A bot with limits to set starts stopped: it is traced from the fork, so the
// kernel stops it at its first instruction after the exec, and it is let go
// only once its limits are set. Setting them after a plain start would let the
// bot's first instructions run without them.
func startChild(s Spec, withStdin bool) (*child, error) {
	if s.Reaping == ReapAll && os.Getpid() != 1 {
		return nil, errors.New("proc: ReapAll needs to run as PID 1")
	}
	p, err := openPipes(withStdin)
	if err != nil {
		return nil, err
	}
	stopped := len(s.Rlimits) > 0
	if stopped {
		// Only the thread that forked a traced child may let it go.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	c, err := p.forkExec(s, stopped)
	if err != nil {
		return nil, err
	}
	if stopped {
		if err := c.awaitExecStop(); err != nil {
			return nil, err
		}
	}
	if err := c.setUp(s); err != nil {
		return nil, c.abort(err)
	}
	if stopped {
		if err := syscall.PtraceDetach(c.pid); err != nil {
			return nil, c.abort(fmt.Errorf("proc: let the bot (pid %d) run once its limits were set: %w", c.pid, err))
		}
	}
	return c, nil
}

// awaitExecStop waits until the traced bot stops after its exec and makes sure
// it dies with us while it is traced. On an error the bot is gone and our
// ends of its pipes are closed.
func (c *child) awaitExecStop() error {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(c.pid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return c.abort(fmt.Errorf("proc: wait for the bot (pid %d) to stop after its exec: %w", c.pid, err))
		}
		if !ws.Stopped() { // killed by someone else, and reaped
			closeFiles(c.stdin, c.stdout, c.stderr)
			return fmt.Errorf("proc: the bot (pid %d) ended before its limits were set (status %#x)", c.pid, uint32(ws))
		}
		if ws.StopSignal() != syscall.SIGTRAP {
			// Another stop before the exec's: keep it from the bot, wait on.
			if err := syscall.PtraceCont(c.pid, 0); err != nil {
				return c.abort(fmt.Errorf("proc: resume the bot (pid %d) to its exec: %w", c.pid, err))
			}
			continue
		}
		if err := syscall.PtraceSetOptions(c.pid, unix.PTRACE_O_EXITKILL); err != nil {
			return c.abort(fmt.Errorf("proc: tie the stopped bot (pid %d) to us: %w", c.pid, err))
		}
		return nil
	}
}

// pipes are both ends of the bot's standard files until the fork: the child's
// ends are closed in the parent once the bot has them.
type pipes struct {
	childIn, parentIn   *os.File // childIn is /dev/null when parentIn is nil
	parentOut, childOut *os.File
	parentErr, childErr *os.File
}

// openPipes makes the bot's stdout and stderr pipes, and its stdin: a pipe
// when withStdin, else /dev/null.
func openPipes(withStdin bool) (*pipes, error) {
	p := &pipes{}
	var err error
	if withStdin {
		p.childIn, p.parentIn, err = os.Pipe()
	} else {
		p.childIn, err = os.Open(os.DevNull)
	}
	if err == nil {
		p.parentOut, p.childOut, err = os.Pipe()
	}
	if err == nil {
		p.parentErr, p.childErr, err = os.Pipe()
	}
	if err != nil {
		closeFiles(p.childIn, p.childOut, p.childErr, p.parentIn, p.parentOut, p.parentErr)
		return nil, fmt.Errorf("proc: make the bot's pipes: %w", err)
	}
	return p, nil
}

// forkExec starts the bot and closes the child's ends of the pipes in the
// parent; on failure it closes ours too.
// When stopped, the bot is traced and stops after its exec (see startChild).
func (p *pipes) forkExec(s Spec, stopped bool) (*child, error) {
	attr := &syscall.ProcAttr{
		Dir:   s.Dir,
		Env:   s.Env,
		Files: []uintptr{p.childIn.Fd(), p.childOut.Fd(), p.childErr.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Credential: s.Cred, Ptrace: stopped},
	}
	startMu.Lock()
	start := time.Now()
	pid, err := syscall.ForkExec(s.Path, s.Args, attr)
	closeFiles(p.childIn, p.childOut, p.childErr)
	startMu.Unlock()
	if err != nil {
		closeFiles(p.parentIn, p.parentOut, p.parentErr)
		if !executableFault(err) {
			return nil, fmt.Errorf("proc: start %s: %w", s.Path, err)
		}
		return nil, &ExecError{Path: s.Path, Err: err, wall: time.Since(start)}
	}
	return &child{pid: pid, reaping: s.Reaping, start: start, forked: time.Now(), stdin: p.parentIn, stdout: p.parentOut, stderr: p.parentErr}, nil
}

// executableFault says whether a fork/exec failure is the executable's: not a
// program for this machine, not executable, or missing with its interpreter.
// Anything else (no process or memory to fork with, a credential the child could
// not take) is ours.
func executableFault(err error) bool {
	for _, e := range []syscall.Errno{syscall.ENOEXEC, syscall.EACCES, syscall.ENOENT, syscall.ENOTDIR,
		syscall.ELOOP, syscall.EISDIR, syscall.ETXTBSY, syscall.ELIBBAD} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// closeFiles closes the files that are set. Only pipe ends and /dev/null are
// closed here: closing them cannot lose data, so their errors say nothing.
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// setUp sets the bot's limits, then runs the Started hook.
func (c *child) setUp(s Spec) error {
	for _, rl := range s.Rlimits {
		if err := setRlimit(c.pid, rl); err != nil {
			return err
		}
	}
	if s.Started != nil {
		if err := s.Started(c.pid); err != nil {
			return fmt.Errorf("proc: set up the bot (pid %d): %w", c.pid, err)
		}
	}
	return nil
}

// setRlimit sets both the soft and the hard limit of one resource of pid.
func setRlimit(pid int, rl Rlimit) error {
	lim := unix.Rlimit{Cur: rl.Value, Max: rl.Value}
	err := unix.Prlimit(pid, rl.Resource, &lim, nil)
	if err == nil {
		return nil
	}
	why := ""
	if errors.Is(err, unix.EPERM) {
		why = " (raising a hard limit needs CAP_SYS_RESOURCE, and RLIMIT_NOFILE can never exceed fs.nr_open)"
	}
	return fmt.Errorf("proc: set %s of the bot (pid %d) to %d: %w%s", rlimitName(rl.Resource), pid, rl.Value, err, why)
}

// rlimitName is the name of a resource as in getrlimit(2).
func rlimitName(resource int) string {
	names := map[int]string{
		unix.RLIMIT_AS: "RLIMIT_AS", unix.RLIMIT_CORE: "RLIMIT_CORE", unix.RLIMIT_CPU: "RLIMIT_CPU",
		unix.RLIMIT_DATA: "RLIMIT_DATA", unix.RLIMIT_FSIZE: "RLIMIT_FSIZE", unix.RLIMIT_MEMLOCK: "RLIMIT_MEMLOCK",
		unix.RLIMIT_NOFILE: "RLIMIT_NOFILE", unix.RLIMIT_NPROC: "RLIMIT_NPROC", unix.RLIMIT_RSS: "RLIMIT_RSS",
		unix.RLIMIT_STACK: "RLIMIT_STACK",
	}
	if n, ok := names[resource]; ok {
		return n
	}
	return fmt.Sprintf("resource %d", resource)
}

// abort kills and reaps a bot that must not run (its setup failed), closes our
// ends of its pipes and returns cause with whatever went wrong on the way.
func (c *child) abort(cause error) error {
	closeFiles(c.stdin, c.stdout, c.stderr)
	if err := c.kill(); err != nil {
		// Waiting for a bot we could not kill could block forever.
		return errors.Join(cause, fmt.Errorf("proc: kill the bot (pid %d) whose setup failed, so it may still run: %w", c.pid, err))
	}
	var res Result
	if _, err := c.waitBot(&res, nil); err != nil {
		return errors.Join(cause, fmt.Errorf("proc: reap the bot (pid %d) whose setup failed: %w", c.pid, err))
	}
	if err := c.reapRest(&res); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// signalAll sends sig to every process of the bot: every process but us
// (ReapAll), or the bot's process group (ReapGroup). Nobody left to signal is
// no error.
func (c *child) signalAll(sig syscall.Signal) error {
	target := -c.pid
	if c.reaping == ReapAll {
		target = -1
	}
	return signal(target, sig)
}

// kill sends SIGKILL to every process of the bot and, in ReapGroup mode, to the
// bot itself in case it left its group. Use it only while the bot is not yet
// reaped: afterwards its pid may belong to another process.
func (c *child) kill() error {
	err := c.signalAll(syscall.SIGKILL)
	if c.reaping == ReapGroup {
		err = errors.Join(err, signal(c.pid, syscall.SIGKILL))
	}
	return err
}

// signal is kill(2) for which no such process is success.
func signal(pid int, sig syscall.Signal) error {
	err := syscall.Kill(pid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("send %v to %d: %w", sig, pid, err)
}

// waitNext reaps the next process of the bot to end: the bot itself
// (ReapGroup), or any process (ReapAll, where every orphan is ours). It
// retries when interrupted.
func (c *child) waitNext() (int, syscall.WaitStatus, syscall.Rusage, error) {
	target := c.pid
	if c.reaping == ReapAll {
		target = -1
	}
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		wpid, err := syscall.Wait4(target, &ws, 0, &ru)
		if err != syscall.EINTR {
			return wpid, ws, ru, err
		}
	}
}

// waitBot waits until the bot itself has ended and returns its status. The
// usage of every process reaped meanwhile (orphans too, in ReapAll mode) is
// added to res, and res.Wall is set. atExit, when set, runs once the bot has
// ended but before it is reaped, while the kernel still shows its figures.
func (c *child) waitBot(res *Result, atExit func()) (syscall.WaitStatus, error) {
	for {
		if atExit != nil {
			pid, err := c.peekNext()
			if err != nil {
				return 0, err
			}
			if pid == c.pid {
				atExit()
				atExit = nil
			}
		}
		wpid, ws, ru, err := c.waitNext()
		if err != nil {
			return 0, err
		}
		res.add(&ru)
		if wpid == c.pid {
			res.Wall = time.Since(c.start)
			return ws, nil
		}
	}
}

// peekNext waits until a process of the bot has ended, as waitNext would
// reap it, and returns its pid without reaping it.
func (c *child) peekNext() (int, error) {
	idType, id := unix.P_PID, c.pid
	if c.reaping == ReapAll {
		idType, id = unix.P_ALL, 0
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(idType, id, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("proc: wait: %w", err)
		}
		return int(siginfoPid(&info)), nil
	}
}

// reapRest kills whatever the reaped bot left behind and, in ReapAll mode,
// reaps it all, counting it in res.Survivors. In ReapGroup mode the killed
// processes are not our children: they are reaped by whoever adopts them.
func (c *child) reapRest(res *Result) error {
	err := c.signalAll(syscall.SIGKILL)
	if c.reaping != ReapAll {
		return wrapKill(err)
	}
	for {
		_, _, ru, werr := c.waitNext()
		if errors.Is(werr, syscall.ECHILD) { // nobody left
			return wrapKill(err)
		}
		if werr != nil {
			return errors.Join(wrapKill(err), fmt.Errorf("proc: reap what the bot left: %w", werr))
		}
		res.add(&ru)
		res.Survivors++
		// A fork racing the first kill can leave a child behind it.
		err = errors.Join(err, c.signalAll(syscall.SIGKILL))
	}
}

// wrapKill says that err, if any, came from killing the bot's processes.
func wrapKill(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("proc: kill the bot's processes: %w", err)
}

// tailReader drains one output pipe of the bot into a bounded tail, in the
// background.
type tailReader struct {
	f    *os.File
	t    tail
	done chan struct{}
}

// readTail starts draining f, keeping its last n bytes.
func readTail(f *os.File, n int) *tailReader {
	r := &tailReader{f: f, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.t.drain(f, n)
	}()
	return r
}

// finish waits until deadline for the pipe's end, when every writer is gone;
// a writer that escaped the kill and still holds the pipe is not waited for
// any longer. It closes the pipe and returns the tail.
func (r *tailReader) finish(deadline time.Time) sandbox.Tail {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-r.done:
	case <-timer.C:
	}
	r.f.Close() // a read end: unblocks the reader, loses nothing
	<-r.done
	return r.t.result()
}

// siginfoPid is the pid in a SIGCHLD siginfo_t: the first field of its union,
// after three ints and the padding that aligns the union on 64-bit Linux.
func siginfoPid(info *unix.Siginfo) int32 {
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), 16))
}
