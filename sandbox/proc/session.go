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

	"github.com/arenabots/arena/sandbox"
)

// Session is a bot process that lives for a whole match and speaks lines. It
// is paused (SIGSTOP) between questions so that it cannot use the CPU during its
// opponent's turn.
type Session struct {
	c      *child
	in     *inbox
	lines  chan line
	eof    chan struct{} // closed when the bot's stdout is closed
	exited chan struct{} // closed when the bot process has ended
	waited chan struct{} // closed when every child has been reaped
	stderr *tailReader
	meter  *Meter // the host's wait is measured per question (Spec.Meter)

	// late counts questions that timed out and whose answers have not been
	// read yet: when they come, they are late answers, not early output.
	late int

	mu      sync.Mutex
	status  syscall.WaitStatus
	cpu     time.Duration
	peak    int64
	reaped  int
	waitErr error // a wait that failed for another reason than nobody left
}

type line struct {
	text    string
	tooLong bool
}

// reapWait is how long Stop waits for the bot's processes to be reaped once
// they were sent SIGKILL.
const reapWait = 5 * time.Second

// StartSession starts the bot with stdin and stdout as pipes to the session.
// A bot that cannot be executed is an *ExecError; any other error is ours.
func StartSession(s Spec) (*Session, error) {
	c, err := startChild(s, true)
	if err != nil {
		return nil, err
	}
	ss := &Session{c: c, lines: make(chan line, 16), eof: make(chan struct{}), exited: make(chan struct{}),
		waited: make(chan struct{}), meter: s.meter(c.pid)}
	ss.in = newInbox(c.stdin)
	go ss.in.run()
	go ss.readLines(c.stdout)
	ss.stderr = readTail(c.stderr, s.Tail)
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
	for {
		wpid, ws, ru, err := ss.c.waitNext()
		if err != nil {
			if !errors.Is(err, syscall.ECHILD) {
				ss.mu.Lock()
				ss.waitErr = fmt.Errorf("proc: reap the bot's processes: %w", err)
				ss.mu.Unlock()
			}
			return
		}
		ss.mu.Lock()
		ss.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		ss.peak = max(ss.peak, ru.Maxrss*1024)
		if wpid == ss.c.pid {
			ss.status = ws
			close(ss.exited)
		} else {
			ss.reaped++
		}
		ss.mu.Unlock()
		if ss.c.reaping != ReapAll {
			return
		}
	}
}

// Send queues one line for the bot's stdin and returns at once: a bot that
// is paused, or does not read its input, never makes the harness wait.
func (ss *Session) Send(text string) { ss.in.put(text + "\n") }

// Ask resumes the bot, writes the question and waits for one answer line. The
// error is ours: the bot could not be resumed or paused again.
func (ss *Session) Ask(text string, timeout time.Duration) (ex sandbox.Exchange, err error) {
	if err := ss.c.signalAll(syscall.SIGCONT); err != nil {
		return ex, fmt.Errorf("proc: resume the bot: %w", err)
	}
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
		if !paused {
			return
		}
		if serr := ss.c.signalAll(syscall.SIGSTOP); serr != nil && err == nil {
			err = fmt.Errorf("proc: pause the bot: %w", serr)
		}
	}()
	start := time.Now()
	clock := startClock(ss.meter, false)
	defer func() { ex.HostWait, ex.HostWaitError = clock.wait, clock.errString() }()
	if text != "" {
		ss.Send(text)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-ss.lines:
			ex.Wall = time.Since(start)
			clock.sample()
			if !ok {
				ex.Exited = true
				return ex, nil
			}
			ex.Line, ex.TooLong = l.text, l.tooLong
			return ex, nil
		case <-ss.exited:
			ex.Wall = time.Since(start)
			// The last words of a bot that exited still count.
			select {
			case l, ok := <-ss.lines:
				if ok {
					ex.Line, ex.TooLong = l.text, l.tooLong
					return ex, nil
				}
			case <-time.After(50 * time.Millisecond):
			}
			ex.Exited = true
			return ex, nil
		case <-timer.C:
			elapsed := time.Since(start)
			again, stalled := clock.extend(elapsed, timeout)
			if again > 0 {
				// The host kept the bot waiting: its deadline moves on.
				timer.Reset(again)
				continue
			}
			ex.HostStalled, ex.TimedOut = stalled, !stalled
			ex.Wall = elapsed
			ss.late++
			paused = false
			return ex, nil
		}
	}
}

// Stop kills the bot and everything it started and reports how it ended. The
// error is ours: a kill that failed, or processes not reaped in time; the
// report is filled in all the same.
func (ss *Session) Stop() (sandbox.Report, error) {
	exitedBefore := ss.exitedBy(200 * time.Millisecond)
	err := ss.killAll()
	select {
	case <-ss.waited:
	case <-time.After(reapWait):
		err = errors.Join(err, fmt.Errorf("proc: the bot's processes were not all reaped within %v of SIGKILL", reapWait))
	}
	ss.in.close()
	stderr := ss.stderr.finish(time.Now().Add(tailGrace))
	go func() {
		for range ss.lines {
		}
	}()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	rep := sandbox.Report{Wall: time.Since(ss.c.start), CPU: ss.cpu, PeakMemory: ss.peak, Survivors: ss.reaped, Stderr: stderr}
	switch {
	case !exitedBefore:
		rep.ExitCode = -1 // still running at the end of the match: stopped by us
	case ss.status.Signaled():
		rep.ExitCode, rep.Signal = -1, int(ss.status.Signal())
	default:
		rep.ExitCode = ss.status.ExitStatus()
	}
	return rep, errors.Join(err, ss.waitErr)
}

// exitedBy says whether the bot has ended by itself: at once, or within grace
// when its output is already closed (it is probably exiting; let it finish).
func (ss *Session) exitedBy(grace time.Duration) bool {
	select {
	case <-ss.exited:
		return true
	case <-ss.eof:
		select {
		case <-ss.exited:
			return true
		case <-time.After(grace):
		}
	default:
	}
	return false
}

// killAll sends SIGKILL to every process of the bot, and SIGCONT so that a
// paused one is not left waiting, then SIGKILL again to whatever a fork racing
// the first one left, and to the bot itself if it left its group.
func (ss *Session) killAll() error {
	err := errors.Join(ss.c.signalAll(syscall.SIGKILL), ss.c.signalAll(syscall.SIGCONT))
	select {
	case <-ss.exited:
		// Reaped: its pid may be another process's by now.
		err = errors.Join(err, ss.c.signalAll(syscall.SIGKILL))
	default:
		err = errors.Join(err, ss.c.kill())
	}
	return wrapKill(err)
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
