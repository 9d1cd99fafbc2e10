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
}

// RunFinal plays the final (closing the event first if it is open): a
// round robin of the pinned submissions in DIR/final through the tournament
// runner, resumed if it was interrupted.
func (s *Store) RunFinal(ctx context.Context, f Final) (*tournament.Summary, error) {
	entries, err := s.CloseUploads(ctx)
	if err != nil {
		return nil, err
	}
	if len(entries) < 2 {
		return nil, fmt.Errorf("the final needs at least 2 teams with a passed submission, got %d", len(entries))
	}
	var bots []*submission.Bot
	for _, e := range entries {
		b, err := s.LoadBot(ctx, e.Submission, f.Settings.Game, f.Builder, f.Intake)
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
	return tournament.Run(ctx, tournament.Options{Dir: filepath.Join(s.Dir, FinalDir), Config: cfg, Bots: bots,
		Game: f.Settings.Game, Backend: f.Backend, Concurrency: max(f.Concurrency, 1), MaxAttempts: max(f.MaxAttempts, 1),
		ArenaVersion: f.ArenaVersion, Signer: f.Signer, Progress: f.Progress})
}
