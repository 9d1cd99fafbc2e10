package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

type failing struct{ sandbox.Box }

func (failing) Run(context.Context, sandbox.Turn) (sandbox.Report, error) {
	return sandbox.Report{}, errors.New("engine gone")
}

type wrap struct {
	sandbox.Backend
	fail bool
}

func (w *wrap) Open(ctx context.Context, s sandbox.Spec) (sandbox.Box, error) {
	b, err := w.Backend.Open(ctx, s)
	if w.fail {
		return failing{b}, err
	}
	return b, err
}

func TestPoolReusesHealthyBoxesWithNothingLeftOver(t *testing.T) {
	ctx := context.Background()
	prog := sandboxtest.Hostile(t)
	spec := sandbox.Spec{Program: prog, Limits: sandboxtest.Limits()}
	p := sandbox.NewPool(&local.Backend{Dir: t.TempDir()})
	defer p.Close(ctx)

	a, err := p.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	turn := sandbox.Turn{Put: []sandbox.File{{Name: "state.json", Data: []byte("data-file")}}, Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 100}
	if r, err := a.Run(ctx, turn); err != nil || string(r.Answer.Data) != "wrote" {
		t.Fatalf("%q %v", r.Answer.Data, err)
	}
	dir := a.GameDir()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	b, err := p.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if b.GameDir() != dir {
		t.Fatalf("a new box was made instead of reusing the idle one")
	}
	if st := p.Stats(); st != (sandbox.PoolStats{Opened: 1, Reused: 1}) {
		t.Fatalf("stats %+v", st)
	}
	// The pool reset the box: the next match starts clean without asking.
	if r, err := b.Run(ctx, turn); err != nil || string(r.Answer.Data) != "wrote" {
		t.Fatalf("the last match's data file survived: %q %v", r.Answer.Data, err)
	}
	c, _ := p.Open(ctx, spec) // b is busy: a second box
	if c.GameDir() == dir {
		t.Fatal("a busy box was handed out twice")
	}
	b.Close(ctx)
	c.Close(ctx)
	if st := p.Stats(); st != (sandbox.PoolStats{Opened: 2, Reused: 1}) {
		t.Fatalf("stats %+v", st)
	}
}

func TestPoolDropsABoxThatFailed(t *testing.T) {
	ctx := context.Background()
	w := &wrap{Backend: &local.Backend{Dir: t.TempDir()}, fail: true}
	p := sandbox.NewPool(w)
	defer p.Close(ctx)
	spec := sandbox.Spec{Program: sandboxtest.Hostile(t), Limits: sandboxtest.Limits()}
	a, _ := p.Open(ctx, spec)
	if _, err := a.Run(ctx, sandbox.Turn{}); err == nil {
		t.Fatal("the failing box did not fail")
	}
	dir := a.GameDir()
	a.Close(ctx)
	w.fail = false
	b, _ := p.Open(ctx, spec)
	defer b.Close(ctx)
	if b.GameDir() == dir {
		t.Fatal("a failed box was reused")
	}
}

// stubBox is a Box that runs nothing and counts what was asked of it.
type stubBox struct {
	n                 int // which box the backend made, from 1
	resetErr          error
	resets, closes    int
	sessions, stopped int
}

func (b *stubBox) Run(context.Context, sandbox.Turn) (sandbox.Report, error) {
	return sandbox.Report{}, nil
}
func (b *stubBox) ReadFile(context.Context, string, int64) ([]byte, error) { return nil, nil }
func (b *stubBox) GameDir() string                                         { return "/game" }
func (b *stubBox) Executable() string                                      { return "/bot/stub" }
func (b *stubBox) Reset(context.Context) error                             { b.resets++; return b.resetErr }
func (b *stubBox) Close(context.Context) error                             { b.closes++; return nil }
func (b *stubBox) StartSession(context.Context, []string) (sandbox.Session, error) {
	b.sessions++
	return stubSession{b}, nil
}

type stubSession struct{ b *stubBox }

func (stubSession) Send(context.Context, string) error { return nil }
func (stubSession) Ask(context.Context, string, time.Duration) (sandbox.Exchange, error) {
	return sandbox.Exchange{Line: "re"}, nil
}
func (s stubSession) Stop(context.Context) (sandbox.Report, error) {
	s.b.stopped++
	return sandbox.Report{}, nil
}

// stubBackend opens stubBoxes; the ones it made are kept to be inspected.
// With makeRoom, each Open first asks for room (sandbox.MakeRoom), as a
// backend whose box found none does, and keeps the answer.
type stubBackend struct {
	resetErr error
	made     []*stubBox
	makeRoom bool
	madeRoom []bool
}

func (s *stubBackend) Name() string { return "stub" }
func (s *stubBackend) Capabilities() sandbox.Capabilities {
	return sandbox.Capabilities{Reusable: true}
}
func (s *stubBackend) Where() string { return "nowhere" }
func (s *stubBackend) Admit(ctx context.Context, _ int, _ sandbox.Limits) (context.Context, func(), error) {
	return sandbox.AdmitAtOnce(ctx)
}

func (s *stubBackend) Describe(context.Context) (map[string]string, error) {
	return nil, nil
}
func (s *stubBackend) Open(ctx context.Context, _ sandbox.Spec) (sandbox.Box, error) {
	if s.makeRoom {
		s.madeRoom = append(s.madeRoom, sandbox.MakeRoom(ctx))
	}
	b := &stubBox{n: len(s.made) + 1, resetErr: s.resetErr}
	s.made = append(s.made, b)
	return b, nil
}

func TestPoolDestroysABoxWhoseResetFails(t *testing.T) {
	ctx := context.Background()
	be := &stubBackend{resetErr: errors.New("a process is left")}
	p := sandbox.NewPool(be)
	var logged bytes.Buffer
	p.Log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	defer p.Close(ctx)
	spec := sandbox.Spec{Program: sandbox.Program{Name: "stub", Entry: "stub"}}
	a, err := p.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	first := be.made[0]
	if first.resets != 1 || first.closes != 1 {
		t.Fatalf("the box whose reset failed was reset %d times and closed %d times, want 1 and 1", first.resets, first.closes)
	}
	if st := p.Stats(); st != (sandbox.PoolStats{Opened: 1, ResetFailures: 1}) {
		t.Fatalf("stats %+v", st)
	}
	if !strings.Contains(logged.String(), `level=WARN msg="sandbox pool: reset failed; destroying the box" bot=stub`) ||
		!strings.Contains(logged.String(), `err="a process is left"`) {
		t.Fatalf("the failed reset was not logged as a warning:\n%s", logged.String())
	}
	be.resetErr = nil
	b, err := p.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(be.made) != 2 {
		t.Fatalf("the backend made %d boxes, want a new one", len(be.made))
	}
	if st := p.Stats(); st != (sandbox.PoolStats{Opened: 2, ResetFailures: 1}) {
		t.Fatalf("stats %+v", st)
	}
	b.Close(ctx)
	if second := be.made[1]; second.resets != 1 || second.closes != 0 {
		t.Fatalf("the healthy box was reset %d times and closed %d times, want 1 and 0", second.resets, second.closes)
	}
}

func TestPoolDestroysWhatItCannotKeep(t *testing.T) {
	ctx := context.Background()
	spec := sandbox.Spec{Program: sandbox.Program{Name: "stub", Entry: "stub"}}
	t.Run("a box returned after the pool closed", func(t *testing.T) {
		be := &stubBackend{}
		p := sandbox.NewPool(be)
		a, _ := p.Open(ctx, spec)
		p.Close(ctx)
		a.Close(ctx)
		if b := be.made[0]; b.closes != 1 || b.resets != 0 {
			t.Fatalf("reset %d closed %d", b.resets, b.closes)
		}
	})
	t.Run("a box returned with its context done", func(t *testing.T) {
		be := &stubBackend{}
		p := sandbox.NewPool(be)
		defer p.Close(ctx)
		a, _ := p.Open(ctx, spec)
		done, cancel := context.WithCancel(ctx)
		cancel()
		a.Close(done)
		if b := be.made[0]; b.closes != 1 || b.resets != 0 {
			t.Fatalf("reset %d closed %d", b.resets, b.closes)
		}
	})
	t.Run("idle boxes when the pool closes", func(t *testing.T) {
		be := &stubBackend{}
		p := sandbox.NewPool(be)
		a, _ := p.Open(ctx, spec)
		a.Close(ctx)
		if b := be.made[0]; b.closes != 0 || b.resets != 1 {
			t.Fatalf("reset %d closed %d", b.resets, b.closes)
		}
		p.Close(ctx)
		if b := be.made[0]; b.closes != 1 {
			t.Fatalf("closed %d", b.closes)
		}
	})
}

func TestAPooledBoxIsOutOfReachOnceReturned(t *testing.T) {
	ctx := context.Background()
	be := &stubBackend{}
	p := sandbox.NewPool(be)
	defer p.Close(ctx)
	spec := sandbox.Spec{Program: sandbox.Program{Name: "stub", Entry: "stub"}}
	a, _ := p.Open(ctx, spec)
	s, err := a.(sandbox.SessionBox).StartSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := s.Ask(ctx, "q", time.Second); err != nil || ex.Line != "re" {
		t.Fatalf("%+v %v", ex, err)
	}
	a.Close(ctx) // the session still runs: Reset is the box's to stop it
	if _, err := s.Ask(ctx, "q", time.Second); !errors.Is(err, sandbox.ErrBoxClosed) {
		t.Fatalf("a session asked after its box was returned: %v", err)
	}
	if _, err := s.Stop(ctx); !errors.Is(err, sandbox.ErrBoxClosed) {
		t.Fatalf("a session stopped after its box was returned: %v", err)
	}
	if err := s.Send(ctx, "x"); !errors.Is(err, sandbox.ErrBoxClosed) {
		t.Fatalf("a session sent to after its box was returned: %v", err)
	}
	if _, err := a.Run(ctx, sandbox.Turn{}); !errors.Is(err, sandbox.ErrBoxClosed) {
		t.Fatalf("a turn ran on a returned box: %v", err)
	}
	if _, err := a.ReadFile(ctx, "x", 1); !errors.Is(err, sandbox.ErrBoxClosed) {
		t.Fatalf("a file was read from a returned box: %v", err)
	}
	if b := be.made[0]; b.stopped != 0 || b.resets != 1 {
		t.Fatalf("the returned box's session was stopped %d times through the old handle, reset %d times", b.stopped, b.resets)
	}
}

// freshBackend is a backend whose boxes are not reusable.
type freshBackend struct{ stubBackend }

func (f *freshBackend) Capabilities() sandbox.Capabilities { return sandbox.Capabilities{} }
func (f *freshBackend) Where() string                      { return "nowhere" }

// A box that is not reusable serves one game: it is destroyed, never reset
// and handed to the next.
func TestPoolNeverReusesABoxThatIsNotReusable(t *testing.T) {
	ctx := context.Background()
	be := &freshBackend{}
	p := sandbox.NewPool(be)
	defer p.Close(ctx)
	spec := sandbox.Spec{Program: sandbox.Program{Name: "stub", Entry: "stub"}}
	for range 2 {
		bx, err := p.Open(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := bx.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(be.made) != 2 || be.made[0].resets != 0 || be.made[0].closes != 1 {
		t.Fatalf("%d boxes made; the first reset %d times, closed %d", len(be.made), be.made[0].resets, be.made[0].closes)
	}
	if st := p.Stats(); st != (sandbox.PoolStats{Opened: 2}) {
		t.Fatalf("stats %+v", st)
	}
}

// A backend whose box finds no room has the pool destroy the box idle the
// longest, one a time, and is told when there is none; the others stay
// idle and are reused.
func TestPoolGivesItsIdleBoxesRoomOneAtATime(t *testing.T) {
	ctx := context.Background()
	be := &stubBackend{}
	p := sandbox.NewPool(be)
	defer p.Close(ctx)
	spec := func(name string) sandbox.Spec { return sandbox.Spec{Program: sandbox.Program{Name: name, Entry: name}} }
	for _, name := range []string{"a", "b"} {
		bx, err := p.Open(ctx, spec(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := bx.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	be.makeRoom = true
	if _, err := p.Open(ctx, spec("c")); err != nil {
		t.Fatal(err)
	}
	a, b := be.made[0], be.made[1]
	if len(be.madeRoom) != 1 || !be.madeRoom[0] || a.closes != 1 || b.closes != 0 {
		t.Fatalf("room asked for beside two idle boxes: told %v; the one idle longest closed %d times, the other %d; want [true], 1, 0", be.madeRoom, a.closes, b.closes)
	}
	if _, err := p.Open(ctx, spec("b")); err != nil {
		t.Fatal(err)
	}
	if len(be.made) != 3 || p.Stats().Reused != 1 {
		t.Fatalf("the box left idle was not reused: %d made, stats %+v", len(be.made), p.Stats())
	}
	if _, err := p.Open(ctx, spec("d")); err != nil {
		t.Fatal(err)
	}
	if len(be.madeRoom) != 2 || be.madeRoom[1] {
		t.Fatalf("room asked for with no box idle: told %v, want [true false]", be.madeRoom)
	}
}
