package sandboxtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

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

// sessions checks the backend's session bots: how lines go to and from
// one, then what a session bot that misbehaves gets.
func sessions(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	sessionLines(t, open)
	sessionMisdeeds(t, open)
}

// sessionLines checks that a session answers question by question, that
// lines sent between questions arrive in order, and that a bot that does
// not read or does not answer never blocks the harness.
func sessionLines(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
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
}

// sessionMisdeeds checks what a session bot that misbehaves gets: its
// output before a question reported, a flood kept small, its exit
// reported, a line too long cut, and no CPU between questions.
func sessionMisdeeds(t *testing.T, open func(*testing.T, sandbox.Limits) sandbox.Box) {
	ctx := context.Background()
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
