// Package sandboxtest is the conformance suite every sandbox backend must pass:
// a corpus of hostile bots, each with the exact facts its turn must report, and
// proof that nothing of one game reaches the next when a box is reused.
package sandboxtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox"
)

// Backend is what the suite needs from a backend under test. What the suite
// holds the backend to is what Raw declares (sandbox.Capabilities), read once
// a box was opened: an Isolated backend gets the fixtures that need
// containment, a Reusable one must hand the next game the same box reset,
// and one whose OOMTakesTheBox may report every turn after an out-of-memory
// kill out of memory too.
type Backend struct {
	Open func(t *testing.T, p sandbox.Program, l sandbox.Limits) sandbox.Box
	// Raw is the backend itself: its Capabilities say what the suite checks,
	// and the cases that prove nothing of a game reaches the next run its
	// boxes through a sandbox.Pool over it.
	Raw sandbox.Backend
	// Labels, when set, gives the labels of the boxes those cases open, and
	// Leftovers, when set, checks that nothing with them is left once the pool
	// is closed.
	Labels    func(t *testing.T) map[string]string
	Leftovers func(t *testing.T, labels map[string]string)
}

// hostAddresses are this host's own IPv4 addresses, on a port nothing
// listens on: a box that reaches one of them is refused, not blocked.
func hostAddresses() []string {
	var out []string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
			out = append(out, net.JoinHostPort(ip.IP.String(), "1"))
		}
	}
	return out
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
	if b.Raw == nil {
		t.Fatal("the suite needs the raw backend (Backend.Raw): its capabilities, and a pool over it")
	}
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

	t.Run("sessions", func(t *testing.T) { sessions(t, open) })

	t.Run("nothing of a game reaches the next", func(t *testing.T) { nextGame(t, b, prog) })

	if !b.Raw.Capabilities().Isolated {
		return
	}

	t.Run("out of memory is told apart from timeout and crash", func(t *testing.T) {
		bx := open(t, Limits())
		r := turn(t, bx, "memory-hog", 30*time.Second)
		if !r.OOMKilled || r.TimedOut || r.Signal != int(syscall.SIGKILL) {
			t.Fatalf("oom %v timedOut %v exit %d signal %d answer %q", r.OOMKilled, r.TimedOut, r.ExitCode, r.Signal, answer(r))
		}
		r = turn(t, bx, "ok", 0)
		switch {
		case answer(r) == "ok" && !r.OOMKilled:
		case b.Raw.Capabilities().OOMTakesTheBox && r.OOMKilled && r.Signal == int(syscall.SIGKILL):
			t.Logf("the kill took the box: later turns are out of memory too")
		default:
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

	t.Run("the bot runs unprivileged, with no supplementary group", func(t *testing.T) {
		bx := open(t, Limits())
		got := answer(turn(t, bx, "identity", 0))
		if strings.HasPrefix(got, "uid=0 ") || strings.Contains(got, " gid=0 ") || !strings.HasSuffix(got, " groups=[] err=<nil>") {
			t.Fatalf("the bot runs as %q", got)
		}
	})

	t.Run("the network is out of reach", func(t *testing.T) {
		bx := open(t, Limits())
		targets := append([]string{"1.1.1.1:53", "8.8.8.8:443", "10.96.0.1:443"}, hostAddresses()...)
		r := turn(t, bx, "network "+strings.Join(targets, " "), 30*time.Second)
		for _, got := range strings.Fields(answer(r)) {
			if !strings.HasSuffix(got, "=blocked") {
				t.Errorf("the bot reached %s", got)
			}
		}
		if n := len(strings.Fields(answer(r))); n != len(targets) {
			t.Fatalf("%d of %d addresses tried: %q", n, len(targets), answer(r))
		}
	})

	t.Run("no credential of the engine or the cluster reaches the bot", func(t *testing.T) {
		bx := open(t, Limits())
		if got := answer(turn(t, bx, "credentials", 0)); got != "found []" {
			t.Fatalf("the bot %s", got)
		}
	})

	t.Run("a bot that writes 10 GiB fills only its own directory", func(t *testing.T) {
		l := Limits()
		bx := open(t, l)
		r := turn(t, bx, "write-10gib", 60*time.Second)
		var n int64
		var refused bool
		if _, err := fmt.Sscanf(answer(r), "wrote %d, %t", &n, &refused); err != nil || !refused || n > l.GameDirBytes {
			t.Fatalf("answer %q (game directory of %d bytes), timed out %v", answer(r), l.GameDirBytes, r.TimedOut)
		}
		if r := turn(t, bx, "ok", 0); answer(r) != "ok" {
			t.Fatalf("after the write: %q", answer(r))
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
	t.Run("lines sent between questions arrive in order before the next question", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "heard")
		for i, want := range []string{"a,b", "", "c"} {
			if want != "" {
				for _, l := range strings.Split(want, ",") {
					if err := s.Send(ctx, l); err != nil {
						t.Fatal(err)
					}
				}
			}
			q := fmt.Sprint("q", i)
			if ex := ask(t, s, "ask "+q, 2*time.Second); ex.Line != "re "+q+" heard "+want {
				t.Fatalf("question %d: %+v, want the lines %q", i, ex, want)
			}
		}
	})
	t.Run("lines to a bot that does not read never block the harness", func(t *testing.T) {
		s := startSession(t, open(t, Limits()), "deaf")
		line := strings.Repeat("x", 1000)
		done := make(chan error, 1)
		go func() {
			// Far more than a pipe holds: a blocking write would hang here.
			for range 2000 {
				if err := s.Send(ctx, line); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Send blocked on a bot that does not read")
		}
		ex := ask(t, s, "ask x", 200*time.Millisecond)
		if !ex.TimedOut || ex.Line != "" {
			t.Fatalf("%+v", ex)
		}
		if _, err := s.Stop(ctx); err != nil {
			t.Fatal(err)
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

// place is somewhere a bot can leave something of its game behind.
type place struct {
	name     string // as the hostile bot's "leave" and "look" modes know it
	what     string // in the test's name
	isolated bool   // only an isolated backend can be held to it
}

var places = []place{
	{"game", "a file left in the game directory", false},
	{"tmp", "a file left in /tmp", false},
	{"shm", "a file left in /dev/shm", true},
	{"process", "a process left running", true},
	{"mqueue", "a POSIX message queue left", true},
	{"sysv", "a System V IPC object left", true},
}

// clean is what the hostile bot's "look" says when nothing was left in p.
func (p place) clean() string {
	if p.name == "process" {
		return "process none"
	}
	return p.name + " absent"
}

// nextGame plays a game that leaves something behind, returns the box to a
// pool, and checks that the next game on the same, reused box finds nothing of
// it: for the file protocol and for sessions, one place at a time.
func nextGame(t *testing.T, b Backend, prog sandbox.Program) {
	ctx := context.Background()
	// pool returns a pool over the backend and the spec to open from it; the
	// pool is closed, and leftovers checked, when the test ends.
	pool := func(t *testing.T) (*sandbox.Pool, sandbox.Spec) {
		p := sandbox.NewPool(b.Raw)
		spec := sandbox.Spec{Program: prog, Limits: Limits()}
		if b.Labels != nil {
			spec.Labels = b.Labels(t)
		}
		t.Cleanup(func() {
			if err := p.Close(ctx); err != nil {
				t.Errorf("close pool: %v", err)
			}
			if b.Leftovers != nil {
				b.Leftovers(t, spec.Labels)
			}
		})
		return p, spec
	}
	open := func(t *testing.T, p *sandbox.Pool, spec sandbox.Spec) sandbox.Box {
		t.Helper()
		bx, err := p.Open(ctx, spec)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { bx.Close(ctx) }) // a second Close does nothing
		return bx
	}
	// returned closes the box of game 1 and opens the box of game 2, which must
	// be the same box, reset.
	returned := func(t *testing.T, p *sandbox.Pool, spec sandbox.Spec, bx sandbox.Box) sandbox.Box {
		t.Helper()
		if err := bx.Close(ctx); err != nil {
			t.Fatalf("returning the box to the pool: %v", err)
		}
		if st := p.Stats(); st.ResetFailures != 0 {
			t.Fatalf("the box could not be reset: %+v", st)
		}
		next := open(t, p, spec)
		st := p.Stats()
		reusable := b.Raw.Capabilities().Reusable
		switch {
		case !reusable && (st.Opened != 2 || st.Reused != 0):
			t.Fatalf("the next game did not get a new box: %+v", st)
		case reusable && (st.Opened != 1 || st.Reused != 1):
			t.Fatalf("the next game did not get the reset box: %+v", st)
		}
		return next
	}
	isolated := b.Raw.Capabilities().Isolated
	for _, pl := range places {
		if pl.isolated && !isolated {
			continue
		}
		t.Run(pl.what+" by a turn is gone in the next game", func(t *testing.T) {
			p, spec := pool(t)
			bx := open(t, p, spec)
			if r := turn(t, bx, "leave "+pl.name, 0); answer(r) != "left "+pl.name {
				t.Fatalf("game 1: %q (exit %d, stderr %q)", answer(r), r.ExitCode, r.Stderr.Data)
			}
			bx = returned(t, p, spec, bx)
			r := turn(t, bx, "look "+pl.name, 0)
			if answer(r) != pl.clean() {
				t.Fatalf("game 2 found %q, want %q", answer(r), pl.clean())
			}
			var names []string
			for _, e := range r.GameDir {
				names = append(names, e.Name)
			}
			if got := strings.Join(names, " "); got != "move.json state.json" {
				t.Fatalf("game 2's game directory holds %s, want only its own move.json and state.json", got)
			}
		})
		t.Run(pl.what+" by a session is gone in the next game", func(t *testing.T) {
			p, spec := pool(t)
			bx := open(t, p, spec)
			s := startPooledSession(t, bx)
			if ex := ask(t, s, "ask leave "+pl.name, 5*time.Second); ex.Line != "left "+pl.name {
				t.Fatalf("game 1: %+v", ex)
			}
			// The bot sees what it left, so that game 2 not seeing it means something.
			if ex := ask(t, s, "ask look "+pl.name, 5*time.Second); ex.Line == pl.clean() || ex.Line == "" {
				t.Fatalf("game 1 cannot see what it left: %+v", ex)
			}
			// The session still runs when its box goes back to the pool.
			bx = returned(t, p, spec, bx)
			if _, err := s.Ask(ctx, "ask look "+pl.name, time.Second); err == nil {
				t.Fatal("the session of game 1 still reaches the box in game 2")
			}
			s = startPooledSession(t, bx)
			if ex := ask(t, s, "ask look "+pl.name, 5*time.Second); ex.Line != pl.clean() {
				t.Fatalf("game 2 found %q, want %q (%+v)", ex.Line, pl.clean(), ex)
			}
			if _, err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if data, err := bx.ReadFile(ctx, "memo.txt", 1024); err == nil {
				t.Fatalf("game 2's game directory holds memo.txt: %q", data)
			}
		})
	}
}

func startPooledSession(t *testing.T, bx sandbox.Box) sandbox.Session {
	t.Helper()
	sb, ok := bx.(sandbox.SessionBox)
	if !ok {
		t.Fatal("the backend cannot run session bots")
	}
	s, err := sb.StartSession(context.Background(), []string{"session:places"})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return s
}
