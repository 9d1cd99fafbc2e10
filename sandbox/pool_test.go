package sandbox_test

import (
	"context"
	"errors"
	"testing"

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
	a.Close(ctx)

	b, err := p.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if b.GameDir() != dir {
		t.Fatalf("a new box was made instead of reusing the idle one")
	}
	// The next match's first turn starts clean: the data file is gone.
	turn.Clean = true
	if r, err := b.Run(ctx, turn); err != nil || string(r.Answer.Data) != "wrote" {
		t.Fatalf("the last match's data file survived: %q %v", r.Answer.Data, err)
	}
	c, _ := p.Open(ctx, spec) // b is busy: a second box
	if c.GameDir() == dir {
		t.Fatal("a busy box was handed out twice")
	}
	b.Close(ctx)
	c.Close(ctx)
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
