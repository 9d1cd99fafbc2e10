package docker

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

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/agent"
)

// grace is how long past the turn limit we wait for the agent before declaring it
// gone. The agent enforces the limit itself with an exact timer; this only
// catches an agent that died or hung.
func grace(limit time.Duration) time.Duration { return 5*time.Second + limit/2 }

// box is one running container.
type box struct {
	cli    *client.Client
	id     string
	exec   string
	limits sandbox.Limits
	log    *slog.Logger // carries the container ID

	att    types.HijackedResponse
	w      *bufio.Writer
	enc    *gob.Encoder
	msgs   chan agentMsg
	done   chan struct{}
	stderr *ring
	wg     sync.WaitGroup

	greeting agent.Hello
	// host is the container's cgroup on the engine's host, when the runtime
	// needs it watched from there (gVisor): its OOM kills are the bot's.
	host   *hostCgroup
	dead   error // set once the agent is gone; every later call fails with it
	closed bool
}

type agentMsg struct {
	hello *agent.Hello
	reply *agent.Reply
	err   error
}

func (bx *box) GameDir() string    { return agent.GameDir }
func (bx *box) Executable() string { return path.Join(agent.BotDir, bx.exec) }

// ID is the container's ID.
func (bx *box) ID() string { return bx.id }

// attach starts reading the agent's output: stdout carries gob messages, stderr
// its diagnostics, both multiplexed on one stream.
func (bx *box) attach(att types.HijackedResponse) {
	bx.att = att
	bx.w = bufio.NewWriter(att.Conn)
	bx.enc = gob.NewEncoder(bx.w)
	bx.msgs = make(chan agentMsg, 1)
	bx.done = make(chan struct{})
	bx.stderr = newRing(4096)
	pr, pw := io.Pipe()
	bx.wg.Add(2)
	go func() {
		defer bx.wg.Done()
		_, err := stdcopy.StdCopy(pw, bx.stderr, att.Reader)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	go func() {
		defer bx.wg.Done()
		defer close(bx.msgs)
		defer pr.Close()
		send := func(m agentMsg) bool {
			select {
			case bx.msgs <- m:
				return m.err == nil
			case <-bx.done:
				return false
			}
		}
		dec := gob.NewDecoder(pr)
		var h agent.Hello
		if err := dec.Decode(&h); err != nil {
			send(agentMsg{err: err})
			return
		}
		if !send(agentMsg{hello: &h}) {
			return
		}
		for {
			var r agent.Reply
			err := dec.Decode(&r)
			if err != nil {
				send(agentMsg{err: err})
				return
			}
			if !send(agentMsg{reply: &r}) {
				return
			}
		}
	}()
}

func (bx *box) awaitHello(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m, ok := <-bx.msgs:
		if !ok || m.err != nil {
			return bx.agentGone(ctx, "agent did not say hello")
		}
		if m.hello == nil {
			return errors.New("agent spoke out of turn")
		}
		bx.greeting = *m.hello
	case <-t.C:
		return fmt.Errorf("agent did not say hello within %v", timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	if bx.greeting.Version != agent.Version {
		return fmt.Errorf("agent speaks protocol %d, arena speaks %d; rebuild the image with `arena image build`", bx.greeting.Version, agent.Version)
	}
	if bx.greeting.Err != "" {
		return fmt.Errorf("agent cannot serve: %s", bx.greeting.Err)
	}
	return nil
}

// Hello is what the agent said when it started.
func (bx *box) Hello() agent.Hello { return bx.greeting }

func (bx *box) call(ctx context.Context, req agent.Request, wait time.Duration) (*agent.Reply, error) {
	if bx.closed {
		return nil, sandbox.ErrBoxClosed
	}
	if bx.dead != nil {
		return nil, bx.dead
	}
	if err := bx.enc.Encode(req); err != nil {
		return nil, bx.agentGone(ctx, "sending to agent: "+err.Error())
	}
	if err := bx.w.Flush(); err != nil {
		return nil, bx.agentGone(ctx, "sending to agent: "+err.Error())
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case m, ok := <-bx.msgs:
		if !ok || m.err != nil {
			return nil, bx.agentGone(ctx, "agent stopped answering")
		}
		if m.reply == nil {
			return nil, errors.New("agent spoke out of turn")
		}
		return m.reply, nil
	case <-t.C:
		// The agent enforces the turn limit itself; silence this long means it is
		// wedged or gone. Kill the container so nothing of the bot keeps running.
		bx.log.Warn("docker: the agent did not answer; killing the container", "op", req.Op, "waited", wait)
		bx.kill(ctx)
		return nil, bx.agentGone(ctx, fmt.Sprintf("agent did not answer within %v", wait))
	case <-ctx.Done():
		bx.log.Debug("docker: interrupted; killing the container", "op", req.Op, "err", ctx.Err())
		bx.kill(ctx)
		bx.dead = ctx.Err()
		return nil, ctx.Err()
	}
}

// kill stops the container at once; Close removes it later.
func (bx *box) kill(ctx context.Context) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := bx.cli.ContainerKill(kctx, bx.id, "KILL"); err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		bx.log.Warn("docker: container kill failed", "err", err)
	}
}

// errOOM marks an agent killed by the kernel for memory: the bot's doing.
var errOOM = errors.New("container was killed for exceeding its memory limit")

// agentGone finds out why the agent went away and marks the box dead.
func (bx *box) agentGone(ctx context.Context, what string) error {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// Give the engine a moment to record the exit.
	var ins container.InspectResponse
	var err error
	for i := 0; i < 20; i++ {
		ins, err = bx.cli.ContainerInspect(ictx, bx.id)
		if err != nil || ins.State == nil || !ins.State.Running {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	switch {
	case err != nil:
		bx.dead = fmt.Errorf("%s; container inspect failed: %w", what, err)
	case ins.State != nil && ins.State.OOMKilled:
		bx.dead = errOOM
	case ins.State != nil:
		bx.dead = fmt.Errorf("%s; container state %s, exit code %d, agent stderr: %q", what, ins.State.Status, ins.State.ExitCode, bx.stderr.String())
	default:
		bx.dead = errors.New(what)
	}
	bx.log.Debug("docker: the agent is gone", "err", bx.dead)
	return bx.dead
}

// Run implements sandbox.Box.
func (bx *box) Run(ctx context.Context, t sandbox.Turn) (sandbox.Report, error) {
	timeout := bx.limits.TurnTimeout
	if t.Timeout > 0 {
		timeout = t.Timeout
	}
	start := time.Now()
	kills := bx.hostOOMKills()
	rep, err := bx.call(ctx, agent.Request{Op: "turn", Turn: t, Exec: bx.exec, Timeout: timeout, Tail: bx.limits.OutputTail}, sandbox.WallCap(timeout)+grace(timeout))
	if err == nil {
		bx.hostSawOOM(&rep.Report, kills)
	}
	if errors.Is(err, errOOM) {
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
	if bx.log.Enabled(ctx, slog.LevelDebug) {
		bx.log.Debug("docker: turn", "wall", rep.Report.Wall, "took", time.Since(start), "exit", rep.Report.ExitCode)
	}
	return rep.Report, nil
}

// Reusable says whether the box may serve another game once reset: not
// under gVisor, whose kernel shows the agent neither the bot's POSIX message
// queues (it mounts no /dev/mqueue) nor its System V IPC objects (it has no
// /proc/sysvipc), so a reset could not prove them gone.
func (bx *box) Reusable() bool { return bx.host == nil }

// hostOOMKills is the host's count of OOM kills in the container's cgroup,
// or -1 when the box is not watched from the host.
func (bx *box) hostOOMKills() int64 {
	if bx.host == nil {
		return -1
	}
	return bx.host.OOMKills()
}

// hostSawOOM marks r out of memory when the bot was killed and the host
// counted an OOM kill since before (a hostOOMKills reading).
func (bx *box) hostSawOOM(r *sandbox.Report, before int64) {
	if before >= 0 && r.Signal == int(syscall.SIGKILL) && !r.TimedOut && bx.hostOOMKills() > before {
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
func (bx *box) Reset(ctx context.Context) error {
	start := time.Now()
	rep, err := bx.call(ctx, agent.Request{Op: "reset"}, resetWait)
	if err != nil {
		return sandbox.Faultf("reset", err)
	}
	if rep.Err != "" {
		bx.log.Debug("docker: reset refused by the agent", "err", rep.Err)
		return sandbox.Faultf("reset", errors.New("agent: "+rep.Err))
	}
	bx.log.Debug("docker: container reset", "killed", rep.Report.Survivors, "took", time.Since(start))
	return nil
}

// ReadFile implements sandbox.Box.
func (bx *box) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	rep, err := bx.call(ctx, agent.Request{Op: "read", Name: name, Max: max}, 30*time.Second)
	if err != nil {
		return nil, sandbox.Faultf("read "+name, err)
	}
	if rep.Err != "" {
		return nil, errors.New(rep.Err)
	}
	return rep.Data, nil
}

// Close implements sandbox.Box. It removes the container even when ctx is
// already cancelled: an interrupted match must not leave a bot running.
func (bx *box) Close(ctx context.Context) error {
	if bx.closed {
		return nil
	}
	bx.closed = true
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := bx.cli.ContainerRemove(rctx, bx.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if cerrdefs.IsNotFound(err) {
		err = nil
	}
	if err != nil {
		bx.log.Warn("docker: container remove failed; the next start sweeps it", "err", err)
	} else {
		bx.log.Debug("docker: container removed", "took", time.Since(start))
	}
	if bx.att.Conn != nil {
		close(bx.done)
		bx.att.Close()
		bx.wg.Wait()
	}
	if err != nil {
		return sandbox.Faultf("remove container "+bx.id[:12], err)
	}
	return nil
}

// ring keeps the last bytes written to it.
type ring struct {
	mu  sync.Mutex
	buf []byte
	n   int
}

func newRing(n int) *ring { return &ring{n: n} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.n {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.n:]...)
	}
	return len(p), nil
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf)
}

// StartSession implements sandbox.SessionBox.
func (bx *box) StartSession(ctx context.Context, args []string) (sandbox.Session, error) {
	rep, err := bx.call(ctx, agent.Request{Op: "start", Exec: bx.exec, Args: args, Tail: bx.limits.OutputTail}, 30*time.Second)
	if err != nil {
		return nil, sandbox.Faultf("start session", err)
	}
	if rep.Err != "" {
		return nil, sandbox.Faultf("start session", errors.New("agent: "+rep.Err))
	}
	if rep.Report.StartError != "" {
		return nil, &sandbox.StartFailure{Reason: rep.Report.StartError}
	}
	return &session{bx: bx, kills: bx.hostOOMKills()}, nil
}

// session is a bot process run by the agent. Lines sent between questions
// wait here and travel with the next question (or the stop), so a turn costs
// one round trip to the agent however many lines it sends; the bot is paused
// between its turns, so it could not have read them sooner.
type session struct {
	bx      *box
	pending []string
	kills   int64 // the host's OOM kill count when it started (hostOOMKills)
}

func (s *session) Send(_ context.Context, line string) error {
	s.pending = append(s.pending, line)
	return nil
}

func (s *session) Ask(ctx context.Context, line string, timeout time.Duration) (sandbox.Exchange, error) {
	lines := s.pending
	s.pending = nil
	rep, err := s.bx.call(ctx, agent.Request{Op: "ask", Lines: lines, Line: line, Timeout: timeout}, sandbox.WallCap(timeout)+grace(timeout))
	if errors.Is(err, errOOM) {
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
		if _, err := s.bx.call(ctx, agent.Request{Op: "send", Lines: lines}, 10*time.Second); err != nil {
			return sandbox.Report{}, sandbox.Faultf("send", err)
		}
	}
	rep, err := s.bx.call(ctx, agent.Request{Op: "stop"}, 30*time.Second)
	if errors.Is(err, errOOM) {
		return sandbox.Report{ExitCode: -1, Signal: 9, OOMKilled: true}, nil
	}
	if err != nil {
		return sandbox.Report{}, sandbox.Faultf("stop session", err)
	}
	s.bx.hostSawOOM(&rep.Report, s.kills)
	if rep.Err != "" {
		// The bot's report stands; the box could not be cleaned after it,
		// and refuses further use until a reset checks it.
		return rep.Report, sandbox.Faultf("stop session", errors.New("agent: "+rep.Err))
	}
	return rep.Report, nil
}
