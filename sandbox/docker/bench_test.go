package docker_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

// bareP50 is the bare fork/exec p50 of this run, for the ratios.
var bareP50 time.Duration

func report(b *testing.B, d []time.Duration) time.Duration {
	slices.Sort(d)
	p50, p99 := d[len(d)/2], d[len(d)*99/100]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	if bareP50 > 0 {
		b.ReportMetric(float64(p50)/float64(bareP50), "x-bare")
		b.ReportMetric(float64((p50-bareP50).Microseconds())/1000, "over-bare-ms")
	}
	return p50
}

// BenchmarkTurn runs a no-op bot's turn (write move.json, exit 0) bare on the
// host, through the local backend, and through the docker backend.
func BenchmarkTurn(b *testing.B) {
	prog := sandboxtest.Hostile(b)
	lim := sandboxtest.Limits()
	turn := sandbox.Turn{
		Remove: []string{"move.json"}, Put: []sandbox.File{{Name: "state.json", Data: []byte("ok")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10, HashMax: 10 << 20,
	}
	b.Run("bare", func(b *testing.B) {
		dir := b.TempDir()
		exe := filepath.Join(dir, "hostile")
		os.WriteFile(exe, prog.Files[0].Data, 0o755)
		state := filepath.Join(dir, "state.json")
		os.WriteFile(state, []byte("ok"), 0o644)
		var d []time.Duration
		for b.Loop() {
			t := time.Now()
			cmd := exec.Command(exe, state)
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t))
		}
		bareP50 = report(b, d)
	})
	run := func(b *testing.B, be sandbox.Backend) {
		bx, err := be.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim})
		if err != nil {
			b.Fatal(err)
		}
		defer bx.Close(context.Background())
		var d []time.Duration
		for b.Loop() {
			t := time.Now()
			r, err := bx.Run(context.Background(), turn)
			if err != nil || string(r.Answer.Data) != "ok" {
				b.Fatalf("%v %q", err, r.Answer.Data)
			}
			d = append(d, time.Since(t))
		}
		report(b, d)
	}
	b.Run("local", func(b *testing.B) { run(b, &local.Backend{Dir: b.TempDir()}) })
	b.Run("docker", func(b *testing.B) {
		cli, image := dockertest.Engine(b)
		run(b, docker.New(cli, image))
	})
}

// BenchmarkContainerStart opens and closes one hardened container: create,
// verify, copy the bot in, attach, start, hello, remove.
func BenchmarkContainerStart(b *testing.B) {
	cli, image := dockertest.Engine(b)
	be := docker.New(cli, image)
	prog := sandboxtest.Hostile(b)
	var open, remove []time.Duration
	for b.Loop() {
		t := time.Now()
		bx, err := be.Open(context.Background(), sandbox.Spec{Program: prog, Limits: sandboxtest.Limits()})
		if err != nil {
			b.Fatal(err)
		}
		open = append(open, time.Since(t))
		t = time.Now()
		bx.Close(context.Background())
		remove = append(remove, time.Since(t))
	}
	slices.Sort(open)
	slices.Sort(remove)
	b.ReportMetric(float64(open[len(open)/2].Microseconds())/1000, "open-p50-ms")
	b.ReportMetric(float64(remove[len(remove)/2].Microseconds())/1000, "remove-p50-ms")
}

// BenchmarkReset measures Box.Reset, what a pooled box costs between two
// games, after a turn that left a file in the game directory. The docker reset
// also kills and reaps, empties /tmp, /dev/shm and /dev/mqueue, removes System
// V IPC objects and checks /proc.
func BenchmarkReset(b *testing.B) {
	prog := sandboxtest.Hostile(b)
	turn := sandbox.Turn{
		Put:  []sandbox.File{{Name: "state.json", Data: []byte("leave game")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 1024,
	}
	run := func(b *testing.B, be sandbox.Backend) {
		ctx := context.Background()
		bx, err := be.Open(ctx, sandbox.Spec{Program: prog, Limits: sandboxtest.Limits()})
		if err != nil {
			b.Fatal(err)
		}
		defer bx.Close(ctx)
		var d []time.Duration
		for b.Loop() {
			b.StopTimer()
			if r, err := bx.Run(ctx, turn); err != nil || string(r.Answer.Data) != "left game" {
				b.Fatalf("%v %q", err, r.Answer.Data)
			}
			b.StartTimer()
			t := time.Now()
			if err := bx.Reset(ctx); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t))
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("local", func(b *testing.B) { run(b, &local.Backend{Dir: b.TempDir()}) })
	b.Run("docker", func(b *testing.B) {
		cli, image := dockertest.Engine(b)
		run(b, docker.New(cli, image))
	})
}

// BenchmarkTurnWithDataFile runs a no-op bot's turn in Docker with no data
// file, with an unchanged 10 MiB data file left from an earlier turn (the
// agent must not read it again), and with a bot that rewrites one byte of it
// each turn (the agent reads it all: the hash at disk speed).
func BenchmarkTurnWithDataFile(b *testing.B) {
	cli, image := dockertest.Engine(b)
	prog := sandboxtest.Hostile(b)
	turn := func(mode string) sandbox.Turn {
		return sandbox.Turn{
			Remove: []string{"move.json"}, Put: []sandbox.File{{Name: "state.json", Data: []byte(mode)}},
			Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10, HashMax: 10<<20 + 1,
		}
	}
	for _, c := range []struct{ name, setup, each string }{
		{"none", "ok", "ok"},
		{"unchanged-10MiB", "data-write 10485760", "ok"},
		{"changed-10MiB", "data-write 10485760", "data-flip"},
	} {
		b.Run(c.name, func(b *testing.B) {
			bx, err := docker.New(cli, image).Open(context.Background(), sandbox.Spec{Program: prog, Limits: sandboxtest.Limits()})
			if err != nil {
				b.Fatal(err)
			}
			defer bx.Close(context.Background())
			for range 2 { // the second turn is past the write's clock tick
				if _, err := bx.Run(context.Background(), turn(c.setup)); err != nil {
					b.Fatal(err)
				}
			}
			var d []time.Duration
			var hashed int64
			for b.Loop() {
				t := time.Now()
				r, err := bx.Run(context.Background(), turn(c.each))
				if err != nil {
					b.Fatal(err)
				}
				d = append(d, time.Since(t))
				hashed += r.Hashed
			}
			report(b, d)
			b.ReportMetric(float64(hashed)/float64(len(d)), "hashed-B/turn")
		})
	}
}
