package event

import (
	"context"
	"time"

	"github.com/arenabots/arena/harness/stats"
)

// Play is a pair of games under way, or waiting: a scrimmage, a ladder
// pair.
type Play struct {
	Kind  string `json:"kind"` // ScrimmageGame, LadderGame
	ID    int64  `json:"id"`
	Team  int64  `json:"team"`
	Rival int64  `json:"rival,omitempty"`
	State string `json:"state"` // queued, playing
	// Since is when a ladder pair started, or a scrimmage was asked for.
	Since time.Time `json:"since"`
}

// maxPlays is the most scrimmages and ladder pairs Plays lists: those
// under way are as many as the server plays at once.
const maxPlays = 200

// Plays are the scrimmages and ladder pairs under way, and the scrimmages
// waiting, oldest first (at most maxPlays), with how many scrimmages wait
// in all.
func (s *Store) Plays(ctx context.Context) (plays []Play, queued int, err error) {
	if err := s.readRow(ctx, `SELECT count(*) FROM scrimmages WHERE state = ?`, ScrimmageQueued).Scan(&queued); err != nil {
		return nil, 0, err
	}
	rows, err := s.read(ctx, `SELECT * FROM (
		SELECT 'scrimmage', id, team_id, COALESCE(rival_team, 0), state, created FROM scrimmages WHERE state IN (?, ?)
		UNION ALL SELECT 'ladder', id, a_team, b_team, state, created FROM ladder_pairs WHERE state = 'playing'
	) ORDER BY 5, 6 LIMIT ?`, ScrimmagePlaying, ScrimmageQueued, maxPlays)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var p Play
		var since string
		if err := rows.Scan(&p.Kind, &p.ID, &p.Team, &p.Rival, &p.State, &since); err != nil {
			return nil, 0, err
		}
		p.Since = parseTime(since)
		plays = append(plays, p)
	}
	return plays, queued, rows.Err()
}

// ValidationTimes is the median time of the last validations that ended
// (started to finished, at most 51 of them) and how many that is.
func (s *Store) ValidationTimes(ctx context.Context) (time.Duration, int, error) {
	rows, err := s.read(ctx, `SELECT started, finished FROM submissions
		WHERE state IN ('passed', 'failed') AND started != '' AND finished != '' ORDER BY id DESC LIMIT 51`)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var took []float64
	for rows.Next() {
		var started, finished string
		if err := rows.Scan(&started, &finished); err != nil {
			return 0, 0, err
		}
		if a, b := parseTime(started), parseTime(finished); !a.IsZero() && b.After(a) {
			took = append(took, float64(b.Sub(a)))
		}
	}
	return time.Duration(stats.Median(took)), len(took), rows.Err()
}

// JobOf reads an event's job number (JobName): the kind of its pair
// (ScrimmageGame, LadderGame, FinalGame; "" for none of them), the pair's
// id (0 for the final) and the game's number in it.
func JobOf(job int) (kind string, id int64, game int) {
	switch {
	case job > JobsFinal:
		return FinalGame, 0, job - JobsFinal
	case job > JobsLadder:
		return LadderGame, int64((job - JobsLadder) / 4), (job - JobsLadder) % 4
	case job > JobsScrimmage:
		return ScrimmageGame, int64((job - JobsScrimmage) / 4), (job - JobsScrimmage) % 4
	}
	return "", 0, job
}
