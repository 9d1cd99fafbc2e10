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
	Name   string  `json:"name"`
	Runs   int     `json:"runs"`
	P50Ms  float64 `json:"p50Ms"`
	P99Ms  float64 `json:"p99Ms"`
	XBare  float64 `json:"xBare,omitempty"`      // p50 over the bare p50
	OverMs float64 `json:"overBareMs,omitempty"` // p50 minus the bare p50
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
func Bench(ctx context.Context, cli *client.Client, image string, runs int) ([]Timing, error) {
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

	prog := scriptProgram("noop", noopScript)
	lim := sandbox.DefaultLimits()
	turn := sandbox.Turn{Remove: []string{"move.json"}, Put: []sandbox.File{{Name: "state.json", Data: []byte("{}")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10}
	measure := func(name string, be sandbox.Backend) error {
		bx, err := be.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
		if err != nil {
			return err
		}
		defer bx.Close(ctx)
		var d []time.Duration
		for range runs {
			t := time.Now()
			r, err := bx.Run(ctx, turn)
			if err != nil {
				return err
			}
			if r.ExitCode != 0 || !r.Answer.Present {
				return fmt.Errorf("%s: the no-op bot failed (exit %d, %s)", name, r.ExitCode, r.Stderr.Data)
			}
			d = append(d, time.Since(t))
		}
		out = append(out, timing(name, d))
		return nil
	}
	if err := measure("local backend turn", &local.Backend{Dir: dir}); err != nil {
		return out, err
	}
	if err := measure("docker backend turn", New(cli, image)); err != nil {
		return out, err
	}
	b := New(cli, image)
	resets, err := measureReset(ctx, b, prog, lim, turn, runs)
	if err != nil {
		return out, err
	}
	out = append(out, timing("docker backend reset", resets))
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
	out = append(out, timing("container start", starts))
	for i := range out {
		// Only turns compare with a bare run; a reset or a start is no turn.
		if i > 0 && out[0].P50Ms > 0 && strings.HasSuffix(out[i].Name, " turn") {
			out[i].XBare = out[i].P50Ms / out[0].P50Ms
			out[i].OverMs = out[i].P50Ms - out[0].P50Ms
		}
	}
	return out, nil
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
