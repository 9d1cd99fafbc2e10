package sandboxtest

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// oneTurn: what one turn of a bot reports: its answer, exit code, signal,
// time-out and CPU, and its data file hashed only when it changed.
func oneTurn(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	t.Run("a well-behaved bot answers and exits 0", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "ok", 0)
		if r.ExitCode != 0 || r.Signal != 0 || r.TimedOut || answer(r) != "ok" {
			t.Fatalf("got exit %d signal %d timedOut %v answer %q", r.ExitCode, r.Signal, r.TimedOut, answer(r))
		}
		if r.Wall <= 0 || r.Wall > time.Second {
			t.Errorf("wall %v for a no-op bot", r.Wall)
		}
	})

	t.Run("an unchanged data file is hashed once, a changed one again", func(t *testing.T) {
		bx := open(t, Limits())
		const size = 10 * sandbox.MiB
		sumOf := func(r sandbox.Report) string {
			for _, e := range r.GameDir {
				if e.Name == "data.bin" {
					return e.SHA256
				}
			}
			return ""
		}
		r := turn(t, bx, fmt.Sprint("data-write ", size), 0)
		first := sumOf(r)
		if first == "" || r.Hashed < size {
			t.Fatalf("first turn: sha256 %q, %d bytes hashed", first, r.Hashed)
		}
		// The same clock tick as the write may be too close to trust; after
		// one more turn the file must be known.
		turn(t, bx, "ok", 0)
		for i := range 60 {
			r = turn(t, bx, "ok", 0)
			if sumOf(r) != first || r.Hashed >= size {
				t.Fatalf("unchanged turn %d: sha256 %q (was %q), %d bytes hashed", i, sumOf(r), first, r.Hashed)
			}
		}
		r = turn(t, bx, "data-flip", 0)
		if s := sumOf(r); s == "" || s == first || r.Hashed < size {
			t.Fatalf("a byte changed in place: sha256 %q (was %q), %d bytes hashed", s, first, r.Hashed)
		}
	})

	t.Run("exit codes are reported exactly", func(t *testing.T) {
		bx := open(t, Limits())
		for _, code := range []int{0, 1, 2, 3, 42} {
			r := turn(t, bx, fmt.Sprintf("exit %d", code), 0)
			if r.ExitCode != code || r.Signal != 0 || r.TimedOut {
				t.Errorf("exit %d: got exit %d signal %d timedOut %v", code, r.ExitCode, r.Signal, r.TimedOut)
			}
			if want := fmt.Sprintf("exiting %d", code); answer(r) != want {
				t.Errorf("exit %d: answer %q, want %q", code, answer(r), want)
			}
		}
	})

	t.Run("a segfault is reported as SIGSEGV", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "segfault", 0)
		if r.ExitCode != -1 || r.Signal != int(syscall.SIGSEGV) || r.TimedOut || r.OOMKilled {
			t.Fatalf("got exit %d signal %d timedOut %v oom %v", r.ExitCode, r.Signal, r.TimedOut, r.OOMKilled)
		}
	})

	t.Run("a sleeping bot times out at the limit", func(t *testing.T) {
		bx := open(t, Limits())
		limit := 300 * time.Millisecond
		r := turn(t, bx, "sleep-forever", limit)
		if !r.TimedOut || r.OOMKilled {
			t.Fatalf("timedOut %v oom %v exit %d signal %d", r.TimedOut, r.OOMKilled, r.ExitCode, r.Signal)
		}
		if r.Wall < limit || r.Wall > limit+2*time.Second {
			t.Fatalf("wall %v for a %v limit", r.Wall, limit)
		}
		t.Logf("overshoot %v", r.Wall-limit)
	})

	t.Run("a busy loop times out at the limit", func(t *testing.T) {
		bx := open(t, Limits())
		limit := 300 * time.Millisecond
		r := turn(t, bx, "busy-loop", limit)
		if !r.TimedOut || r.Wall < limit {
			t.Fatalf("timedOut %v wall %v", r.TimedOut, r.Wall)
		}
		if r.CPU < limit/4 {
			t.Errorf("a busy loop of %v reported only %v of CPU", r.Wall, r.CPU)
		}
		t.Logf("overshoot %v, cpu %v", r.Wall-limit, r.CPU)
	})

	t.Run("stdin is empty", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "read-stdin", 0)
		if answer(r) != "read 0 bytes, err <nil>" {
			t.Fatalf("answer %q", answer(r))
		}
	})
}

// outputAndFiles: what a bot writes: output floods kept as bounded tails,
// move.json read within its cap and never followed, game_dir listed and
// kept from turn to turn, scratch wiped.
func outputAndFiles(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	botOutput(t, open)
	botFiles(t, open)
}

// botOutput checks what a bot writes out: an output flood kept as bounded
// tails, move.json as a symlink reported and never followed, a huge
// move.json read only up to its cap.
func botOutput(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	t.Run("an output flood keeps the tails and bounded memory", func(t *testing.T) {
		bx := open(t, Limits())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := turn(t, bx, "flood", 60*time.Second)
		runtime.GC()
		runtime.ReadMemStats(&after)
		const stream = 8192 * 48 * 1024
		if r.ExitCode != 0 || answer(r) != "flooded" {
			t.Fatalf("exit %d answer %q timedOut %v", r.ExitCode, answer(r), r.TimedOut)
		}
		if r.Stdout.Total != stream || r.Stderr.Total != stream+int64(len("END-OF-FLOOD")) {
			t.Errorf("totals stdout %d stderr %d", r.Stdout.Total, r.Stderr.Total)
		}
		if len(r.Stderr.Data) != Limits().OutputTail || !bytes.HasSuffix(r.Stderr.Data, []byte("END-OF-FLOOD")) {
			t.Errorf("stderr tail of %d bytes ends %q", len(r.Stderr.Data), r.Stderr.Data[max(0, len(r.Stderr.Data)-20):])
		}
		if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 32<<20 {
			t.Errorf("harness heap grew by %d MiB during a 1 GiB flood", grew>>20)
		}
	})

	t.Run("move.json as a symlink is reported and not followed", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "symlink-move", 0)
		if !r.Answer.Present || r.Answer.Type != sandbox.TypeSymlink || len(r.Answer.Data) != 0 {
			t.Fatalf("answer %+v", r.Answer)
		}
		if e, ok := entry(r, "move.json"); !ok || e.Type != sandbox.TypeSymlink || e.SHA256 != "" {
			t.Fatalf("listing %+v", r.GameDir)
		}
		if _, err := bx.ReadFile(context.Background(), "move.json", 1<<20); err == nil {
			t.Fatalf("ReadFile followed the symlink")
		}
	})

	t.Run("a 100 MB move.json is read only up to the cap", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "huge-move", 30*time.Second)
		if !r.Answer.Present || !r.Answer.Truncated || len(r.Answer.Data) != 64*1024 {
			t.Fatalf("present %v truncated %v len %d", r.Answer.Present, r.Answer.Truncated, len(r.Answer.Data))
		}
	})

}

// botFiles checks the bot's files: a data file kept from turn to turn,
// game_dir's entries listed with their type and size, scratch wiped
// between turns.
func botFiles(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	t.Run("a data file persists from turn to turn", func(t *testing.T) {
		bx := open(t, Limits())
		if r := turn(t, bx, "data-file", 0); answer(r) != "wrote" {
			t.Fatalf("turn 1: %q", answer(r))
		}
		r := turn(t, bx, "data-file", 0)
		if answer(r) != "read remembered" {
			t.Fatalf("turn 2: %q", answer(r))
		}
		e, ok := entry(r, "data.bin")
		if !ok || e.Type != sandbox.TypeFile || e.Size != 10 || e.SHA256 != sha("remembered") {
			t.Fatalf("entry %+v", e)
		}
		data, err := bx.ReadFile(context.Background(), "data.bin", 1<<20)
		if err != nil || string(data) != "remembered" {
			t.Fatalf("ReadFile: %q %v", data, err)
		}
	})

	t.Run("game_dir entries are listed with type and size", func(t *testing.T) {
		bx := open(t, Limits())
		cases := []struct {
			mode  string
			check func(sandbox.Report) error
		}{
			{"data-10mib", func(r sandbox.Report) error {
				if e, _ := entry(r, "data.bin"); e.Size != 10<<20 || e.SHA256 == "" {
					return fmt.Errorf("%+v", e)
				}
				return nil
			}},
			{"data-10mib-plus-1", func(r sandbox.Report) error {
				if e, _ := entry(r, "data.bin"); e.Size != 10<<20+1 {
					return fmt.Errorf("%+v", e)
				}
				return nil
			}},
			{"data-two-files", func(r sandbox.Report) error {
				_, a := entry(r, "a.bin")
				_, b := entry(r, "b.bin")
				if !a || !b {
					return fmt.Errorf("%+v", r.GameDir)
				}
				return nil
			}},
			{"data-dir", func(r sandbox.Report) error {
				if e, _ := entry(r, "sub"); e.Type != sandbox.TypeDir {
					return fmt.Errorf("%+v", r.GameDir)
				}
				return nil
			}},
		}
		for _, c := range cases {
			r, err := bx.Run(context.Background(), sandbox.Turn{
				Clean: true, Put: []sandbox.File{{Name: "state.json", Data: []byte(c.mode)}},
				Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 1024, HashMax: 10*sandbox.MiB + 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.check(r); err != nil {
				t.Errorf("%s: %v", c.mode, err)
			}
		}
	})

	t.Run("scratch is wiped between turns", func(t *testing.T) {
		l := Limits()
		l.FileSize = 16 * sandbox.MiB
		bx := open(t, l)
		r := turn(t, bx, "fill-tmp", 30*time.Second)
		if !strings.HasPrefix(answer(r), "filled ") {
			t.Fatalf("turn 1: %q (exit %d, signal %d)", answer(r), r.ExitCode, r.Signal)
		}
		if r := turn(t, bx, "fill-tmp", 0); answer(r) != "tmp entries 0" {
			t.Fatalf("turn 2: %q", answer(r))
		}
	})
}

// limitEdge: a turn just under its limit passes, one just over times out.
func limitEdge(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	t.Run("a 4.9 s turn of a 5 s limit passes and a 5.1 s one times out", func(t *testing.T) {
		if testing.Short() {
			t.Skip("takes 10 s")
		}
		l := Limits()
		l.TurnTimeout = 5 * time.Second
		bx := open(t, l)
		// The clock covers starting the program, which under a user-space
		// kernel on a loaded machine costs a noticeable share of the margin:
		// the passing turn sleeps 4.9 s less twice what an empty turn costs,
		// and never less than 4.5 s, so the bot is shown to get the limit
		// minus only the box's own start.
		start := turn(t, bx, "sleep-ms 0", 0).Wall
		ms := 4900 - 2*start.Milliseconds()
		if ms < 4500 {
			t.Fatalf("an empty turn takes %v; the box's start eats the limit", start)
		}
		r := turn(t, bx, fmt.Sprintf("sleep-ms %d", ms), 0)
		if r.TimedOut || r.ExitCode != 0 || answer(r) != fmt.Sprintf("slept %d", ms) {
			t.Errorf("%d ms (an empty turn %v): timedOut %v exit %d wall %v", ms, start, r.TimedOut, r.ExitCode, r.Wall)
		}
		r = turn(t, bx, "sleep-ms 5100", 0)
		if !r.TimedOut || answer(r) != "" {
			t.Errorf("5.1 s: timedOut %v exit %d wall %v answer %q", r.TimedOut, r.ExitCode, r.Wall, answer(r))
		}
	})
}
