// Package sandboxtest is the conformance suite every sandbox backend must pass:
// a corpus of hostile bots, each with the exact facts its turn must report.
package sandboxtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox"
)

// Backend is what the suite needs from a backend under test.
type Backend struct {
	Open func(t *testing.T, p sandbox.Program, l sandbox.Limits) sandbox.Box
	// Isolated backends contain the bot: memory is enforced, writes outside the
	// game and scratch directories fail, every process dies after its turn, and a
	// bot may try to kill everything. Only isolated backends get those fixtures.
	Isolated bool
}

// Hostile returns the fixture bot as a Program.
func Hostile(t testing.TB) sandbox.Program {
	t.Helper()
	bin := gobuild.MustStatic(t, "./internal/testbots/hostile")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.Program{Name: "hostile", Entry: "hostile", Files: []sandbox.File{{Name: "hostile", Data: data, Mode: 0o755}}}
}

// Limits for the suite: short turns, small directories.
func Limits() sandbox.Limits {
	l := sandbox.DefaultLimits()
	l.TurnTimeout = 2 * time.Second
	l.Memory = 256 * sandbox.MiB
	l.Pids = 64
	l.ScratchBytes = 64 * sandbox.MiB
	l.GameDirBytes = 64 * sandbox.MiB
	l.OutputTail = 1024
	return l
}

// turn runs one turn in mode.
func turn(t *testing.T, bx sandbox.Box, mode string, timeout time.Duration) sandbox.Report {
	t.Helper()
	rep, err := bx.Run(context.Background(), sandbox.Turn{
		Remove:     []string{"move.json"},
		Put:        []sandbox.File{{Name: "state.json", Data: []byte(mode)}},
		Args:       []string{sandbox.GameDirToken + "/state.json"},
		Collect:    "move.json",
		CollectMax: 64 * 1024,
		HashMax:    10*sandbox.MiB + 1,
		Timeout:    timeout,
	})
	if err != nil {
		t.Fatalf("turn %q: sandbox fault: %v", mode, err)
	}
	return rep
}

func answer(r sandbox.Report) string { return string(r.Answer.Data) }

func entry(r sandbox.Report, name string) (sandbox.Entry, bool) {
	for _, e := range r.GameDir {
		if e.Name == name {
			return e, true
		}
	}
	return sandbox.Entry{}, false
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Run runs the whole suite against b.
func Run(t *testing.T, b Backend) {
	prog := Hostile(t)
	open := func(t *testing.T, l sandbox.Limits) sandbox.Box { return b.Open(t, prog, l) }

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

	t.Run("a 4.9 s turn of a 5 s limit passes and a 5.1 s one times out", func(t *testing.T) {
		if testing.Short() {
			t.Skip("takes 10 s")
		}
		l := Limits()
		l.TurnTimeout = 5 * time.Second
		bx := open(t, l)
		r := turn(t, bx, "sleep-ms 4900", 0)
		if r.TimedOut || r.ExitCode != 0 || answer(r) != "slept 4900" {
			t.Errorf("4.9 s: timedOut %v exit %d wall %v", r.TimedOut, r.ExitCode, r.Wall)
		}
		r = turn(t, bx, "sleep-ms 5100", 0)
		if !r.TimedOut || answer(r) != "" {
			t.Errorf("5.1 s: timedOut %v exit %d wall %v answer %q", r.TimedOut, r.ExitCode, r.Wall, answer(r))
		}
	})

	t.Run("sessions", func(t *testing.T) { sessions(t, open) })

	if !b.Isolated {
		return
	}

	t.Run("out of memory is told apart from timeout and crash", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "memory-hog", 30*time.Second)
		if !r.OOMKilled || r.TimedOut || r.Signal != int(syscall.SIGKILL) {
			t.Fatalf("oom %v timedOut %v exit %d signal %d answer %q", r.OOMKilled, r.TimedOut, r.ExitCode, r.Signal, answer(r))
		}
		if r := turn(t, bx, "ok", 0); answer(r) != "ok" || r.OOMKilled {
			t.Fatalf("the box did not recover: %+v", r)
		}
	})

	t.Run("a setsid daemon does not outlive its turn", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "daemon", 0)
		if answer(r) != "first" || r.Survivors < 1 {
			t.Fatalf("turn 1: answer %q survivors %d", answer(r), r.Survivors)
		}
		beat, err := bx.ReadFile(context.Background(), "daemon-heartbeat", 64)
		if err != nil {
			t.Fatalf("no heartbeat: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
		again, _ := bx.ReadFile(context.Background(), "daemon-heartbeat", 64)
		if !bytes.Equal(beat, again) {
			t.Fatalf("the daemon kept running between turns")
		}
		if r := turn(t, bx, "daemon", 0); answer(r) != "survivor gone" {
			t.Fatalf("turn 2: %q", answer(r))
		}
	})

	t.Run("a fork bomb is contained and leaves nothing behind", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "fork-bomb", 500*time.Millisecond)
		if !r.TimedOut {
			t.Fatalf("timedOut %v exit %d signal %d", r.TimedOut, r.ExitCode, r.Signal)
		}
		t.Logf("killed %d survivors", r.Survivors)
		if r := turn(t, bx, "ok", 0); answer(r) != "ok" || r.Survivors != 0 {
			t.Fatalf("after the bomb: answer %q survivors %d", answer(r), r.Survivors)
		}
	})

	t.Run("writes outside game_dir and scratch fail", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "write-outside", 0)
		want := "/probe=denied /etc/probe=denied /bot/probe=denied /usr/probe=denied /tmp/probe=written /dev/shm/probe=written"
		if answer(r) != want {
			t.Fatalf("got  %q\nwant %q", answer(r), want)
		}
	})

	t.Run("a bot that kills everything only kills itself", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "kill-everything", 0)
		if r.Signal != int(syscall.SIGKILL) || r.TimedOut || r.OOMKilled {
			t.Fatalf("exit %d signal %d timedOut %v", r.ExitCode, r.Signal, r.TimedOut)
		}
		if r := turn(t, bx, "ok", 0); answer(r) != "ok" {
			t.Fatalf("the box did not survive: %q", answer(r))
		}
	})
}

func startSession(t *testing.T, bx sandbox.Box, mode string) sandbox.Session {
	t.Helper()
	sb, ok := bx.(sandbox.SessionBox)
	if !ok {
		t.Fatal("the backend cannot run session bots")
	}
	s, err := sb.StartSession(context.Background(), []string{"session:" + mode})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func ask(t *testing.T, s sandbox.Session, line string, timeout time.Duration) sandbox.Exchange {
	t.Helper()
	ex, err := s.Ask(context.Background(), line, timeout)
	if err != nil {
		t.Fatalf("ask %q: sandbox fault: %v", line, err)
	}
	return ex
}

func sessions(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	ctx := context.Background()
	t.Run("a session answers line by line", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "echo")
		s.Send(ctx, "white")
		for i, q := range []string{"e2e4", "d7d5", "O-O"} {
			ex := ask(t, s, "ask "+q, 2*time.Second)
			if ex.Line != "re "+q || ex.TimedOut || ex.Exited || ex.Early != "" || ex.Wall <= 0 {
				t.Fatalf("question %d: %+v", i, ex)
			}
		}
		rep, err := s.Stop(ctx)
		if err != nil || rep.ExitCode != -1 {
			t.Fatalf("stop: %+v %v", rep, err)
		}
	})
	t.Run("a silent bot times out without blocking", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "silent")
		ex := ask(t, s, "ask x", 200*time.Millisecond)
		if !ex.TimedOut || ex.Line != "" || ex.Wall < 200*time.Millisecond || ex.Wall > 2*time.Second {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("output before the question is reported", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "early")
		time.Sleep(200 * time.Millisecond)
		ex := ask(t, s, "ask x", 2*time.Second)
		if ex.Early != "hello" || ex.Line != "re x" {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("a flood does not block or swell the harness", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "flood")
		time.Sleep(300 * time.Millisecond)
		ex := ask(t, s, "ask x", time.Second)
		if ex.Early == "" || len(ex.Early) > 2048 {
			t.Fatalf("early output of %d bytes", len(ex.Early))
		}
		if _, err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a bot that exits mid-game is reported", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "exit-after-1")
		if ex := ask(t, s, "ask a", 2*time.Second); ex.Line != "re a" {
			t.Fatalf("%+v", ex)
		}
		ex := ask(t, s, "ask b", 2*time.Second)
		if !ex.Exited || ex.TimedOut {
			t.Fatalf("%+v", ex)
		}
		rep, _ := s.Stop(ctx)
		if rep.ExitCode != 0 {
			t.Fatalf("exit %d", rep.ExitCode)
		}
	})
	t.Run("a line longer than the cap is cut and flagged", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "longline")
		ex := ask(t, s, "ask x", 2*time.Second)
		if !ex.TooLong || len(ex.Line) != sandbox.MaxLine {
			t.Fatalf("tooLong %v, %d bytes", ex.TooLong, len(ex.Line))
		}
	})
	t.Run("the bot is paused between questions", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "busy")
		ask(t, s, "ask x", 2*time.Second) // starts a busy loop after answering
		time.Sleep(600 * time.Millisecond)
		rep, err := s.Stop(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.CPU > 300*time.Millisecond {
			t.Fatalf("the bot used %v of CPU while it was not its turn", rep.CPU)
		}
	})
}
