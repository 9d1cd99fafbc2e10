package services

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/runner"
)

// FinalRunner plays the final in a server that runs the event, one run at
// a time, in the background, until the server's context ends.
type FinalRunner struct {
	ctx  context.Context
	base Final
	st   *event.Store
	log  *slog.Logger
	mu   sync.Mutex
	busy bool
	wg   sync.WaitGroup
}

// NewFinalRunner plays the finals of st as base describes them (NewFinal),
// until ctx ends.
func NewFinalRunner(ctx context.Context, st *event.Store, base Final, log *slog.Logger) *FinalRunner {
	if log == nil {
		log = slog.Default()
	}
	return &FinalRunner{ctx: ctx, st: st, base: base, log: log}
}

// Start checks everything the final needs (refusing with the reason, and
// closing nothing, when it cannot start), then plays it with run's options
// in the background (its seed is the one the final's directory holds when
// it resumes).
func (f *FinalRunner) Start(run event.FinalRun) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy {
		return &event.RefusedError{Msg: "the final is already playing"}
	}
	ctx := f.ctx
	seed, err := runner.SeedFor(ctx, filepath.Join(f.st.Dir, event.FinalDir), nil)
	if err != nil {
		return err
	}
	o := f.base
	o.Shape, o.Concurrency, o.MaxAttempts, o.Seed = run.Shape, run.Concurrency, max(run.MaxAttempts, 1), seed
	plan, err := PrepareFinal(ctx, f.st, o)
	if err != nil {
		return err
	}
	// Begun before the answer: the organizer's next page shows it playing.
	if err := plan.Begin(ctx); err != nil {
		return err
	}
	f.busy = true
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		sum, err := plan.Play(ctx)
		f.mu.Lock()
		f.busy = false
		f.mu.Unlock()
		switch {
		case ctx.Err() != nil:
			f.log.Info("the final stops; the next start resumes it")
		case err != nil && !errors.Is(err, context.Canceled):
			f.log.Error("the final", "err", err)
		default:
			f.log.Info("the final is over", "games", sum.Done, "unplayed", sum.Unplayed)
		}
	}()
	return nil
}

// Wait returns once the final under way, if any, has stopped.
func (f *FinalRunner) Wait() { f.wg.Wait() }
