package event

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/sandbox"
)

// FinalDir is the final's tournament directory inside the event directory:
// arena standings, the report, replay and resume work on it as on any.
const FinalDir = "final"

// FinalEntry is a team's submission pinned for the final.
type FinalEntry struct {
	Team       int64  `json:"team"`
	Name       string `json:"name"`
	Submission int64  `json:"submission"`
	SHA256     string `json:"sha256"`
}

// Closed says whether (and when) uploads were closed for the final.
func (s *Store) Closed(ctx context.Context) (time.Time, bool, error) {
	var at string
	err := s.readRow(ctx, `SELECT closed FROM closing WHERE id = 1`).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return parseTime(at), err == nil, err
}

// CloseUploads stops uploads and pins every enabled team's active submission for
// the final, in one transaction. Closing again changes nothing and returns
// the entries pinned the first time.
func (s *Store) CloseUploads(ctx context.Context) ([]FinalEntry, error) {
	if _, closed, err := s.Closed(ctx); err != nil || closed {
		if err != nil {
			return nil, err
		}
		return s.FinalEntries(ctx)
	}
	playing, err := s.activeTeams(ctx)
	if err != nil {
		return nil, err
	}
	var pin []FinalEntry
	for _, ts := range playing {
		pin = append(pin, FinalEntry{Team: ts.team.ID, Name: ts.team.Name, Submission: ts.sub.ID, SHA256: ts.sub.SHA256})
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO closing (id, closed) VALUES (1, ?)`, now()); err != nil {
		return nil, err
	}
	for _, e := range pin {
		if _, err := tx.ExecContext(ctx, `INSERT INTO final_entries (team_id, submission, sha256) VALUES (?, ?, ?)`, e.Team, e.Submission, e.SHA256); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return s.FinalEntries(ctx)
}

// FinalEntries are the submissions pinned for the final, by team name.
func (s *Store) FinalEntries(ctx context.Context) ([]FinalEntry, error) {
	rows, err := s.read(ctx, `SELECT f.team_id, t.name, f.submission, f.sha256 FROM final_entries f JOIN teams t ON t.id = f.team_id ORDER BY t.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FinalEntry
	for rows.Next() {
		var e FinalEntry
		if err := rows.Scan(&e.Team, &e.Name, &e.Submission, &e.SHA256); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Final is how the final is played: the options of arena tournament.
type Final struct {
	Settings     match.Resolved
	Backend      sandbox.Backend
	Image        string
	Builder      *build.Builder
	Intake       submission.Limits
	GamesPerPair int
	Seed         uint64
	Concurrency  int
	MaxAttempts  int
	ArenaVersion string
	Signer       ed25519.PrivateKey
	Progress     tournament.Progress
	// Workers, when set, play the games instead of this machine.
	Workers *Workers
}

// FinalGame is a game of the final.
const FinalGame = "final"

// FinalRun is how the final was started, and how it ended.
type FinalRun struct {
	GamesPerPair int       `json:"gamesPerPair"`
	Concurrency  int       `json:"concurrency"`
	MaxAttempts  int       `json:"maxAttempts"`
	Seed         uint64    `json:"seed"`
	Started      time.Time `json:"started"`
	// Finished is zero while the final plays, or was stopped before its
	// end (the next run resumes it).
	Finished time.Time `json:"finished,omitzero"`
	// Error says why the last run failed ("" if it did not).
	Error string `json:"error,omitempty"`
}

// Running says whether the final was started and has not ended: a server
// that starts then resumes it.
func (r FinalRun) Running() bool { return !r.Started.IsZero() && r.Finished.IsZero() }

// FinalRun is the final's last run; ok is false before it was started.
func (s *Store) FinalRun(ctx context.Context) (r FinalRun, ok bool, err error) {
	var seed int64
	var started, finished string
	err = s.readRow(ctx, `SELECT games_per_pair, concurrency, max_attempts, seed, started, finished, error FROM final_run WHERE id = 1`).
		Scan(&r.GamesPerPair, &r.Concurrency, &r.MaxAttempts, &seed, &started, &finished, &r.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	r.Seed, r.Started, r.Finished = uint64(seed), parseTime(started), parseTime(finished)
	return r, true, nil
}

func (s *Store) beginFinal(ctx context.Context, f Final) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO final_run (id, games_per_pair, concurrency, max_attempts, seed, started)
		VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET games_per_pair = excluded.games_per_pair,
		concurrency = excluded.concurrency, max_attempts = excluded.max_attempts, seed = excluded.seed,
		started = excluded.started, finished = '', error = ''`, f.GamesPerPair, f.Concurrency, f.MaxAttempts, int64(f.Seed), now())
	return err
}

func (s *Store) endFinal(ctx context.Context, runErr error) error {
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	_, err := s.w.ExecContext(ctx, `UPDATE final_run SET finished = ?, error = ? WHERE id = 1`, now(), msg)
	return err
}

// RunFinal plays the final (closing the event first if it is open): a
// round robin of the pinned submissions in DIR/final through the tournament
// runner, resumed if it was interrupted. Each game is recorded as the event's
// as it finishes (the teams' pages, the live standings and disputes read
// them); the run is recorded in final_run, so a server restarted while it
// plays resumes it.
func (s *Store) RunFinal(ctx context.Context, f Final) (*tournament.Summary, error) {
	entries, err := s.CloseUploads(ctx)
	if err != nil {
		return nil, err
	}
	if len(entries) < 2 {
		return nil, fmt.Errorf("the final needs at least 2 teams with a passed submission, got %d", len(entries))
	}
	f.Concurrency, f.MaxAttempts = max(f.Concurrency, 1), max(f.MaxAttempts, 1)
	var bots []*submission.Bot
	for _, e := range entries {
		b, err := s.LoadBot(ctx, e.Submission, f.Settings.Game, f.Builder, f.Intake, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		bots = append(bots, b)
	}
	cfg := tournament.NewConfig(bots, f.Settings, f.Backend, f.Image)
	cfg.GamesPerPair, cfg.Seed = f.GamesPerPair, f.Seed
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := s.beginFinal(ctx, f); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.Dir, FinalDir)
	rec := &finalRecorder{store: s, dir: dir, sides: sides(entries), next: f.Progress}
	o := tournament.Options{Dir: dir, Config: cfg, Bots: bots,
		Game: f.Settings.Game, Backend: f.Backend, Concurrency: f.Concurrency, MaxAttempts: f.MaxAttempts,
		ArenaVersion: f.ArenaVersion, Signer: f.Signer, Progress: rec}
	f.Workers.apply(&o, jobsFinal)
	sum, err := tournament.Run(ctx, o)
	if ctx.Err() != nil {
		return sum, errors.Join(err, ctx.Err()) // not ended: resumed by the next run
	}
	// Games whose record a crash cut off between the tournament's store and
	// the event's are recorded now.
	err = errors.Join(err, rec.err, s.recordFinalGames(context.WithoutCancel(ctx), dir, rec.sides))
	return sum, errors.Join(err, s.endFinal(context.WithoutCancel(ctx), err))
}

func sides(entries []FinalEntry) []Side {
	out := make([]Side, len(entries))
	for i, e := range entries {
		out[i] = Side{Team: e.Team, Submission: e.Submission}
	}
	return out
}

// finalRecorder records each game of the final as the event's when it
// finishes, then tells next.
type finalRecorder struct {
	store *Store
	dir   string
	sides []Side
	next  tournament.Progress
	err   error // the first game that could not be recorded
}

func (r *finalRecorder) Start(total, done int) {
	if done > 0 {
		r.err = errors.Join(r.err, r.store.recordFinalGames(context.Background(), r.dir, r.sides))
	}
	if r.next != nil {
		r.next.Start(total, done)
	}
}

func (r *finalRecorder) GameDone(g tournament.Record, white, black, leader string) {
	if g.Status == tournament.Done && g.Dir != "" {
		if _, err := r.store.AddGame(context.Background(), FinalGame, filepath.Join(r.dir, g.Dir), r.sides[g.White], r.sides[g.Black]); err != nil && r.err == nil {
			r.err = fmt.Errorf("record game %d of the final: %w", g.ID, err)
		}
	}
	if r.next != nil {
		r.next.GameDone(g, white, black, leader)
	}
}

func (r *finalRecorder) Finish() {
	if r.next != nil {
		r.next.Finish()
	}
}

// recordFinalGames records every finished game of the final in dir that the
// event has not recorded yet.
func (s *Store) recordFinalGames(ctx context.Context, dir string, sides []Side) error {
	have, err := s.finalFinished(ctx)
	if err != nil {
		return err
	}
	st, err := tournament.OpenStore(dir, true)
	if err != nil {
		return err
	}
	defer st.Close() // read-only
	recs, err := st.Games(ctx)
	if err != nil {
		return err
	}
	for _, g := range recs {
		if g.Status != tournament.Done || g.Dir == "" {
			continue
		}
		if _, ok := have[filepath.Join(FinalDir, g.Dir)]; ok {
			continue
		}
		if _, err := s.AddGame(ctx, FinalGame, filepath.Join(dir, g.Dir), sides[g.White], sides[g.Black]); err != nil {
			return fmt.Errorf("record game %d of the final: %w", g.ID, err)
		}
	}
	return nil
}

// finalFinished is when each recorded game of the final finished, by its
// directory relative to the event directory.
func (s *Store) finalFinished(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.read(ctx, `SELECT dir, finished FROM games WHERE kind = ?`, FinalGame)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var dir, fin string
		if err := rows.Scan(&dir, &fin); err != nil {
			return nil, err
		}
		out[dir] = parseTime(fin)
	}
	return out, rows.Err()
}

// FinalVersion changes whenever a game of the final is recorded, the final
// starts or ends, or the scoreboard is frozen or revealed: a server watches
// it to refresh the live standings.
func (s *Store) FinalVersion(ctx context.Context) (string, error) {
	var n, last int64
	var frozen, run sql.NullString
	err := s.readRow(ctx, `SELECT count(*), coalesce(max(id), 0), (SELECT at FROM freeze WHERE id = 1),
		(SELECT started || '/' || finished || '/' || length(error) FROM final_run WHERE id = 1) FROM games WHERE kind = ?`, FinalGame).
		Scan(&n, &last, &frozen, &run)
	// A freeze set for later changes the board when its time comes.
	active := frozen.Valid && !time.Now().Before(parseTime(frozen.String))
	return fmt.Sprintf("%d/%d/%s/%t/%s", n, last, frozen.String, active, run.String), err
}

// Freeze freezes the scoreboard from at on: teams (and visitors) see the
// final's standings as they were at that time until Reveal.
func (s *Store) Freeze(ctx context.Context, at time.Time) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO freeze (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
		at.UTC().Format(time.RFC3339Nano))
	return err
}

// Reveal ends the freeze: everyone sees the standings as they are.
func (s *Store) Reveal(ctx context.Context) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM freeze WHERE id = 1`)
	return err
}

// Frozen is the time the scoreboard is frozen from, if it is.
func (s *Store) Frozen(ctx context.Context) (time.Time, bool, error) {
	var at string
	err := s.readRow(ctx, `SELECT at FROM freeze WHERE id = 1`).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return parseTime(at), err == nil, err
}

// Board is the final's scoreboard as someone may see it.
type Board struct {
	Standings []tournament.Row `json:"standings"`
	// Games counts the final's games: total, done, unplayed, pending (as
	// of the freeze, for a frozen board: done counts the games shown).
	Games map[string]int `json:"games"`
	// FrozenAt is when the board shown was frozen (zero if it is live).
	FrozenAt time.Time `json:"frozenAt,omitzero"`
	// FreezesAt is the freeze the organizer set, shown to the organizer
	// only (zero if none).
	FreezesAt time.Time `json:"freezesAt,omitzero"`
	Run       FinalRun  `json:"run"`
}

// FinalBoards is the final's scoreboard as anyone and as the organizer see
// it, both from one load of DIR/final (nil, nil before the final started).
// The organizer sees it live; anyone else, while the scoreboard is frozen,
// sees it computed from the games that had finished by the freeze. The two
// may share their standings and counts: neither is to be changed.
func (s *Store) FinalBoards(ctx context.Context) (anyone, organizer *Board, err error) {
	state, err := tournament.Load(ctx, filepath.Join(s.Dir, FinalDir))
	if errors.Is(err, tournament.ErrNotStarted) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	live := Board{Standings: state.Summary.Standings, Games: state.StandingsFile().Games}
	if live.Run, _, err = s.FinalRun(ctx); err != nil {
		return nil, nil, err
	}
	at, frozen, err := s.Frozen(ctx)
	if err != nil {
		return nil, nil, err
	}
	org := live
	if !frozen {
		return &live, &org, nil
	}
	org.FreezesAt = at
	if time.Now().Before(at) {
		return &live, &org, nil
	}
	finished, err := s.finalFinished(ctx)
	if err != nil {
		return nil, nil, err
	}
	shown := 0
	fb := live
	fb.Standings = state.StandingsOf(func(r tournament.Record) bool {
		fin, ok := finished[filepath.Join(FinalDir, r.Dir)]
		if ok && !fin.After(at) {
			shown++
			return true
		}
		return false
	})
	fb.FrozenAt = at
	fb.Games = map[string]int{"total": state.Summary.Total, "done": shown}
	return &fb, &org, nil
}
