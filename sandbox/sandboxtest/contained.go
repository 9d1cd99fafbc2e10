package sandboxtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// contained: what an isolated backend must hold a hostile bot to: memory,
// processes, files, identity, network, credentials, disk, signals.
func contained(t *testing.T, b Backend, open func(*testing.T, sandbox.Limits) sandbox.Box) {
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
