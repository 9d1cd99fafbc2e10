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
)

// noopScript is the bot the bench runs: it answers and exits at once.
const noopScript = "#!/bin/sh\necho '{}' > move.json\n"

// Timing is one way of running a turn, measured.
type Timing struct {
	Name string `json:"name"`
	// Runtime is the engine's runtime the row ran under ("" for rows that
	// run no container: bare, the local backend).
	Runtime string  `json:"runtime,omitempty"`
	Runs    int     `json:"runs"`
	P50Ms   float64 `json:"p50Ms"`
	P99Ms   float64 `json:"p99Ms"`
	XBare   float64 `json:"xBare,omitempty"`      // p50 over the bare p50
	OverMs  float64 `json:"overBareMs,omitempty"` // p50 minus the bare p50
}

func timing(name string, d []time.Duration) Timing {
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return Timing{Name: name, Runs: len(d), P50Ms: ms(d[len(d)/2]), P99Ms: ms(d[len(d)*99/100])}
}

// Bench measures a no-op bot's turn bare on this host, through the local
// backend and through the docker backend, the reset of a container between two
// games (what a pooled box costs instead of a start) and the start of a
// container, so an organizer sees what the sandbox costs on their own machine.
//
// The container rows run under the engine's runtime runtime ("": its
// default); BenchRuntime measures them alone under another.
func Bench(ctx context.Context, cli *client.Client, image, runtime string, runs int) ([]Timing, error) {
	dir, err := os.MkdirTemp("", "arena-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "noop")
	if err := os.WriteFile(script, []byte(noopScript), 0o755); err != nil {
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
	out := []Timing{timing("bare fork/exec", bare)}

	d, err := measureTurns(ctx, &local.Backend{Dir: dir}, scriptProgram("noop", noopScript), sandbox.DefaultLimits(), noopTurn(), runs)
	if err != nil {
		return out, fmt.Errorf("local backend turn: %w", err)
	}
	lt := timing("local backend turn", d)
	if bare := out[0].P50Ms; bare > 0 {
		lt.XBare, lt.OverMs = lt.P50Ms/bare, lt.P50Ms-bare
	}
	out = append(out, lt)
	more, err := BenchRuntime(ctx, cli, image, runtime, runs, out[0].P50Ms)
	return append(out, more...), err
}

// BenchRuntime measures, under the engine's runtime runtime, a no-op bot's
// turn through the docker backend, the reset of a container between two
// games and the start of a container; bare is the bare fork/exec p50 in ms
// the turn row is compared with.
func BenchRuntime(ctx context.Context, cli *client.Client, image, runtime string, runs int, bare float64) ([]Timing, error) {
	b := New(cli, image)
	b.UseRuntime(runtime)
	rt, err := b.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	prog := scriptProgram("noop", noopScript)
	lim := sandbox.DefaultLimits()
	turn := noopTurn()
	var out []Timing
	row := func(name string, d []time.Duration) {
		t := timing(name, d)
		t.Runtime = rt.Name
		// Only turns compare with a bare run; a reset or a start is no turn.
		if bare > 0 && strings.HasSuffix(name, " turn") {
			t.XBare, t.OverMs = t.P50Ms/bare, t.P50Ms-bare
		}
		out = append(out, t)
	}
	turns, err := measureTurns(ctx, b, prog, lim, turn, runs)
	if err != nil {
		return out, err
	}
	row("docker backend turn", turns)
	resets, err := measureReset(ctx, b, prog, lim, turn, runs)
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

// noopTurn is the turn the bench's no-op bot is given.
func noopTurn() sandbox.Turn {
	return sandbox.Turn{Remove: []string{"move.json"}, Put: []sandbox.File{{Name: "state.json", Data: []byte("{}")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10}
}

// measureTurns times runs turns of the no-op bot in one box.
func measureTurns(ctx context.Context, be sandbox.Backend, prog sandbox.Program, lim sandbox.Limits, turn sandbox.Turn, runs int) ([]time.Duration, error) {
	bx, err := be.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
	if err != nil {
		return nil, err
	}
	defer bx.Close(ctx)
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

// measureReset times Box.Reset after each of runs turns of one box.
func measureReset(ctx context.Context, b *Backend, prog sandbox.Program, lim sandbox.Limits, turn sandbox.Turn, runs int) ([]time.Duration, error) {
	bx, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
	if err != nil {
		return nil, err
	}
	defer bx.Close(ctx)
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
