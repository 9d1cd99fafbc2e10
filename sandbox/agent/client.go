package agent

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"sync"
	"syscall"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/proc"
)

// The backends' side of the protocol: a Client speaks to one agent over its
// box's stdin and stdout, whatever carries them (Docker's attach stream, a
// Pod's), and is the box's sandbox.Box and sandbox.SessionBox but for what
// only the runtime can do (Host).

// Host is what a backend does for a Client about the box its agent runs in.
type Host interface {
	// Kill stops the box at once (its agent did not answer in time, or the
	// call was interrupted); Close removes it later.
	Kill(ctx context.Context)
	// Gone says why the agent went away, as the runtime saw it: ErrOOM when
	// the kernel killed it for the box's memory (the bot's doing), else an
	// error naming the box's state. what is what the client saw.
	Gone(ctx context.Context, what string) error
	// OOMKills is the host's count of out-of-memory kills in the box, or -1
	// when the box is not watched from the host (the agent counts them).
	OOMKills() int64
	// Close removes the box; the Client has stopped reading.
	Close(ctx context.Context) error
}

// ErrOOM marks an agent killed by the kernel for memory: the bot's doing.
var ErrOOM = errors.New("the box was killed for exceeding its memory limit")

// Grace is how long past a turn's limit a Client waits for the agent before
// declaring it gone. The agent enforces the limit itself with an exact
// timer; this only catches an agent that died or hung.
func Grace(limit time.Duration) time.Duration { return 5*time.Second + limit/2 }

// Client is one box's agent, reached through its stdin and stdout. It is
// not safe for concurrent use, as a sandbox.Box is not.
type Client struct {
	Host   Host
	Exec   string // the bot's executable, in the bot directory
	Limits sandbox.Limits
	Log    *slog.Logger
	// Name is the backend's, for log lines ("docker: ...").
	Name string

	w      *bufio.Writer
	enc    *gob.Encoder
	in     io.Closer
	msgs   chan clientMsg
	done   chan struct{}
	wg     sync.WaitGroup
	opened bool

	greeting Hello
	dead     error // set once the agent is gone; every later call fails with it
	closed   bool
}

type clientMsg struct {
	hello *Hello
	reply *Reply
	err   error
}

// Connect starts reading the agent's gob messages from out, and sends its
// requests to in (closed by Close).
func (c *Client) Connect(out io.Reader, in io.WriteCloser) {
	c.in = in
	c.w = bufio.NewWriter(in)
	c.enc = gob.NewEncoder(c.w)
	c.msgs = make(chan clientMsg, 1)
	c.done = make(chan struct{})
	c.opened = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(c.msgs)
		send := func(m clientMsg) bool {
			select {
			case c.msgs <- m:
				return m.err == nil
			case <-c.done:
				return false
			}
		}
		dec := gob.NewDecoder(out)
		var h Hello
		if err := dec.Decode(&h); err != nil {
			send(clientMsg{err: err})
			return
		}
		if !send(clientMsg{hello: &h}) {
			return
		}
		for {
			var r Reply
			if err := dec.Decode(&r); err != nil {
				send(clientMsg{err: err})
				return
			}
			if !send(clientMsg{reply: &r}) {
				return
			}
		}
	}()
}

func (c *Client) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

// AwaitHello waits for the agent's hello and checks it. ask says the
// agent waits to be asked for it (Config.HelloWhenAsked).
func (c *Client) AwaitHello(ctx context.Context, timeout time.Duration, ask bool) error {
	if ask {
		if err := c.enc.Encode(Request{Op: OpHello}); err != nil {
			return fmt.Errorf("ask the agent for its hello: %w", err)
		}
		if err := c.w.Flush(); err != nil {
			return fmt.Errorf("ask the agent for its hello: %w", err)
		}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m, ok := <-c.msgs:
		if !ok || m.err != nil {
			return c.gone(ctx, "agent did not say hello")
		}
		if m.hello == nil {
			return errors.New("agent spoke out of turn")
		}
		c.greeting = *m.hello
	case <-t.C:
		return fmt.Errorf("agent did not say hello within %v", timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.greeting.Version != Version {
		return fmt.Errorf("agent speaks protocol %d, arena speaks %d; rebuild the image with arena image build", c.greeting.Version, Version)
	}
	if c.greeting.Err != "" {
		return fmt.Errorf("agent cannot serve: %s", c.greeting.Err)
	}
	return nil
}

// Hello is what the agent said when it started.
func (c *Client) Hello() Hello { return c.greeting }

// Install sends the bot's program (ProgramTar), the limits of its
// processes and the user it runs as (0: BotUID): a box whose runtime could
// not put them there before it started. The program goes in parts of
// InstallPart bytes at most.
func (c *Client) Install(ctx context.Context, program []byte, rlimits []proc.Rlimit, botID int) error {
	for {
		n := min(len(program), InstallPart)
		req := Request{Op: OpInstall, Program: program[:n], More: n < len(program)}
		if !req.More {
			req.Rlimits, req.BotID = rlimits, botID
		}
		rep, err := c.call(ctx, req, 60*time.Second)
		if err != nil {
			return err
		}
		if rep.Err != "" {
			return errors.New("agent: " + rep.Err)
		}
		if !req.More {
			return nil
		}
		program = program[n:]
	}
}

func (c *Client) gone(ctx context.Context, what string) error {
	c.dead = c.Host.Gone(ctx, what)
	c.log().Debug(c.Name+": the agent is gone", "err", c.dead)
	return c.dead
}

func (c *Client) call(ctx context.Context, req Request, wait time.Duration) (*Reply, error) {
	if c.closed {
		return nil, sandbox.ErrBoxClosed
	}
	if c.dead != nil {
		return nil, c.dead
	}
	if err := c.enc.Encode(req); err != nil {
		return nil, c.gone(ctx, "sending to agent: "+err.Error())
	}
	if err := c.w.Flush(); err != nil {
		return nil, c.gone(ctx, "sending to agent: "+err.Error())
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case m, ok := <-c.msgs:
		if !ok || m.err != nil {
			return nil, c.gone(ctx, "agent stopped answering")
		}
		if m.reply == nil {
			return nil, errors.New("agent spoke out of turn")
		}
		return m.reply, nil
	case <-t.C:
		// The agent enforces the turn limit itself; silence this long means it is
		// wedged or gone. Kill the box so nothing of the bot keeps running.
		c.log().Warn(c.Name+": the agent did not answer; killing the box", "op", req.Op, "waited", wait)
		c.Host.Kill(ctx)
		return nil, c.gone(ctx, fmt.Sprintf("agent did not answer within %v", wait))
	case <-ctx.Done():
		c.log().Debug(c.Name+": interrupted; killing the box", "op", req.Op, "err", ctx.Err())
		c.Host.Kill(ctx)
		c.dead = ctx.Err()
		return nil, ctx.Err()
	}
}

// GameDir implements sandbox.Box.
func (c *Client) GameDir() string { return GameDir }

// Executable implements sandbox.Box.
func (c *Client) Executable() string { return path.Join(BotDir, c.Exec) }

// Run implements sandbox.Box.
func (c *Client) Run(ctx context.Context, t sandbox.Turn) (sandbox.Report, error) {
	timeout := c.Limits.TurnTimeout
	if t.Timeout > 0 {
		timeout = t.Timeout
	}
	start := time.Now()
	kills := c.Host.OOMKills()
	rep, err := c.call(ctx, Request{Op: OpTurn, Turn: t, Exec: c.Exec, Timeout: timeout, Tail: c.Limits.OutputTail}, sandbox.WallCap(timeout)+Grace(timeout))
	if err == nil {
		c.sawOOM(&rep.Report, kills)
	}
	if errors.Is(err, ErrOOM) {
		// The kernel took the agent with the bot. That is still the bot's fault.
		return sandbox.Report{ExitCode: -1, Signal: 9, OOMKilled: true, Wall: time.Since(start)}, nil
	}
	if err != nil {
		return sandbox.Report{}, sandbox.Faultf("turn", err)
	}
	if rep.Err != "" {
		return rep.Report, sandbox.Faultf("turn", errors.New("agent: "+rep.Err))
	}
	if r := rep.Report; r.HostStalled {
		return r, sandbox.Faultf("turn", sandbox.HostStalled(r.HostWait, r.Wall, timeout))
	}
	if log := c.log(); log.Enabled(ctx, slog.LevelDebug) {
		log.Debug(c.Name+": turn", "wall", rep.Report.Wall, "took", time.Since(start), "exit", rep.Report.ExitCode)
	}
	return rep.Report, nil
}

// sawOOM marks r out of memory when the bot was killed and the host
// counted an out-of-memory kill since before (an OOMKills reading).
func (c *Client) sawOOM(r *sandbox.Report, before int64) {
	if before >= 0 && r.Signal == int(syscall.SIGKILL) && !r.TimedOut && c.Host.OOMKills() > before {
		r.OOMKilled = true
	}
}

// resetWait bounds a reset: killing and reaping at most a pids limit's worth of
// processes and emptying a few small tmpfs take milliseconds.
const resetWait = 20 * time.Second

// Reset implements sandbox.Box: the agent stops any session, kills and reaps
// every process but itself, empties /game, /tmp, /dev/shm and /dev/mqueue,
// removes the System V IPC objects, and checks that the directories list empty,
// no IPC object is left and /proc shows no other process.
func (c *Client) Reset(ctx context.Context) error {
	start := time.Now()
	rep, err := c.call(ctx, Request{Op: OpReset}, resetWait)
	if err != nil {
		return sandbox.Faultf("reset", err)
	}
	if rep.Err != "" {
		c.log().Debug(c.Name+": reset refused by the agent", "err", rep.Err)
		return sandbox.Faultf("reset", errors.New("agent: "+rep.Err))
	}
	c.log().Debug(c.Name+": box reset", "killed", rep.Report.Survivors, "took", time.Since(start))
	return nil
}

// ReadFile implements sandbox.Box.
func (c *Client) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	rep, err := c.call(ctx, Request{Op: OpRead, Name: name, Max: max}, 30*time.Second)
	if err != nil {
		return nil, sandbox.Faultf("read "+name, err)
	}
	if rep.Err != "" {
		return nil, errors.New(rep.Err)
	}
	return rep.Data, nil
}

// Close implements sandbox.Box: the host removes the box, even when ctx is
// already cancelled (an interrupted match must not leave a bot running),
// then the client stops reading.
func (c *Client) Close(ctx context.Context) error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.Host.Close(ctx)
	if c.opened {
		close(c.done)
		c.in.Close()
		c.wg.Wait()
	}
	if err != nil {
		return sandbox.Faultf("close box", err)
	}
	return nil
}

// StartSession implements sandbox.SessionBox.
func (c *Client) StartSession(ctx context.Context, args []string) (sandbox.Session, error) {
	rep, err := c.call(ctx, Request{Op: OpStart, Exec: c.Exec, Args: args, Tail: c.Limits.OutputTail}, 30*time.Second)
	if err != nil {
		return nil, sandbox.Faultf("start session", err)
	}
	if rep.Err != "" {
		return nil, sandbox.Faultf("start session", errors.New("agent: "+rep.Err))
	}
	if rep.Report.StartError != "" {
		return nil, &sandbox.StartFailure{Reason: rep.Report.StartError}
	}
	return &session{c: c, kills: c.Host.OOMKills()}, nil
}

// session is a bot process run by the agent. Lines sent between questions
// wait here and travel with the next question (or the stop), so a turn costs
// one round trip to the agent however many lines it sends; the bot is paused
// between its turns, so it could not have read them sooner.
type session struct {
	c       *Client
	pending []string
	kills   int64 // the host's OOM kill count when it started (Host.OOMKills)
}

func (s *session) Send(_ context.Context, line string) error {
	s.pending = append(s.pending, line)
	return nil
}

func (s *session) Ask(ctx context.Context, line string, timeout time.Duration) (sandbox.Exchange, error) {
	lines := s.pending
	s.pending = nil
	rep, err := s.c.call(ctx, Request{Op: OpAsk, Lines: lines, Line: line, Timeout: timeout}, sandbox.WallCap(timeout)+Grace(timeout))
	if errors.Is(err, ErrOOM) {
		return sandbox.Exchange{Exited: true}, nil
	}
	if err != nil {
		return sandbox.Exchange{}, sandbox.Faultf("ask", err)
	}
	if rep.Err != "" {
		return sandbox.Exchange{}, sandbox.Faultf("ask", errors.New("agent: "+rep.Err))
	}
	if ex := rep.Exchange; ex.HostStalled {
		return ex, sandbox.Faultf("ask", sandbox.HostStalled(ex.HostWait, ex.Wall, timeout))
	}
	return rep.Exchange, nil
}

func (s *session) Stop(ctx context.Context) (sandbox.Report, error) {
	if len(s.pending) > 0 {
		// The closing lines reach the bot before it is stopped.
		lines := s.pending
		s.pending = nil
		if _, err := s.c.call(ctx, Request{Op: OpSend, Lines: lines}, 10*time.Second); err != nil {
			return sandbox.Report{}, sandbox.Faultf("send", err)
		}
	}
	rep, err := s.c.call(ctx, Request{Op: OpStop}, 30*time.Second)
	if errors.Is(err, ErrOOM) {
		return sandbox.Report{ExitCode: -1, Signal: 9, OOMKilled: true}, nil
	}
	if err != nil {
		return sandbox.Report{}, sandbox.Faultf("stop session", err)
	}
	s.c.sawOOM(&rep.Report, s.kills)
	if rep.Err != "" {
		// The bot's report stands; the box could not be cleaned after it,
		// and refuses further use until a reset checks it.
		return rep.Report, sandbox.Faultf("stop session", errors.New("agent: "+rep.Err))
	}
	return rep.Report, nil
}
