package sandboxtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

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
