package docker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
	"github.com/arenabots/arena/sandbox/probe"
)

// Bench measures a no-op bot's turn bare on this host, through the local
// backend and through the docker backend, the reset of a container between two
// games (what a pooled box costs instead of a start) and the start of a
// container, so an organizer sees what the sandbox costs on their own machine.
//
// The container rows run under the engine's runtime runtime ("": its
// default); BenchRuntime measures them alone under another.
func Bench(ctx context.Context, cli *client.Client, image, runtime string, runs int) ([]sandbox.Timing, error) {
	dir, err := os.MkdirTemp("", "arena-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "noop")
	if err := os.WriteFile(script, probe.Noop().Files[0].Data, 0o755); err != nil {
		return nil, err
	}
	var bare []time.Duration
	for range runs {
		t := time.Now()
		cmd := exec.CommandContext(ctx, script, filepath.Join(dir, "state.json"))
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("bare run: %w", err)
		}
		bare = append(bare, time.Since(t))
	}
	out := []sandbox.Timing{sandbox.TimingOf("bare fork/exec", bare, 0)}

	d, err := probe.Turns(ctx, &local.Backend{Dir: dir}, sandbox.DefaultLimits(), runs)
	if err != nil {
		return out, fmt.Errorf("local backend turn: %w", err)
	}
	out = append(out, sandbox.TimingOf("local backend turn", d, out[0].P50Ms))
	more, err := BenchRuntime(ctx, cli, image, runtime, runs, out[0].P50Ms)
	return append(out, more...), err
}

// benchSideBySide is the docker backend's bench (sandbox.Doctor.Bench):
// Bench under cfg.Runtime, then, when others is true, the container rows
// under runc and every gVisor runtime the engine has (BenchRuntime), so an
// organizer sees what the second wall costs before choosing it. An engine
// that does not answer is Dial's error.
func benchSideBySide(ctx context.Context, cfg sandbox.Config, runs int, others bool) ([]sandbox.Timing, error) {
	cli, err := dialOf(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	timings, err := Bench(ctx, cli, cfg.Image, cfg.Runtime, runs)
	if err != nil || !others {
		return timings, err
	}
	runtimes, err := benchRuntimes(ctx, cli, cfg.Runtime)
	if err != nil {
		return nil, err
	}
	for _, rt := range runtimes[1:] {
		more, err := BenchRuntime(ctx, cli, cfg.Image, rt, runs, timings[0].P50Ms)
		if err != nil {
			return nil, fmt.Errorf("runtime %s: %w", rt, err)
		}
		timings = append(timings, more...)
	}
	return timings, nil
}

// benchRuntimes are the runtimes the bench measures side by side: the one
// asked for first, then runc and every gVisor runtime the engine has.
func benchRuntimes(ctx context.Context, cli *client.Client, asked string) ([]string, error) {
	info, err := cli.Info(ctx)
	if err != nil {
		return nil, err
	}
	first, err := ResolveRuntime(info, asked)
	if err != nil {
		return nil, err
	}
	out := []string{first.Name}
	for _, name := range append([]string{"runc"}, GVisorRuntimes(info)...) {
		if _, err := ResolveRuntime(info, name); err == nil && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// BenchRuntime measures, under the engine's runtime runtime, a no-op bot's
// turn through the docker backend, the reset of a container between two
// games and the start of a container; bare is the bare fork/exec p50 in ms
// the turn row is compared with.
func BenchRuntime(ctx context.Context, cli *client.Client, image, runtime string, runs int, bare float64) ([]sandbox.Timing, error) {
	b := New(cli, image)
	b.UseRuntime(runtime)
	rt, err := b.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	prog, lim := probe.Noop(), sandbox.DefaultLimits()
	var out []sandbox.Timing
	row := func(name string, d []time.Duration) {
		// Only turns compare with a bare run; a reset or a start is no turn.
		t := sandbox.TimingOf(name, d, 0)
		if strings.HasSuffix(name, " turn") {
			t = sandbox.TimingOf(name, d, bare)
		}
		t.Runtime = rt.Name
		out = append(out, t)
	}
	turns, err := probe.Turns(ctx, b, lim, runs)
	if err != nil {
		return out, err
	}
	row("docker backend turn", turns)
	resets, err := measureReset(ctx, b, prog, lim, runs)
	if err != nil {
		return out, err
	}
	row("docker backend reset", resets)
	var starts []time.Duration
	for range max(runs/20, 5) {
		t := time.Now()
		bx, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
		if err != nil {
			return out, err
		}
		starts = append(starts, time.Since(t))
		bx.Close(ctx)
	}
	row("container start", starts)
	return out, nil
}

// measureReset times Box.Reset after each of runs turns of one box.
func measureReset(ctx context.Context, b *Backend, prog sandbox.Program, lim sandbox.Limits, runs int) ([]time.Duration, error) {
	bx, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
	if err != nil {
		return nil, err
	}
	defer bx.Close(ctx)
	turn := probe.NoopTurn()
	var d []time.Duration
	for range runs {
		if _, err := bx.Run(ctx, turn); err != nil {
			return nil, err
		}
		t := time.Now()
		if err := bx.Reset(ctx); err != nil {
			return nil, err
		}
		d = append(d, time.Since(t))
	}
	return d, nil
}
