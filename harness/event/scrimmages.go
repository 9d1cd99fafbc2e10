package event

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ScrimmagesDir holds one tournament directory per scrimmage.
const ScrimmagesDir = "scrimmages"

// ScrimmageGame is a game of a scrimmage.
const ScrimmageGame = "scrimmage"

// Scrimmage states.
const (
	ScrimmageQueued  = "queued"
	ScrimmagePlaying = "playing"
	ScrimmageDone    = "done"
	// ScrimmageError is a scrimmage the host could not play.
	ScrimmageError = "error"
)

// Scrimmage is a team's challenge: its active submission against a rival
// team's (or the built-in random bot, RivalTeam 0), a pair of games with
// sides swapped. Scrimmages are not rated.
type Scrimmage struct {
	ID              int64     `json:"id"`
	Team            int64     `json:"team"`
	RivalTeam       int64     `json:"rivalTeam,omitempty"`
	Submission      int64     `json:"submission"`
	RivalSubmission int64     `json:"rivalSubmission,omitempty"`
	State           string    `json:"state"`
	Message         string    `json:"message,omitempty"`
	Created         time.Time `json:"created"`
	Finished        time.Time `json:"finished,omitzero"`
}

// Involves says whether team plays in the scrimmage.
func (sc Scrimmage) Involves(team int64) bool {
	return team != 0 && (sc.Team == team || sc.RivalTeam == team)
}

// RefusedError is a request the event turns down, with the reason for the
// team.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// Active is the submission that plays for team: the one it made active if
// it passed, else its newest passed one; ErrNotFound when none passed.
func (s *Store) Active(ctx context.Context, team int64) (Submission, error) {
	var id sql.NullInt64
	if err := s.readRow(ctx, `SELECT `+fmt.Sprintf(activeID, "?1"), team).Scan(&id); err != nil {
		return Submission{}, err
	}
	if !id.Valid {
		return Submission{}, ErrNotFound
	}
	return s.Submission(ctx, id.Int64)
}

// AddScrimmage queues team's challenge of rival (0: the built-in random
// bot) between their active submissions, within cfg's quotas.
func (s *Store) AddScrimmage(ctx context.Context, cfg Config, team, rival int64) (Scrimmage, error) {
	if rival == team {
		return Scrimmage{}, &RefusedError{"a team cannot challenge itself: challenge another team or the built-in random bot"}
	}
	if at, closed, err := s.Closed(ctx); err != nil {
		return Scrimmage{}, err
	} else if closed {
		return Scrimmage{}, &RefusedError{"uploads closed at " + at.UTC().Format(time.RFC3339) + ": scrimmages ended with them, and the final plays the pinned submissions"}
	}
	mine, err := s.Active(ctx, team)
	if errors.Is(err, ErrNotFound) {
		return Scrimmage{}, &RefusedError{"you have no submission that passed its validation (or that the organizer admitted): upload one first"}
	}
	if err != nil {
		return Scrimmage{}, err
	}
	sc := Scrimmage{Team: team, RivalTeam: rival, Submission: mine.ID, State: ScrimmageQueued, Created: time.Now().UTC()}
	if rival != 0 {
		t, err := s.Team(ctx, rival)
		if errors.Is(err, ErrNotFound) || (err == nil && t.Disabled) {
			return Scrimmage{}, &RefusedError{fmt.Sprintf("there is no team %d to challenge", rival)}
		}
		if err != nil {
			return Scrimmage{}, err
		}
		theirs, err := s.Active(ctx, rival)
		if errors.Is(err, ErrNotFound) {
			return Scrimmage{}, &RefusedError{fmt.Sprintf("%s has no submission that passed its validation yet", t.Name)}
		}
		if err != nil {
			return Scrimmage{}, err
		}
		sc.RivalSubmission = theirs.ID
	}
	var hour, pending int
	err = s.readRow(ctx, `SELECT
		(SELECT count(*) FROM scrimmages WHERE team_id = ?1 AND created > ?2),
		(SELECT count(*) FROM scrimmages WHERE team_id = ?1 AND state IN ('queued', 'playing'))`,
		team, sc.Created.Add(-time.Hour).Format(time.RFC3339Nano)).Scan(&hour, &pending)
	if err != nil {
		return Scrimmage{}, err
	}
	switch {
	case hour >= cfg.Quotas.ScrimmagesPerHour:
		return Scrimmage{}, &QuotaError{fmt.Sprintf("%d scrimmages in the last hour: the event takes %d an hour; try again later", hour, cfg.Quotas.ScrimmagesPerHour)}
	case pending >= cfg.Quotas.PendingScrimmages:
		return Scrimmage{}, &QuotaError{fmt.Sprintf("%d of your scrimmages wait to be played: the event takes %d at once; wait for one to finish", pending, cfg.Quotas.PendingScrimmages)}
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO scrimmages (team_id, rival_team, submission, rival_submission, state, created)
		VALUES (?, ?, ?, ?, ?, ?)`, team, nullable(rival), sc.Submission, nullable(sc.RivalSubmission), sc.State, sc.Created.Format(time.RFC3339Nano))
	if err != nil {
		return Scrimmage{}, err
	}
	sc.ID, err = res.LastInsertId()
	return sc, err
}

const scrimmageColumns = `id, team_id, rival_team, submission, rival_submission, state, message, created, finished`

func scanScrimmage(row interface{ Scan(...any) error }) (Scrimmage, error) {
	var sc Scrimmage
	var rt, rs sql.NullInt64
	var created, fin string
	err := row.Scan(&sc.ID, &sc.Team, &rt, &sc.Submission, &rs, &sc.State, &sc.Message, &created, &fin)
	if errors.Is(err, sql.ErrNoRows) {
		return sc, ErrNotFound
	}
	sc.RivalTeam, sc.RivalSubmission = rt.Int64, rs.Int64
	sc.Created, sc.Finished = parseTime(created), parseTime(fin)
	return sc, err
}

// ScrimmageByID is the scrimmage with that id.
func (s *Store) ScrimmageByID(ctx context.Context, id int64) (Scrimmage, error) {
	return scanScrimmage(s.readRow(ctx, `SELECT `+scrimmageColumns+` FROM scrimmages WHERE id = ?`, id))
}

// Scrimmages lists the scrimmages team played or was challenged to, newest
// first (team 0: every team's).
func (s *Store) Scrimmages(ctx context.Context, team int64, n int) ([]Scrimmage, error) {
	return readAll(ctx, s, scanScrimmage, scrimmagesQuery(team), team, n)
}

// scrimmagesQuery reads Scrimmages' list, its arguments the team and how
// many: every team's newest, or a team's by the index of each side (an OR
// of the two would read every scrimmage).
func scrimmagesQuery(team int64) string {
	if team == 0 {
		return `SELECT ` + scrimmageColumns + ` FROM scrimmages WHERE ?1 = 0 ORDER BY id DESC LIMIT ?2`
	}
	return `SELECT ` + scrimmageColumns + ` FROM scrimmages WHERE id IN (SELECT id FROM scrimmages WHERE team_id = ?1
		UNION SELECT id FROM scrimmages WHERE rival_team = ?1 ORDER BY 1 DESC LIMIT ?2) ORDER BY id DESC`
}

// ClaimScrimmage takes the oldest queued scrimmage to play, or ErrNotFound.
func (s *Store) ClaimScrimmage(ctx context.Context) (Scrimmage, error) {
	var id int64
	err := s.w.QueryRowContext(ctx, `UPDATE scrimmages SET state = ? WHERE id =
		(SELECT id FROM scrimmages WHERE state = ? ORDER BY id LIMIT 1) RETURNING id`, ScrimmagePlaying, ScrimmageQueued).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Scrimmage{}, ErrNotFound
	}
	if err != nil {
		return Scrimmage{}, err
	}
	return s.ScrimmageByID(ctx, id)
}

// FinishScrimmage records how a scrimmage ended.
func (s *Store) FinishScrimmage(ctx context.Context, id int64, state, message string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE scrimmages SET state = ?, message = ?, finished = ? WHERE id = ?`, state, message, now(), id)
	return err
}

// RequeueScrimmages puts the scrimmages a stop interrupted back in the
// queue (their tournament directory resumes) and returns how many.
func (s *Store) RequeueScrimmages(ctx context.Context) (int64, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE scrimmages SET state = ? WHERE state = ?`, ScrimmageQueued, ScrimmagePlaying)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ScrimmageGames are the games each of the scrimmages ids played, oldest
// first, by scrimmage; all read at once, a few scrimmages a query.
func (s *Store) ScrimmageGames(ctx context.Context, ids ...int64) (map[int64][]Game, error) {
	out := map[int64][]Game{}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), scrimmageBatch)]
		ids = ids[len(batch):]
		q, args := scrimmageGamesQuery(batch)
		games, err := readAll(ctx, s, scanListedGames(), q, args...)
		if err != nil {
			return nil, err
		}
		for _, g := range games {
			for _, id := range batch {
				if from, _ := scrimmageDirs(id); strings.HasPrefix(g.Dir, from) {
					out[id] = append(out[id], g)
				}
			}
		}
	}
	return out, nil
}

// scrimmageBatch is how many scrimmages' games a query reads at most (so
// that few statements are prepared).
const scrimmageBatch = 10

// scrimmageGamesQuery reads the games of the scrimmages ids, oldest first:
// each scrimmage's are those whose directory is under its own, read from
// the directories' index as a range (a LIKE would read every scrimmage
// game).
func scrimmageGamesQuery(ids []int64) (string, []any) {
	var ranges []string
	args := []any{ScrimmageGame}
	for _, id := range ids {
		from, to := scrimmageDirs(id)
		args = append(args, from, to)
		ranges = append(ranges, fmt.Sprintf(`SELECT id FROM games WHERE dir >= ?%d AND dir < ?%d`, len(args)-1, len(args)))
	}
	return `SELECT ` + listedGame + ` FROM games WHERE kind = ?1 AND id IN (` + strings.Join(ranges, " UNION ALL ") + `) ORDER BY id`, args
}

// scrimmageDirs bound the directories of scrimmage id's games: from its
// directory with a separator after it, to just before the next name that
// is not under it.
func scrimmageDirs(id int64) (from, to string) {
	from = filepath.Join(ScrimmagesDir, strconv.FormatInt(id, 10)) + string(filepath.Separator)
	return from, from[:len(from)-1] + string(filepath.Separator+1)
}

// ScrimmageAhead is how many scrimmages wait ahead of queued scrimmage id
// (they are played in the order they were asked for).
func (s *Store) ScrimmageAhead(ctx context.Context, id int64) (int, error) {
	var n int
	err := s.readRow(ctx, `SELECT count(*) FROM scrimmages WHERE state = ? AND id < ?`, ScrimmageQueued, id).Scan(&n)
	return n, err
}
