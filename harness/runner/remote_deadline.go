package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/internal/words"
)

// handedOut is told each game a worker takes, and each handed back to the
// queue: a game's deadline runs from its hand-out, and stops when it is
// back in the queue.
func (r *remoteRun) handedOut(p distrib.Playing) {
	r.held.Lock()
	if p.Returned {
		if h, ok := r.holders[p.Game]; ok && h.Worker == p.Worker && h.Attempt == p.Attempt {
			delete(r.holders, p.Game)
		}
	} else {
		r.holders[p.Game] = handout{p, time.Now()}
	}
	r.held.Unlock()
	if p.Returned {
		return
	}
	if a, ok := r.Progress.(Assignments); ok {
		a.Playing(p.Game-r.JobOffset, p.Worker)
	}
}

// expire aborts each game whose holder let its deadline pass (charged to
// the holder, suspended after maxOverdue), plays again the games of
// workers suspended since, and says when games wait for a worker.
func (r *remoteRun) expire(ctx context.Context, now time.Time) error {
	handed := 0
	for game, p := range r.inflight {
		if _, ok := r.checking[game]; ok {
			continue // its result is in, and being checked here
		}
		r.held.Lock()
		h, ok := r.holders[game]
		r.held.Unlock()
		if !ok || h.Attempt != p.cfg.Job.Attempt {
			continue // in the queue: no deadline runs until a worker takes it
		}
		handed++
		if now.Before(h.at.Add(r.x.deadline(p.cfg))) {
			continue
		}
		holder := h.Worker
		reason := fmt.Sprintf("no result within its deadline (%v from when it was handed out to worker %s)", r.x.deadline(p.cfg).Round(time.Second), holder)
		slog.Warn("tournament: game "+strconv.Itoa(game)+": "+reason, "worker", holder)
		delete(r.inflight, game)
		r.x.remove(r.rt, game)
		r.q.Withdraw(game, p.cfg.Job.Attempt)
		g := p.rec
		g.Worker = holder
		if err := r.abortAttempt(context.WithoutCancel(ctx), g, reason); err != nil {
			return err
		}
		r.x.judged(Judgement{Worker: holder, Game: game, Outcome: Overdue})
		if r.overdue[holder]++; r.overdue[holder] >= maxOverdue {
			if err := r.suspend(r.x, roster.Suspension{Worker: holder, At: now.UTC(), Game: game,
				Reason: fmt.Sprintf("%d games it took passed their deadlines without a result", r.overdue[holder])}); err != nil {
				return err
			}
		}
	}
	if err := r.void(ctx); err != nil {
		return err
	}
	if handed == 0 && len(r.inflight) > len(r.checking) && now.Sub(r.waitSaid) >= waitSaidEvery {
		// Nothing aborts a game for want of a worker: the run says so
		// and waits.
		r.waitSaid = now
		queued := len(r.inflight) - len(r.checking)
		if w, ok := r.Progress.(WorkerWaiter); ok {
			w.WaitingForWorkers(queued)
		} else {
			slog.Info(fmt.Sprintf("tournament: waiting for a worker: %s queued, none handed out; each game's deadline runs from its hand-out", words.Plural(queued, "game")))
		}
	}
	return r.publish(ctx)
}
