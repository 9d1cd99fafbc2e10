package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arenabots/arena/sandbox"
)

// Session is a bot process that lives for a whole match and speaks lines. It
// is paused (SIGSTOP) between questions so that it cannot use the CPU during its
// opponent's turn.
type Session struct {
	spec    Spec
	pid     int
	in      *inbox
	lines   chan line
	eof     chan struct{} // closed when the bot's stdout is closed
	exited  chan struct{} // closed when the bot process has ended
	waited  chan struct{} // closed when every child has been reaped
	errTail tail
	errR    *os.File
	errDone chan struct{}
	start   time.Time

	// late counts questions that timed out and whose answers have not been
	// read yet: when they come, they are late answers, not early output.
	late int

	mu     sync.Mutex
	status syscall.WaitStatus
	cpu    time.Duration
	peak   int64
	reaped int
}

type line struct {
	text    string
	tooLong bool
}

// StartSession starts the bot with stdin and stdout as pipes to the session.
func StartSession(s Spec) (*Session, error) {
	if s.Reaping == ReapAll && os.Getpid() != 1 {
		return nil, errors.New("proc: ReapAll needs to run as PID 1")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	attr := &syscall.ProcAttr{
		Dir:   s.Dir,
		Env:   s.Env,
		Files: []uintptr{inR.Fd(), outW.Fd(), errW.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Credential: s.Cred},
	}
	startMu.Lock()
	start := time.Now()
	pid, err := syscall.ForkExec(s.Path, s.Args, attr)
	inR.Close()
	outW.Close()
	errW.Close()
	startMu.Unlock()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("%s", startError(s.Path, err))
	}
	for _, rl := range s.Rlimits {
		lim := unix.Rlimit{Cur: rl.Value, Max: rl.Value}
		unix.Prlimit(pid, rl.Resource, &lim, nil)
	}
	if s.Started != nil {
		s.Started(pid)
	}
	ss := &Session{spec: s, pid: pid, lines: make(chan line, 16), eof: make(chan struct{}), exited: make(chan struct{}),
		waited: make(chan struct{}), errDone: make(chan struct{}), errR: errR, start: start}
	ss.in = newInbox(inW)
	go ss.in.run()
	go ss.readLines(outR)
	go func() {
		defer close(ss.errDone)
		ss.errTail.drain(errR, s.Tail)
	}()
	go ss.wait()
	return ss, nil
}

// readLines splits stdout into lines of at most sandbox.MaxLine bytes.
func (ss *Session) readLines(r *os.File) {
	defer close(ss.eof)
	defer close(ss.lines)
	defer r.Close()
	br := bufio.NewReaderSize(r, 4096)
	var cur strings.Builder
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if cur.Len()+len(chunk) > sandbox.MaxLine {
			long = true
			if room := sandbox.MaxLine - cur.Len(); room > 0 {
				cur.Write(chunk[:room])
			}
		} else {
			cur.Write(chunk)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == nil || (err == io.EOF && cur.Len() > 0):
			text := strings.TrimRight(cur.String(), "\r\n")
			ss.lines <- line{text: text, tooLong: long}
			cur.Reset()
			long = false
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// wait reaps the bot and, as PID 1, every orphan, until none is left.
func (ss *Session) wait() {
	defer close(ss.waited)
	target := ss.pid
	if ss.spec.Reaping == ReapAll {
		target = -1
	}
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		wpid, err := syscall.Wait4(target, &ws, 0, &ru)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return
		}
		ss.mu.Lock()
		ss.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		ss.peak = max(ss.peak, ru.Maxrss*1024)
		if wpid == ss.pid {
			ss.status = ws
			close(ss.exited)
		} else {
			ss.reaped++
		}
		ss.mu.Unlock()
		if ss.spec.Reaping != ReapAll {
			return
		}
	}
}

func (ss *Session) signal(sig syscall.Signal) {
	if ss.spec.Reaping == ReapAll {
		syscall.Kill(-1, sig)
	} else {
		syscall.Kill(-ss.pid, sig)
	}
}

// Send queues one line for the bot's stdin and returns at once: a bot that
// is paused, or does not read its input, never makes the harness wait.
func (ss *Session) Send(text string) { ss.in.put(text + "\n") }

// Ask resumes the bot, writes the question and waits for one answer line.
func (ss *Session) Ask(text string, timeout time.Duration) sandbox.Exchange {
	var ex sandbox.Exchange
	ss.signal(syscall.SIGCONT)
	// The answers to questions that timed out come first; wait a little for
	// them (on nobody's clock, at most two moves' time, so that a bot late by
	// more than its whole limit is still told apart on a loaded host) so that
	// they are not taken for this answer.
	var lateLines []string
	for ss.late > 0 {
		select {
		case l, ok := <-ss.lines:
			if !ok {
				ss.late = 0
				continue
			}
			lateLines = append(lateLines, l.text)
			ss.late--
		case <-ss.exited:
			ss.late = 0
		case <-time.After(min(time.Second, 2*timeout)):
			ss.late = 0
		}
	}
	ex.Late = strings.Join(lateLines, "\n")
	// Anything else already waiting was written before the bot was asked.
	var early []string
drain:
	for {
		select {
		case l, ok := <-ss.lines:
			if !ok {
				break drain
			}
			early = append(early, l.text)
		default:
			break drain
		}
	}
	if len(early) > 0 {
		ex.Early = strings.Join(early, "\n")
		if len(ex.Early) > 1024 {
			ex.Early = ex.Early[:1024] + "..."
		}
	}
	paused := true
	defer func() {
		// A bot that timed out keeps running until its late answer is in;
		// every other bot waits, stopped, for its next question.
		if paused {
			ss.signal(syscall.SIGSTOP)
		}
	}()
	start := time.Now()
	if text != "" {
		ss.Send(text)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case l, ok := <-ss.lines:
		ex.Wall = time.Since(start)
		if !ok {
			ex.Exited = true
			return ex
		}
		ex.Line, ex.TooLong = l.text, l.tooLong
	case <-ss.exited:
		ex.Wall = time.Since(start)
		// The last words of a bot that exited still count.
		select {
		case l, ok := <-ss.lines:
			if ok {
				ex.Line, ex.TooLong = l.text, l.tooLong
				return ex
			}
		case <-time.After(50 * time.Millisecond):
		}
		ex.Exited = true
	case <-timer.C:
		ex.Wall = time.Since(start)
		ex.TimedOut = true
		ss.late++
		paused = false
	}
	return ex
}

// Stop kills the bot and everything it started and reports how it ended.
func (ss *Session) Stop() sandbox.Report {
	exitedBefore := false
	select {
	case <-ss.exited:
		exitedBefore = true
	case <-ss.eof:
		// Its output is closed: it is probably exiting; let it finish.
		select {
		case <-ss.exited:
			exitedBefore = true
		case <-time.After(200 * time.Millisecond):
		}
	default:
	}
	ss.signal(syscall.SIGKILL)
	ss.signal(syscall.SIGCONT)
	if ss.spec.Reaping == ReapAll {
		syscall.Kill(-1, syscall.SIGKILL)
	} else {
		syscall.Kill(ss.pid, syscall.SIGKILL)
	}
	select {
	case <-ss.waited:
	case <-time.After(5 * time.Second):
	}
	ss.in.close()
	select {
	case <-ss.errDone:
	case <-time.After(200 * time.Millisecond):
		ss.errR.Close() // an escaped child still holds stderr: stop reading
		<-ss.errDone
	}
	ss.errR.Close()
	go func() {
		for range ss.lines {
		}
	}()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	rep := sandbox.Report{Wall: time.Since(ss.start), CPU: ss.cpu, PeakMemory: ss.peak, Survivors: ss.reaped, Stderr: ss.errTail.result()}
	switch {
	case !exitedBefore:
		rep.ExitCode = -1 // still running at the end of the match: stopped by us
	case ss.status.Signaled():
		rep.ExitCode, rep.Signal = -1, int(ss.status.Signal())
	default:
		rep.ExitCode = ss.status.ExitStatus()
	}
	return rep
}

// maxQueued caps what may wait for a bot that does not read its input;
// beyond it lines are dropped (the bot has stopped listening).
const maxQueued = 16 << 20

// inbox holds the lines written to a bot's stdin. One goroutine writes them in
// order, so a full pipe blocks that goroutine, never the caller.
type inbox struct {
	w       *os.File
	mu      sync.Mutex
	queue   []byte
	closed  bool
	dropped int64
	wake    chan struct{}
	done    chan struct{}
}

func newInbox(w *os.File) *inbox {
	return &inbox{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// put queues text; it never blocks on the bot.
func (in *inbox) put(text string) {
	in.mu.Lock()
	switch {
	case in.closed:
	case len(in.queue)+len(text) > maxQueued:
		in.dropped += int64(len(text))
	default:
		in.queue = append(in.queue, text...)
	}
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// run writes what is queued until the inbox is closed or the bot's stdin is.
func (in *inbox) run() {
	defer close(in.done)
	defer in.w.Close()
	for range in.wake {
		for {
			in.mu.Lock()
			buf, closed := in.queue, in.closed
			in.queue = nil
			in.mu.Unlock()
			if len(buf) == 0 {
				if closed {
					return
				}
				break
			}
			if _, err := in.w.Write(buf); err != nil {
				// The bot closed its input or is gone: nothing more reaches it.
				in.mu.Lock()
				in.closed, in.queue = true, nil
				in.mu.Unlock()
				return
			}
		}
	}
}

// close stops the writer once the bot is gone; what is still queued is
// dropped.
func (in *inbox) close() {
	in.mu.Lock()
	in.closed, in.queue = true, nil
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
	in.w.Close() // unblocks a write to a pipe nobody reads
	<-in.done
}
