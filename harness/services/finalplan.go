package services

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
)

// RunFinal plays the final (closing the event first if it is open): a
// round robin of the pinned submissions in DIR/final through the tournament
// runner, resumed if it was interrupted. Each game is recorded as the event's
// as it finishes (the teams' pages, the live standings and disputes read
// them); the run is recorded in final_run, so a server restarted while it
// plays resumes it. Everything the final needs is checked first
// (PrepareFinal): a final that cannot be played is refused with the
// reason before uploads are closed.
func RunFinal(ctx context.Context, s *event.Store, f Final) (*tournament.Summary, error) {
	plan, err := PrepareFinal(ctx, s, f)
	if err != nil {
		return nil, err
	}
	return plan.Play(ctx)
}

// FinalPlan is a final checked and ready to play: its uploads closed, its
// bots loaded (and built).
type FinalPlan struct {
	store   *event.Store
	f       Final
	entries []event.FinalEntry
	bots    []*submission.Bot
	cfg     tournament.Config
	begun   bool
}

// Begin records that the final starts (or resumes) now: a server shows it
// playing from then on, and resumes it after a stop. Play begins it if
// nobody did.
func (p *FinalPlan) Begin(ctx context.Context) error {
	if p.begun {
		return nil
	}
	run := event.FinalRun{Shape: p.f.Shape, Concurrency: p.f.Concurrency, MaxAttempts: p.f.MaxAttempts, Seed: p.f.Seed}
	if err := p.store.BeginFinal(ctx, run, p.entries); err != nil {
		return err
	}
	p.begun = true
	return nil
}

// Entries are the teams the final plays.
func (p *FinalPlan) Entries() []event.FinalEntry { return p.entries }

// PrepareFinal checks everything the final needs before anything that
// cannot be undone: at least two teams that play, each one's submission
// loaded and built, distinct bot names, a sandbox that answers, options the
// runner takes. Then it closes uploads (if they are open), pinning what it
// checked. A final that cannot start is a *RefusedError saying why; nothing
// is closed then.
func PrepareFinal(ctx context.Context, s *event.Store, f Final) (*FinalPlan, error) {
	f.Concurrency, f.MaxAttempts = max(f.Concurrency, 1), max(f.MaxAttempts, 1)
	refuse := func(format string, a ...any) (*FinalPlan, error) {
		return nil, &event.RefusedError{Msg: "the final cannot start: " + fmt.Sprintf(format, a...)}
	}
	look, err := s.FinalOutlook(ctx)
	if err != nil {
		return nil, err
	}
	seeded, err := s.FinalSeeds(ctx)
	if err != nil {
		return nil, err
	}
	if len(seeded) > 0 {
		// Resumed: the players and their order are the ones it started
		// with, stored then, whatever the ladder, the teams' names or
		// their state say now.
		look.Playing = seeded
	}
	if len(look.Playing) < 2 {
		var left []string
		for _, t := range look.Missing {
			left = append(left, t.Name)
		}
		why := "no other team has a submission that passed or was admitted"
		if len(left) > 0 {
			why = "without a submission that passed or was admitted: " + strings.Join(left, ", ")
		}
		return refuse("it needs at least 2 teams that play, and %d %s (%s)", len(look.Playing), map[bool]string{true: "does", false: "do"}[len(look.Playing) == 1], why)
	}
	if _, err := f.Backend.Describe(ctx); err != nil {
		return refuse("the sandbox does not answer (%v): start the engine, then try again", err)
	}
	load := func(entries []event.FinalEntry, have map[int64]*submission.Bot) ([]*submission.Bot, error) {
		var bots []*submission.Bot
		for _, e := range entries {
			if b := have[e.Submission]; b != nil {
				bots = append(bots, b)
				continue
			}
			b, err := LoadBot(ctx, s, e.Submission, f.Settings.Game, f.Builder, f.Intake, nil)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				return nil, &event.RefusedError{Msg: fmt.Sprintf("the final cannot start: %s's submission #%d cannot be played: %v", e.Name, e.Submission, err)}
			}
			bots = append(bots, b)
		}
		return bots, nil
	}
	bots, err := load(look.Playing, nil)
	if err != nil {
		return nil, err
	}
	plan := &FinalPlan{store: s, f: f, entries: look.Playing, bots: bots}
	if len(seeded) > 0 {
		if plan.cfg, err = plan.config(); err != nil {
			return refuse("%v", err)
		}
		return plan, nil
	}
	if err := plan.seedByLadder(ctx); err != nil {
		return nil, err
	}
	if plan.cfg, err = plan.config(); err != nil {
		return refuse("%v", err)
	}
	if look.Closed {
		return plan, nil
	}
	// Closing pins the active submissions as they are now: an upload that
	// passed since they were checked is loaded too.
	entries, err := s.CloseUploads(ctx)
	if err != nil {
		return nil, err
	}
	have := map[int64]*submission.Bot{}
	for i, e := range look.Playing {
		have[e.Submission] = bots[i]
	}
	if plan.bots, err = load(entries, have); err != nil {
		return nil, err
	}
	plan.entries = entries
	if err := plan.seedByLadder(ctx); err != nil {
		return nil, err
	}
	if plan.cfg, err = plan.config(); err != nil {
		return refuse("%v", err)
	}
	return plan, nil
}

// seedByLadder orders a knockout final's teams, or one of the ladder's top
// Top, by the ladder as it stood at the close (rated teams by their place,
// then the others by team): a bracket is seeded in that order, and the
// first Top play. The ladder stops at the close, so a resumed final seeds
// and picks as the first run did.
func (p *FinalPlan) seedByLadder(ctx context.Context) error {
	if cmp.Or(p.f.Format, tournament.RoundRobin) == tournament.RoundRobin && p.f.Top <= 0 {
		return nil
	}
	ladder, err := p.store.Ladder(ctx)
	if err != nil {
		return err
	}
	place := map[int64]int{}
	for _, st := range ladder {
		if st.Rank > 0 {
			place[st.Team] = st.Rank
		}
	}
	key := func(team int64) [2]int64 {
		if r, ok := place[team]; ok {
			return [2]int64{0, int64(r)}
		}
		return [2]int64{1, team}
	}
	idx := make([]int, len(p.entries))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := key(p.entries[idx[a]].Team), key(p.entries[idx[b]].Team)
		return ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1]
	})
	entries, bots := make([]event.FinalEntry, len(idx)), make([]*submission.Bot, len(idx))
	for i, j := range idx {
		entries[i], bots[i] = p.entries[j], p.bots[j]
	}
	if p.f.Top > 0 && p.f.Top < len(entries) {
		// The qualifying stage: the ladder's top Top play, the rest not.
		entries, bots = entries[:p.f.Top], bots[:p.f.Top]
	}
	p.entries, p.bots = entries, bots
	return nil
}

// config is the final's tournament, checked.
func (p *FinalPlan) config() (tournament.Config, error) {
	if err := p.f.Check(); err != nil {
		return tournament.Config{}, err
	}
	cfg := runner.NewConfig(p.bots, p.f.Settings, p.f.Backend, p.f.Image)
	// Every format but a round robin plays the teams in the ladder's
	// order: a bracket's seeds, a Swiss first round's halves.
	shape := p.f.Config(len(p.bots))
	cfg.Format, cfg.Rounds, cfg.Advance, cfg.Then, cfg.Budget, cfg.TieBreaks = shape.Format, shape.Rounds, shape.Advance, shape.Then, shape.Budget, shape.TieBreaks
	cfg.GamesPerPair, cfg.Seed, cfg.Playoff = p.f.GamesPerPair, p.f.Seed, shape.Playoff
	for i, e := range p.entries {
		cfg.Bots[i].Team = e.Name // arena standings names the team, its bot beside it
	}
	return cfg, cfg.Validate()
}

// Play plays the final planned.
func (p *FinalPlan) Play(ctx context.Context) (*tournament.Summary, error) {
	s, f := p.store, p.f
	if err := p.Begin(ctx); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.Dir, event.FinalDir)
	rec := &finalRecorder{store: s, dir: dir, sides: sides(p.entries), next: f.Progress}
	o := runner.Options{Dir: dir, Config: p.cfg, Bots: p.bots,
		Game: f.Settings.Game, Backend: f.Backend, Concurrency: f.Concurrency, MaxAttempts: f.MaxAttempts,
		ArenaVersion: f.ArenaVersion, Signer: f.Signer, Progress: rec, BlobStore: filepath.Join(s.Dir, event.EvidenceDir),
		Watch: f.Watch.watcher(event.FinalGame, rec.sides)}
	f.Workers.apply(&o, event.JobsFinal)
	sum, err := runner.Run(ctx, o)
	if ctx.Err() != nil {
		return sum, errors.Join(err, ctx.Err()) // not ended: resumed by the next run
	}
	// Games whose record a crash cut off between the tournament's store and
	// the event's are recorded now.
	err = errors.Join(err, rec.err, s.RecordFinalGames(context.WithoutCancel(ctx), dir, rec.sides))
	err = errors.Join(err, s.SyncFinalLog(context.WithoutCancel(ctx)))
	err = errors.Join(err, s.EndFinal(context.WithoutCancel(ctx), err))
	if err != nil {
		return sum, err
	}
	// Ended: the log says so, with the standings' hash.
	return sum, s.SyncFinalLog(context.WithoutCancel(ctx))
}

func sides(entries []event.FinalEntry) []event.Side {
	out := make([]event.Side, len(entries))
	for i, e := range entries {
		out[i] = event.Side{Team: e.Team, Submission: e.Submission}
	}
	return out
}

// finalRecorder records each game of the final as the event's when it
// finishes, then tells next.
type finalRecorder struct {
	store *event.Store
	dir   string
	sides []event.Side
	next  runner.Progress
	err   error // the first game that could not be recorded
}

func (r *finalRecorder) Start(total, done int) {
	if done > 0 {
		r.err = errors.Join(r.err, r.store.RecordFinalGames(context.Background(), r.dir, r.sides))
	}
	// Scheduled: the log commits to the final's configuration, players
	// and pairings before a game is played.
	r.err = errors.Join(r.err, r.store.SyncFinalLog(context.Background()))
	if r.next != nil {
		r.next.Start(total, done)
	}
}

func (r *finalRecorder) GameDone(g tournament.Record, white, black, leader string) {
	if g.Status == tournament.Done && g.Dir != "" {
		if _, err := r.store.AddGame(context.Background(), event.FinalGame, filepath.Join(r.dir, g.Dir), r.sides[g.White], r.sides[g.Black], g.SlotMs); err != nil && r.err == nil {
			r.err = fmt.Errorf("record game %d of the final: %w", g.ID, err)
		} else if err := r.store.SyncFinalLog(context.Background()); err != nil && r.err == nil {
			r.err = err
		}
	}
	if r.next != nil {
		r.next.GameDone(g, white, black, leader)
	}
}

// Paired logs a round as it is paired, before its games are played.
func (r *finalRecorder) Paired([]tournament.Game) {
	if err := r.store.SyncFinalLog(context.Background()); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *finalRecorder) Finish() {
	if r.next != nil {
		r.next.Finish()
	}
}
