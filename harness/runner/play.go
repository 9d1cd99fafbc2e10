package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox"
)

// run is one run of a tournament under way: its Options (which it reads,
// never changes, but for the pooled backend) and the state that lives as
// long as the run does.
type run struct {
	*Options
	st *tournament.Store
	// mu orders the store's claims and rounds, and the progress line.
	mu sync.Mutex
	// warns are this run's warnings (see Summary.Warnings).
	warns warnings
	// enough is set once Settled has said enough.
	enough atomic.Bool
	// leader is the progress line's leader and when it was computed: it
	// is computed again at most every leaderEvery (a final of thousands
	// of games would otherwise read them all after each one).
	leader   string
	leaderAt time.Time
	// settled is closed (and made anew, under mu) each time a game ends:
	// a worker waiting for a round's last games to pair the next wakes.
	settled chan struct{}
}

// playAll plays every game left, here or by workers, then writes the
// reports.
func (rn *run) playAll(ctx context.Context, start time.Time) (*tournament.Summary, error) {
	// Reuse each bot's sandbox from one game to its next: creating containers is
	// most of what a short game costs.
	pool := sandbox.NewPool(rn.Backend)
	rn.Backend = pool

	if rn.Remote != nil {
		err := rn.playRemote(ctx)
		if rn.Progress != nil {
			rn.Progress.Finish()
		}
		rn.closePool(ctx, pool)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		return rn.summary(ctx, start)
	}
	rn.settled = make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Bool // a worker failed: claim no more games
	errs := make(chan error, rn.Concurrency)
	for w := 0; w < rn.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && !failed.Load() && !rn.enough.Load() {
				// No game starts that the disk may not hold: a game that
				// fails mid-write is lost time, and its partial record
				// proves nothing.
				if err := rn.waitForSpace(ctx); err != nil {
					if ctx.Err() == nil {
						failed.Store(true)
						errs <- err
					}
					return
				}
				// The claim is not cancelled half-way: a stop is seen by the
				// loop, or by the game, which then releases the claim.
				rn.mu.Lock()
				next, ok, err := rn.st.Claim(context.WithoutCancel(ctx), func(r tournament.Record) string { return gameDir(r, rn.Config.Bots) })
				rn.mu.Unlock()
				if err != nil {
					failed.Store(true)
					errs <- err
					return
				}
				if !ok {
					// A Swiss round is paired once every game of the
					// rounds before it is finished.
					rn.mu.Lock()
					added, wait, err := rn.nextRound(context.WithoutCancel(ctx))
					settled := rn.settled
					rn.mu.Unlock()
					if err != nil {
						failed.Store(true)
						errs <- err
						return
					}
					if added {
						continue
					}
					if wait {
						// Woken as a game of the round ends: the next round
						// is paired at once, not at the next poll.
						t := time.NewTimer(time.Second)
						select {
						case <-ctx.Done():
						case <-settled:
						case <-t.C:
						}
						t.Stop()
						continue
					}
					return
				}
				err = rn.play(ctx, next)
				rn.mu.Lock()
				close(rn.settled)
				rn.settled = make(chan struct{})
				rn.mu.Unlock()
				if err != nil {
					failed.Store(true)
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if rn.Progress != nil {
		rn.Progress.Finish()
	}
	rn.closePool(ctx, pool)
	var failures []error
	for err := range errs {
		// Only a stop asked for by the operator may end a game in an error
		// that is not a failure.
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue
		}
		failures = append(failures, err)
	}
	if len(failures) > 0 {
		return nil, errors.Join(failures...)
	}
	return rn.summary(ctx, start)
}

// closePool destroys the run's idle sandboxes. One that is not destroyed is
// swept at the next start (it carries the ownership label): warned about,
// not fatal.
func (rn *run) closePool(ctx context.Context, pool *sandbox.Pool) {
	if err := pool.Close(context.WithoutCancel(ctx)); err != nil {
		rn.warn("destroy idle sandboxes", err)
	}
}

// warnings collects the failures that cost nothing the tournament proves (a
// viewer page, the progress line), so that they are reported, not dropped.
type warnings struct {
	mu   sync.Mutex
	list []string
}

// warn logs a cosmetic failure and counts it for the summary.
func (rn *run) warn(what string, err error) {
	slog.Warn("tournament: "+what, "err", err)
	rn.warns.mu.Lock()
	defer rn.warns.mu.Unlock()
	rn.warns.list = append(rn.warns.list, what+": "+err.Error())
}

// nextRound pairs an adaptive format's next round (a bracket's level
// matches first get their deciders), or a playoff once the format's games
// are over, and adds its games, once every game of the rounds so far is
// finished (wait: some still play) and while there are rounds left. The
// pairing is a pure function of the results, so a resumed tournament
// pairs as the first run would have.
func (rn *run) nextRound(ctx context.Context) (added, wait bool, err error) {
	recs, err := rn.st.Games(ctx)
	if err != nil {
		return false, false, err
	}
	for _, r := range recs {
		if r.Status == tournament.Pending || r.Status == tournament.Running {
			return false, true, nil
		}
	}
	games := rn.Config.Next(recs)
	if len(games) == 0 {
		return false, false, nil
	}
	if err := rn.st.AddGames(ctx, games); err != nil {
		return false, false, fmt.Errorf("pair round %d: %w", games[0].Round, err)
	}
	slog.Info("tournament: a round is paired", "format", rn.Config.Format, "round", games[0].Round, "playoff", games[0].Playoff, "games", len(games))
	if p, ok := rn.Progress.(Pairer); ok {
		p.Paired(games)
	}
	return true, false, nil
}

// summary writes the reports and says how the run went.
func (rn *run) summary(ctx context.Context, start time.Time) (*tournament.Summary, error) {
	sum, err := tournament.Report(context.WithoutCancel(ctx), rn.Dir)
	if err != nil {
		return nil, err
	}
	sum.Wall = time.Since(start)
	sum.Interrupted = ctx.Err() != nil
	rn.warns.mu.Lock()
	sum.Warnings = append([]string(nil), rn.warns.list...)
	rn.warns.mu.Unlock()
	return sum, nil
}

// play runs one claimed game and records it.
func (rn *run) play(ctx context.Context, g tournament.Record) error {
	claimed := time.Now()
	rel := g.Dir
	dir := filepath.Join(rn.Dir, rel)
	// An earlier attempt aborted by the host: keep it as evidence. The new
	// attempt cannot be played in its place, so a failure stops the run.
	if err := keepAside(dir, fmt.Sprintf(".attempt-%d", g.Tries)); err != nil {
		return fmt.Errorf("game %d: an earlier attempt: %w", g.ID, err)
	}
	cfg := rn.MatchConfig(g, "", dir)
	if rn.Watch != nil {
		cfg.Observer = rn.Watch(g)
	}
	res, err := match.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("game %d: %w", g.ID, err)
	}
	return rn.settle(ctx, g, res, claimed)
}

// settle records a game from its match directory, played here or by a
// worker: a result only once its evidence reads back; an aborted attempt as
// a host fault (retried, then unplayed); a game stopped by the operator
// released without counting an attempt. claimed is when this machine
// claimed the game it played (zero: a worker played it).
func (rn *run) settle(ctx context.Context, g tournament.Record, res transcript.Result, claimed time.Time) error {
	rel := g.Dir
	dir := filepath.Join(rn.Dir, rel)
	wctx := context.WithoutCancel(ctx)
	if res.Reason == transcript.ReasonAborted {
		if ctx.Err() != nil {
			// The operator stopped the tournament: not the game's fault, not an
			// attempt. Its half is evidence of nothing; if it cannot be removed,
			// the next run keeps it aside like an attempt, so that costs disk
			// space only.
			if err := os.RemoveAll(dir); err != nil {
				rn.warn(fmt.Sprintf("game %d: remove the stopped game", g.ID), err)
			}
			return rn.st.Release(wctx, g.ID)
		}
		// The aborted attempt is the evidence of why the game is retried or
		// unplayed.
		if _, err := evidence(dir, res); err != nil {
			return fmt.Errorf("game %d (aborted: %s): %w", g.ID, res.AbortReason, err)
		}
		return rn.abortAttempt(wctx, g, res.AbortReason)
	}
	// A result is stored only once its evidence reads back.
	times, err := evidence(dir, res)
	if err != nil {
		return fmt.Errorf("game %d: %w", g.ID, err)
	}
	// The viewer page is a convenience: the transcript is the evidence, and
	// arena view makes the page from it at any time. A failure is warned
	// about and counted.
	if !rn.NoViews {
		if err := writeView(dir); err != nil {
			rn.warn(fmt.Sprintf("game %d: the viewer page %s", g.ID, filepath.Join(rel, tournament.ViewHTML)), err)
		}
	}
	if !claimed.IsZero() {
		times.SlotMs = float64(time.Since(claimed).Microseconds()) / 1000
	}
	if err := rn.st.Finish(wctx, g.ID, res, rel, times, g.Worker); err != nil {
		return fmt.Errorf("game %d: store the result: %w", g.ID, err)
	}
	g.Status, g.Winner, g.Reason, g.Plies, g.SlotMs = tournament.Done, res.Winner, res.Reason, res.Plies, times.SlotMs
	rn.report(g)
	return nil
}

// abortAttempt counts an attempt the host (g.Worker, or this machine)
// could not play: the game is played again, or reported unplayed after
// MaxAttempts charged to it (a host that aborts it again is charged once).
func (rn *run) abortAttempt(ctx context.Context, g tournament.Record, reason string) error {
	status, err := rn.st.Abort(ctx, g.ID, reason, rn.MaxAttempts, g.Worker)
	if err != nil {
		return err
	}
	rn.Metrics.Aborted()
	g.Status, g.AbortReason = status, reason
	if status == tournament.Unplayed {
		rn.report(g)
	}
	return nil
}

func (rn *run) report(g tournament.Record) {
	rn.observe(g)
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.Settled != nil && rn.Settled(g) {
		rn.enough.Store(true)
	}
	if rn.Progress == nil {
		return
	}
	if time.Since(rn.leaderAt) >= leaderEvery {
		if recs, err := rn.st.Games(context.Background()); err != nil {
			// Only the progress line's leader rests on this read; the result is
			// stored, and a store that cannot be read fails the run elsewhere.
			rn.warn("progress: read the games for the leader", err)
		} else {
			rows := rn.Config.Standings(recs, recs)
			if len(rows) > 0 {
				rn.leader = fmt.Sprintf("%s %g pts", rows[0].Name, rows[0].Points)
			}
			rn.leaderAt = time.Now()
		}
	}
	rn.Progress.GameDone(g, rn.Config.Bots[g.White].Name, rn.Config.Bots[g.Black].Name, rn.leader)
}
