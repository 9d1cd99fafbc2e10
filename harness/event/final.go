package event

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/words"
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
	var names []string
	for _, ts := range playing {
		pin = append(pin, FinalEntry{Team: ts.team.ID, Name: ts.team.Name, Submission: ts.sub.ID, SHA256: ts.sub.SHA256})
		names = append(names, fmt.Sprintf("%s #%d", ts.team.Name, ts.sub.ID))
	}
	err = s.act(ctx, ActionClose, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO closing (id, closed) VALUES (1, ?)`, now()); err != nil {
			return "", err
		}
		for _, e := range pin {
			if _, err := tx.ExecContext(ctx, `INSERT INTO final_entries (team_id, submission, sha256) VALUES (?, ?, ?)`, e.Team, e.Submission, e.SHA256); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("uploads closed; pinned %d: %s", len(pin), strings.Join(names, ", ")), nil
	})
	if err != nil {
		return nil, err
	}
	return s.FinalEntries(ctx)
}

// ReopenUploads undoes CloseUploads: uploads (within the event's hours),
// scrimmages and the ladder go on, and nothing is pinned. Once the final
// has started it is refused: its games were played with the pinned
// submissions.
func (s *Store) ReopenUploads(ctx context.Context) error {
	return s.act(ctx, ActionReopen, func(tx *sql.Tx) (string, error) {
		var started int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM final_run`).Scan(&started); err != nil {
			return "", err
		}
		if started > 0 {
			return "", &RefusedError{"the final has started: its games were played with the pinned submissions, so uploads stay closed"}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM closing`)
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return "", &RefusedError{"uploads are not closed"}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM final_entries`); err != nil {
			return "", err
		}
		return "uploads open again; nothing pinned", nil
	})
}

// Outlook is who the final would play: the teams pinned (or, before the
// close, the teams that would be), and the teams left out with the reason.
type Outlook struct {
	Closed  bool         `json:"closed"`
	Playing []FinalEntry `json:"playing"`
	// Missing are the enabled teams without a submission that plays (none
	// passed its validation, and none was admitted) and none waiting for
	// its validation: they will not play.
	Missing []Team `json:"missing"`
	// Waiting are the enabled teams without a submission that plays yet,
	// with one queued or under validation: they play if it passes.
	Waiting []Team `json:"waiting"`
	// Disabled are the teams the organizer disabled.
	Disabled []Team `json:"disabled"`
}

// FinalOutlook is who plays the final and who does not, and why.
func (s *Store) FinalOutlook(ctx context.Context) (Outlook, error) {
	var o Outlook
	var err error
	if _, o.Closed, err = s.Closed(ctx); err != nil {
		return o, err
	}
	teams, err := s.Teams(ctx)
	if err != nil {
		return o, err
	}
	if o.Closed {
		if o.Playing, err = s.FinalEntries(ctx); err != nil {
			return o, err
		}
	} else {
		playing, err := s.activeOf(ctx, teams)
		if err != nil {
			return o, err
		}
		for _, ts := range playing {
			o.Playing = append(o.Playing, FinalEntry{Team: ts.team.ID, Name: ts.team.Name, Submission: ts.sub.ID, SHA256: ts.sub.SHA256})
		}
	}
	in := map[int64]bool{}
	for _, e := range o.Playing {
		in[e.Team] = true
	}
	pending := map[int64]bool{}
	if !o.Closed {
		rows, err := s.read(ctx, `SELECT DISTINCT team_id FROM submissions WHERE state IN (?, ?, ?)`, Queued, Building, Validating)
		if err != nil {
			return o, err
		}
		defer rows.Close()
		for rows.Next() {
			var team int64
			if err := rows.Scan(&team); err != nil {
				return o, err
			}
			pending[team] = true
		}
		if err := rows.Err(); err != nil {
			return o, err
		}
	}
	for _, t := range teams {
		switch {
		case in[t.ID]:
		case t.Disabled:
			o.Disabled = append(o.Disabled, t)
		case pending[t.ID]:
			o.Waiting = append(o.Waiting, t)
		default:
			o.Missing = append(o.Missing, t)
		}
	}
	return o, nil
}

// FinalEntries are the submissions pinned for the final, by team name.
func (s *Store) FinalEntries(ctx context.Context) ([]FinalEntry, error) {
	return readAll(ctx, s, scanFinalEntry, `SELECT f.team_id, t.name, f.submission, f.sha256 FROM final_entries f JOIN teams t ON t.id = f.team_id ORDER BY t.name`)
}

// scanFinalEntry reads a team's id and name, its pinned submission and hash.
func scanFinalEntry(row interface{ Scan(...any) error }) (FinalEntry, error) {
	var e FinalEntry
	err := row.Scan(&e.Team, &e.Name, &e.Submission, &e.SHA256)
	return e, err
}

// FinalEntryOf is team's submission pinned for the final; ok is false when
// none is (uploads open, or the team had none that plays at the close).
func (s *Store) FinalEntryOf(ctx context.Context, team int64) (e FinalEntry, ok bool, err error) {
	err = s.readRow(ctx, `SELECT f.team_id, t.name, f.submission, f.sha256 FROM final_entries f JOIN teams t ON t.id = f.team_id WHERE f.team_id = ?`, team).
		Scan(&e.Team, &e.Name, &e.Submission, &e.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return FinalEntry{}, false, nil
	}
	return e, err == nil, err
}

// FinalGame is a game of the final.
const FinalGame = "final"

// Shape is how a final is laid out: its format and that format's choices.
type Shape struct {
	// Format is one of FinalFormats ("": a round robin).
	Format string `json:"format"`
	// Rounds is a Swiss final's rounds, or a stages final's qualifier's
	// (0: ceil(log2 teams) + 2).
	Rounds int `json:"rounds,omitempty"`
	// Top, when set, is how many teams the final plays: the ladder's top
	// Top as it stood at the close (a qualifying stage), the rest out.
	Top int `json:"top,omitempty"`
	// Advance is how many of a stages final's qualifier go on to its
	// second stage (0: 16, or every team of fewer), Then that stage's
	// format (tournament.SecondStages; "": a double elimination).
	Advance int    `json:"advance,omitempty"`
	Then    string `json:"then,omitempty"`
	// Budget is the games a rating final plays at most (0: its default).
	Budget       int `json:"budget,omitempty"`
	GamesPerPair int `json:"gamesPerPair"`
	// Playoff are the places teams level after every tie-break but the
	// lot play for (nil: first place and a stages final's cut;
	// tournament.NoPlayoff: none, the lot decides).
	Playoff []int `json:"playoff,omitempty"`
}

// FinalFormats are the formats a final may be played in: every
// tournament's but the gauntlet.
func FinalFormats() []string {
	var out []string
	for _, f := range tournament.Formats() {
		if f != tournament.Gauntlet {
			out = append(out, f)
		}
	}
	return out
}

// Config is the tournament's schedule of this shape for a final of teams
// teams: its format and that format's choices, defaults filled in, tie-breaks
// the format's own.
func (s Shape) Config(teams int) tournament.Config {
	c := tournament.Config{Format: cmp.Or(s.Format, tournament.RoundRobin), Rounds: s.Rounds, GamesPerPair: s.GamesPerPair, Budget: s.Budget,
		Scoring: tournament.DefaultScoring()}
	if c.Format == tournament.Stages {
		c.Advance, c.Then = cmp.Or(s.Advance, tournament.DefaultAdvance(teams)), cmp.Or(s.Then, tournament.DoubleElimination)
	}
	c.TieBreaks, c.Playoff = tournament.TieBreaksFor(c.Format), s.Playoff
	c.Bots = make([]tournament.BotEntry, teams)
	return c
}

// Check refuses a shape no final can have, whatever its teams: an unknown
// format, a second stage that is not one, numbers out of range.
func (s Shape) Check() error {
	if s.Format != "" && !slices.Contains(FinalFormats(), s.Format) {
		return fmt.Errorf("format: a final is %s, not %q", words.Or(FinalFormats()), s.Format)
	}
	if s.Then != "" && !slices.Contains(tournament.SecondStages(), s.Then) {
		return fmt.Errorf("then: a second stage is %s, not %q", words.Or(tournament.SecondStages()), s.Then)
	}
	if s.Rounds < 0 || s.Top < 0 || s.Advance < 0 || s.Budget < 0 {
		return errors.New("rounds, top, advance and budget: 0 (the default) or more")
	}
	return nil
}

// Describe says the shape in words for teams teams: "swiss, 11 rounds",
// "stages: a Swiss qualifier of 11 rounds, its top 16 then a double
// elimination", "the ladder's top 64" appended when set.
func (s Shape) Describe(teams int) string {
	c := s.Config(min(teams, max(s.Top, 0)))
	if s.Top <= 0 {
		c = s.Config(teams)
	}
	out := c.Describe()
	if s.Top > 0 {
		out += fmt.Sprintf(", the ladder's top %d", s.Top)
	}
	return out
}
