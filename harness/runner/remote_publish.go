package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/tournament"
)

// upload puts every bot in the queue's store and the coordinator's facts
// (the game, arena's version, the sandbox) beside them.
func (r *remoteRun) upload(ctx context.Context) error {
	r.objects = make([]string, len(r.Bots))
	for i, b := range r.Bots {
		data, err := botData(b)
		if err != nil {
			return err
		}
		r.objects[i] = botObject(data)
		if err := r.q.Put(ctx, r.objects[i], data); err != nil {
			return fmt.Errorf("upload bot %s: %w", b.Name, err)
		}
	}
	facts, err := FactsOf(ctx, r.Config.Game, r.ArenaVersion, r.Backend)
	if err != nil {
		return err
	}
	data, err := json.Marshal(facts)
	if err != nil {
		return err
	}
	r.facts = facts
	return r.q.SetFacts(ctx, data)
}

// publish claims every pending game and publishes it as a job; once none
// is pending and none in flight, it pairs the next round, if any.
func (r *remoteRun) publish(ctx context.Context) error {
	wctx := context.WithoutCancel(ctx)
	for {
		r.mu.Lock()
		g, ok, err := r.st.Claim(wctx, func(rec tournament.Record) string { return gameDir(rec, r.Config.Bots) })
		r.mu.Unlock()
		if err != nil {
			return err
		}
		if !ok {
			if len(r.inflight) > 0 {
				return nil // a Swiss round is paired once its games are in
			}
			r.mu.Lock()
			added, _, err := r.nextRound(wctx)
			r.mu.Unlock()
			if err != nil || !added {
				return err
			}
			continue
		}
		if err := keepAside(filepath.Join(r.Dir, g.Dir), fmt.Sprintf(".attempt-%d", g.Tries)); err != nil {
			return fmt.Errorf("game %d: an earlier attempt: %w", g.ID, err)
		}
		cfg := r.MatchConfig(g, r.q.Tournament(), "")
		cfg.Job.Game += r.JobOffset
		sp, err := json.Marshal(specOf(cfg, r.objects[g.White], r.objects[g.Black]))
		if err != nil {
			return err
		}
		job := distrib.Job{Game: cfg.Job.Game, Attempt: cfg.Job.Attempt, Spec: sp, Deadline: r.x.deadline(cfg)}
		if g.AbortReason != "" {
			// An earlier attempt failed on a host: not at once again.
			job.NotBefore = time.Now().Add(retryDelay(g.Attempts))
		}
		r.x.add(r.rt, job.Game)
		if _, err := r.q.Publish(ctx, job); err != nil {
			return err
		}
		r.inflight[job.Game] = published{g, cfg}
	}
}
