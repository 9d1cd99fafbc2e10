package event

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/tournament"
)

// FinalRun is how the final was started, and how it ended.
type FinalRun struct {
	Shape
	Concurrency int       `json:"concurrency"`
	MaxAttempts int       `json:"maxAttempts"`
	Seed        uint64    `json:"seed"`
	Started     time.Time `json:"started"`
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
	err = s.readRow(ctx, `SELECT format, rounds, top, advance, then_format, budget, games_per_pair, concurrency, max_attempts, seed, started, finished, error FROM final_run WHERE id = 1`).
		Scan(&r.Format, &r.Rounds, &r.Top, &r.Advance, &r.Then, &r.Budget, &r.GamesPerPair, &r.Concurrency, &r.MaxAttempts, &seed, &started, &finished, &r.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	r.Seed, r.Started, r.Finished = uint64(seed), parseTime(started), parseTime(finished)
	return r, true, nil
}

// BeginFinal records that the final of run's shape, concurrency, attempts
// and seed starts (or resumes) now with players, seeded in their order.
func (s *Store) BeginFinal(ctx context.Context, f FinalRun, players []FinalEntry) error {
	teams := len(players)
	return s.act(ctx, ActionFinal, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM final_players`); err != nil {
			return "", err
		}
		for i, p := range players {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO final_players (team, seed) VALUES (?, ?)`, p.Team, i+1); err != nil {
				return "", err
			}
		}
		var runs int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM final_run`).Scan(&runs); err != nil {
			return "", err
		}
		format := cmp.Or(f.Format, tournament.RoundRobin)
		_, err := tx.ExecContext(ctx, `INSERT INTO final_run (id, format, rounds, top, advance, then_format, budget, games_per_pair, concurrency, max_attempts, seed, started)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET format = excluded.format, rounds = excluded.rounds,
		top = excluded.top, advance = excluded.advance, then_format = excluded.then_format, budget = excluded.budget,
		games_per_pair = excluded.games_per_pair,
		concurrency = excluded.concurrency, max_attempts = excluded.max_attempts, seed = excluded.seed,
		started = CASE WHEN final_run.started = '' THEN excluded.started ELSE final_run.started END, finished = '', error = ''`, format, f.Rounds, f.Top, f.Advance, f.Then, f.Budget, f.GamesPerPair, f.Concurrency, f.MaxAttempts, int64(f.Seed), now())
		verb := "started"
		if runs > 0 {
			verb = "resumed"
		}
		return fmt.Sprintf("the final %s: %d teams, %s, %d games per pair, %d at once, seed %d", verb, teams, f.Describe(teams), f.GamesPerPair, f.Concurrency, f.Seed), err
	})
}

// EndFinal records that the final's run ended: with runErr, now; played
// to its end, when its last game finished (a run that only found its games
// played, resumed after a stop, ends when they did, not when it resumed).
func (s *Store) EndFinal(ctx context.Context, runErr error) error {
	msg, at := "", now()
	if runErr != nil {
		msg = runErr.Error()
	} else {
		var last sql.NullString
		if err := s.w.QueryRowContext(ctx, `SELECT finished FROM games WHERE kind = ? ORDER BY julianday(finished) DESC LIMIT 1`, FinalGame).Scan(&last); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if t := parseTime(last.String); !t.IsZero() {
			at = t.UTC().Format(time.RFC3339Nano)
		}
	}
	_, err := s.w.ExecContext(ctx, `UPDATE final_run SET finished = ?, error = ? WHERE id = 1`, at, msg)
	return err
}

// FinalSeeds are the players of a final that started, in the order it
// started with, each with its pinned submission; none before it started,
// or for a final started before the order was kept.
func (s *Store) FinalSeeds(ctx context.Context) ([]FinalEntry, error) {
	return readAll(ctx, s, scanFinalEntry, `SELECT p.team, t.name, f.submission, f.sha256 FROM final_players p
		JOIN final_entries f ON f.team_id = p.team JOIN teams t ON t.id = p.team
		WHERE NOT EXISTS (SELECT 1 FROM final_players WHERE seed = 0) ORDER BY p.seed`)
}

// FinalPlayers are the teams the final plays (none before it started).
func (s *Store) FinalPlayers(ctx context.Context) (map[int64]bool, error) {
	rows, err := s.read(ctx, `SELECT team FROM final_players`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var team int64
		if err := rows.Scan(&team); err != nil {
			return nil, err
		}
		out[team] = true
	}
	return out, rows.Err()
}

// RecordFinalGames records every finished game of the final in dir that the
// event has not recorded yet.
func (s *Store) RecordFinalGames(ctx context.Context, dir string, sides []Side) error {
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
	if err := s.HostReplays(ctx, FinalGame, dir, recs); err != nil {
		return err
	}
	for _, g := range recs {
		if g.Status != tournament.Done || g.Dir == "" {
			continue
		}
		if _, ok := have[filepath.Join(FinalDir, g.Dir)]; ok {
			continue
		}
		if _, err := s.AddGame(ctx, FinalGame, filepath.Join(dir, g.Dir), sides[g.White], sides[g.Black], g.SlotMs); err != nil {
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

// FinalVersion changes whenever a game of the final is recorded, a round
// of it is paired (logged), the final starts or ends, or the scoreboard is
// frozen or revealed: a server watches it to refresh the live standings.
func (s *Store) FinalVersion(ctx context.Context) (string, error) {
	var n, last, logged int64
	var frozen, run, names sql.NullString
	var closed sql.NullString
	err := s.readRow(ctx, `SELECT count(*), coalesce(max(id), 0), (SELECT at FROM freeze WHERE id = 1),
		(SELECT started || '/' || finished || '/' || length(error) FROM final_run WHERE id = 1),
		(SELECT group_concat(id || ':' || name, '/') FROM teams), (SELECT closed FROM closing WHERE id = 1),
		(SELECT coalesce(max(n), 0) FROM log_entries) FROM games WHERE kind = ?`, FinalGame).
		Scan(&n, &last, &frozen, &run, &names, &closed, &logged)
	// A freeze set for later changes the board when its time comes.
	active := frozen.Valid && !time.Now().Before(parseTime(frozen.String))
	return fmt.Sprintf("%d/%d/%s/%t/%s/%s/%s/%d", n, last, frozen.String, active, run.String, names.String, closed.String, logged), err
}

// Freeze freezes the scoreboard from at on: teams (and visitors) see the
// final's standings as they were at that time until Reveal.
func (s *Store) Freeze(ctx context.Context, at time.Time) error {
	return s.act(ctx, ActionFreeze, func(tx *sql.Tx) (string, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO freeze (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
			at.UTC().Format(time.RFC3339Nano))
		return "teams see the standings as of " + at.UTC().Format(time.RFC3339), err
	})
}

// Reveal ends the freeze: everyone sees the standings as they are.
func (s *Store) Reveal(ctx context.Context) error {
	return s.act(ctx, ActionReveal, func(tx *sql.Tx) (string, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM freeze WHERE id = 1`)
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return "", &RefusedError{"the scoreboard is not frozen"}
		}
		return "everyone sees the standings as they are", nil
	})
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
