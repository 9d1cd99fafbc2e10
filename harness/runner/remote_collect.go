package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
)

// accept judges a result a worker handed in: a result of a game not in
// flight (already taken, or of an earlier attempt) is dropped; one from a
// suspended worker, or that does not prove its game, is refused; one
// drawn for a check waits for it (chctx ends the checks); the rest count.
func (r *remoteRun) accept(ctx, chctx context.Context, res distrib.Result, archive io.Reader) error {
	p, ok := r.inflight[res.Game]
	g := p.rec
	if !ok || res.Attempt != p.cfg.Job.Attempt {
		slog.Info("tournament: a result already taken, or of an earlier attempt", "game", res.Game, "attempt", res.Attempt, "worker", res.Worker)
		return nil
	}
	// No result is unpacked that the disk may not hold; a stop while
	// waiting leaves it queued for the next run.
	if err := r.waitForSpace(ctx); err != nil {
		return err
	}
	var got transcript.Result
	var refused string
	lie := r.x.isSuspended(res.Worker)
	if lie {
		// Shut out since it took the game: nothing it hands in counts.
		refused = fmt.Sprintf("worker %s is suspended", res.Worker)
	} else {
		var err error
		if got, refused, lie, err = r.received(filepath.Join(r.Dir, g.Dir), p.cfg, r.facts, res, archive); err != nil {
			return err
		}
	}
	r.x.remove(r.rt, res.Game)
	if len(res.Machine) > 0 && !lie && refused == "" {
		if err := r.keepMachine(ctx, res); err != nil {
			return err
		}
	}
	if !lie && refused == "" && got.Reason != transcript.ReasonAborted && r.x.sample(res.Worker) {
		// Checked before it counts: the game stays in flight, its
		// hand-out over, while the coordinator plays it again.
		g.Worker = res.Worker
		r.checking[res.Game] = parked{g, got}
		r.startCheck(chctx, res.Game, p)
		return r.publish(ctx)
	}
	delete(r.inflight, res.Game)
	j := Judgement{Worker: res.Worker, Game: res.Game}
	var err error
	wctx := context.WithoutCancel(ctx)
	switch {
	case lie:
		// Charged to the worker, never to the game: the worker is shut
		// out, and the game goes back to the queue at once.
		reason, detail := roster.Why(refused)
		if err := r.suspend(r.x, roster.Suspension{Worker: res.Worker, At: time.Now().UTC(), Game: res.Game, Reason: reason, Detail: detail}); err != nil {
			return err
		}
		j.Outcome = Refused
		r.q.Refused()
		err = r.st.Reject(wctx, g.ID)
	case refused != "":
		g.Worker = res.Worker
		j.Outcome = HostFault
		err = r.abortAttempt(wctx, g, refused)
	default:
		g.Worker = res.Worker
		j.Outcome = Played
		if got.Reason == transcript.ReasonAborted {
			j.Outcome = HostFault
			if ctx.Err() != nil {
				j.Outcome = "" // stopped here: not the worker's doing
			}
		}
		err = r.settle(ctx, g, got, time.Time{})
	}
	if err != nil {
		return err
	}
	if r.x.Judged != nil && j.Outcome != "" {
		if j.Outcome == Played {
			rec, err := r.st.Game(wctx, g.ID)
			if err != nil {
				return err
			}
			j.TurnMs = rec.TurnMs
		}
		r.x.judged(j)
	}
	return r.publish(ctx)
}

// keepMachine keeps what a worker says of its machine: its word, shown as
// such; its sandbox is what its transcript records. A description that
// does not hold is dropped, never the result with it.
func (r *remoteRun) keepMachine(ctx context.Context, res distrib.Result) error {
	m, err := checkMachine(res.Machine)
	if err != nil {
		slog.Warn("tournament: what a worker says of its machine is not kept", "worker", res.Worker, "why", err)
		return nil
	}
	m.Sandbox = r.facts.Sandbox
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return r.st.SetMachine(context.WithoutCancel(ctx), res.Worker, data)
}

// startCheck plays the game of a result again here, at most as many at
// once as this machine plays games; its outcome comes on checked.
func (r *remoteRun) startCheck(chctx context.Context, game int, p published) {
	dir := filepath.Join(r.Dir, p.rec.Dir)
	r.checks.Add(1)
	go func() {
		defer r.checks.Done()
		select {
		case r.checkSlots <- struct{}{}:
		case <-chctx.Done():
			return
		}
		out := r.checkGame(chctx, p.cfg, dir)
		<-r.checkSlots
		out.game = game
		select {
		case r.checked <- out:
		case <-chctx.Done():
		}
	}()
}

// conclude counts or refuses a result once its check is done.
func (r *remoteRun) conclude(ctx context.Context, c checkOutcome) error {
	pk, ok := r.checking[c.game]
	if !ok {
		return nil
	}
	delete(r.checking, c.game)
	delete(r.inflight, c.game)
	g, wctx := pk.rec, context.WithoutCancel(ctx)
	dir := filepath.Join(r.Dir, g.Dir)
	j := Judgement{Worker: g.Worker, Game: c.game}
	switch c.verdict {
	case checkLie:
		slog.Warn("tournament: game "+strconv.Itoa(c.game)+": a worker's result is refused by the coordinator's check", "worker", g.Worker, "why", c.why)
		aside, err := setAside(dir, g.Worker)
		if err == nil {
			err = keepChecks(dir, aside)
		}
		if err != nil {
			return err
		}
		if err := r.suspend(r.x, roster.Suspension{Worker: g.Worker, At: time.Now().UTC(), Game: c.game,
			Reason: "its game is not the one the programs it was sent play", Detail: c.why}); err != nil {
			return err
		}
		j.Outcome = Refused
		if err := r.st.Reject(wctx, g.ID); err != nil {
			return err
		}
		if err := r.void(ctx); err != nil {
			return err
		}
	default:
		if c.verdict == checkUnsure {
			r.warn(fmt.Sprintf("game %d: the check of worker %s's result proves nothing; it counts unchecked", c.game, g.Worker), errors.New(c.why))
		}
		if err := r.settle(ctx, g, pk.res, time.Time{}); err != nil {
			return err
		}
		if c.verdict == checkAgrees {
			if err := r.st.MarkChecked(wctx, g.ID); err != nil {
				return err
			}
		}
		j.Outcome = Played
		if r.x.Judged != nil {
			rec, err := r.st.Game(wctx, g.ID)
			if err != nil {
				return err
			}
			j.TurnMs = rec.TurnMs
		}
	}
	r.x.judged(j)
	return r.publish(ctx)
}

// void plays again the games a suspended worker had counted unchecked:
// shut out for a lie, it may have lied in any of them.
func (r *remoteRun) void(ctx context.Context) error {
	wctx := context.WithoutCancel(ctx)
	workers, err := r.st.UncheckedWorkers(wctx)
	if err != nil {
		return err
	}
	for _, w := range workers {
		if !r.x.isSuspended(w) {
			continue
		}
		r.mu.Lock()
		ids, err := r.st.VoidUnchecked(wctx, w)
		r.mu.Unlock()
		if err != nil {
			return err
		}
		slog.Warn(fmt.Sprintf("tournament: %s worker %s counted unchecked are played again: it is suspended", words.Plural(len(ids), "game"), w), "games", ids)
	}
	return nil
}
