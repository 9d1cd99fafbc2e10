package services

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/rules"
)

// Validator validates queued submissions, Workers at a time, through the
// validate pipeline: the same checks and matches arena validate runs.
type Validator struct {
	Store *event.Store
	// Options are the event's validation options, equipped
	// (validate.Equip); Dir, Seed and Progress are set per submission.
	Options validate.Options
	Workers int
	// KeepFiles keeps each validation's unpacked files ([validation]
	// keep_files); else they go once the report is written.
	KeepFiles bool
	// Changed is told every change of a submission's state.
	Changed func(event.Submission)
	Log     *slog.Logger

	wake chan struct{}
	once sync.Once
}

func (v *Validator) init() {
	v.once.Do(func() { v.wake = make(chan struct{}, 1) })
}

// Wake tells the validator that a submission was queued.
func (v *Validator) Wake() {
	v.init()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// Run validates until ctx ends. Validations a stopped server left under way
// are queued again first. A validation cut short by ctx is queued again.
func (v *Validator) Run(ctx context.Context) error {
	v.init()
	n, err := v.Store.Requeue(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		v.Log.Info("validations interrupted by the last stop are queued again", "count", n)
	}
	var wg sync.WaitGroup
	errs := make(chan error, v.Workers)
	for range max(v.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := v.work(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return errors.Join(collect(errs)...)
}

func collect(c chan error) []error {
	var out []error
	for err := range c {
		out = append(out, err)
	}
	return out
}

// work claims and validates submissions until ctx ends. Errors of the store
// end it: a result that cannot be written must not be dropped.
func (v *Validator) work(ctx context.Context) error {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		sub, err := v.Store.Claim(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, event.ErrNotFound):
			select {
			case <-ctx.Done():
				return nil
			case <-v.wake:
			case <-tick.C:
			}
			continue
		case err != nil:
			return fmt.Errorf("claim a submission to validate: %w", err)
		}
		v.changed(ctx, sub.ID)
		if err := v.validate(ctx, sub); err != nil {
			return err
		}
	}
}

func (v *Validator) changed(ctx context.Context, id int64) {
	if v.Changed == nil {
		return
	}
	if sub, err := v.Store.Submission(ctx, id); err == nil {
		v.Changed(sub)
	}
}

// validate runs one submission's validation and records its outcome.
func (v *Validator) validate(ctx context.Context, sub event.Submission) error {
	start := time.Now()
	dir := v.Store.ValidationDir(sub.ID)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := v.Store.ForgetValidationGames(ctx, sub.ID); err != nil {
		return err
	}
	o := v.Options
	o.Dir, o.Seed, o.Label = dir, 1, SubmissionLabel(sub.ID)
	setState := func(state api.State) {
		if err := v.Store.SetState(ctx, sub.ID, state, ""); err != nil {
			v.Log.Warn("record a validation's progress", "submission", sub.ID, "err", err)
			return
		}
		v.changed(ctx, sub.ID)
	}
	o.Progress = func(stage string) {
		if stage == validate.StageRunning {
			setState(event.Validating)
		} else {
			setState(event.Building)
		}
	}
	rep, err := validate.Validate(ctx, v.Store.Path(sub), o)
	if ctx.Err() != nil {
		// Stopped: the next start validates it again (Requeue).
		return nil
	}
	state, summary, cannotPlay := event.Passed, "", ""
	switch {
	case err != nil:
		state, summary = event.Errored, "the validation could not finish: "+err.Error()
		v.Log.Error("validation", "submission", sub.ID, "err", err)
	default:
		// The report names the upload as the team named it, not where the
		// server keeps it.
		rep.Path = sub.Filename
		if err := rep.Save(dir); err != nil {
			return fmt.Errorf("save the report of submission %d: %w", sub.ID, err)
		}
		if !v.KeepFiles {
			if err := os.RemoveAll(filepath.Join(dir, validate.FilesDir)); err != nil {
				v.Log.Warn("remove a validation's unpacked files", "submission", sub.ID, "err", err)
			}
		}
		if !rep.Pass {
			state, summary, cannotPlay = event.Failed, rep.Summary(), rep.CannotPlay()
		}
		if err := v.recordGames(ctx, sub, dir); err != nil {
			return err
		}
	}
	if err := v.Store.SetValidated(ctx, sub.ID, state, summary, cannotPlay); err != nil {
		return fmt.Errorf("record the validation of submission %d: %w", sub.ID, err)
	}
	v.Log.Info("validated", "submission", sub.ID, "team", sub.Team, "state", state, "took", time.Since(start).Round(time.Millisecond))
	v.changed(ctx, sub.ID)
	return nil
}

// recordGames records the full matches the validation played.
func (v *Validator) recordGames(ctx context.Context, sub event.Submission, dir string) error {
	for _, side := range []rules.Side{rules.White, rules.Black} {
		mdir := validate.MatchDir(dir, side)
		if _, err := os.Stat(filepath.Join(mdir, transcript.ResultFile)); err != nil {
			continue // not played: the bot never ran
		}
		me, rival := event.Side{Team: sub.Team, Submission: sub.ID}, event.Side{}
		white, black := me, rival
		if side == rules.Black {
			white, black = rival, me
		}
		if _, err := v.Store.AddGame(ctx, event.ValidationGame, mdir, white, black, 0); err != nil {
			return fmt.Errorf("record the match of submission %d as %s: %w", sub.ID, side, err)
		}
	}
	return nil
}
