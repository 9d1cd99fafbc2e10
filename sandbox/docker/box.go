package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/arenabots/arena/sandbox/agent"
)

// box is one running container: its agent's client, and the container as
// the client's agent.Host.
type box struct {
	*agent.Client
	c *engineBox
}

// engineBox is the container behind a box, what only the engine can do
// about it (agent.Host).
type engineBox struct {
	cli    *client.Client
	id     string
	log    *slog.Logger // carries the container ID
	stderr *agent.Stderr
	// host is the container's cgroup on the engine's host, when the runtime
	// needs it watched from there (gVisor): its OOM kills are the bot's.
	host *hostCgroup
}

// ID is the container's ID.
func (bx *box) ID() string { return bx.c.id }

// attach starts the agent's client on the attach stream: stdout carries gob
// messages, stderr its diagnostics, both multiplexed on one stream.
func (bx *box) attach(att types.HijackedResponse) {
	pr, pw := io.Pipe()
	in := &attached{att: att}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		_, err := stdcopy.StdCopy(pw, bx.c.stderr, att.Reader)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	bx.Connect(pr, in)
}

// attached is the attach stream as the agent's stdin: closing it ends the
// stream and waits for its reader.
type attached struct {
	att types.HijackedResponse
	wg  sync.WaitGroup
}

func (a *attached) Write(p []byte) (int, error) { return a.att.Conn.Write(p) }

func (a *attached) Close() error {
	a.att.Close()
	a.wg.Wait()
	return nil
}

// Kill implements agent.Host: it stops the container at once; Close
// removes it later.
func (c *engineBox) Kill(ctx context.Context) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := c.cli.ContainerKill(kctx, c.id, "KILL"); err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		c.log.Warn("docker: container kill failed", "err", err)
	}
}

// Gone implements agent.Host: the engine's record of the container says
// why the agent went away.
func (c *engineBox) Gone(ctx context.Context, what string) error {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// Give the engine a moment to record the exit.
	var ins container.InspectResponse
	var err error
	for i := 0; i < 20; i++ {
		ins, err = c.cli.ContainerInspect(ictx, c.id)
		if err != nil || ins.State == nil || !ins.State.Running {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	switch {
	case err != nil:
		return fmt.Errorf("%s; container inspect failed: %w", what, err)
	case ins.State != nil && ins.State.OOMKilled:
		return agent.ErrOOM
	case ins.State != nil:
		return fmt.Errorf("%s; container state %s, exit code %d, agent stderr: %q", what, ins.State.Status, ins.State.ExitCode, c.stderr.String())
	}
	return errors.New(what)
}

// OOMKills implements agent.Host: the host's count of OOM kills in the
// container's cgroup, or -1 when the box is not watched from the host.
func (c *engineBox) OOMKills() int64 {
	if c.host == nil {
		return -1
	}
	return c.host.OOMKills()
}

// Close implements agent.Host: it removes the container, even when ctx is
// already cancelled.
func (c *engineBox) Close(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := c.cli.ContainerRemove(rctx, c.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if cerrdefs.IsNotFound(err) {
		err = nil
	}
	if err != nil {
		c.log.Warn("docker: container remove failed; the next start sweeps it", "err", err)
		return fmt.Errorf("remove container %s: %w", c.id[:12], err)
	}
	c.log.Debug("docker: container removed", "took", time.Since(start))
	return nil
}
