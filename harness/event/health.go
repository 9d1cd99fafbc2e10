package event

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/tournament"
)

// Tally keeps what each worker's results came to since the server started
// (tournament.Exchange.Judged): games played, host faults, results refused,
// and the median turns of its games.
type Tally struct {
	mu sync.Mutex
	by map[string]*tallied
}

// turnsKept is how many of a worker's last games' median turns its own
// median is taken over.
const turnsKept = 201

type tallied struct {
	WorkerTally
	turns []float64
	next  int
}

// WorkerTally is one worker's results since the server started.
type WorkerTally struct {
	// Played are its games that count; Faults its results that did not,
	// charged to its host (it could not play the game, the game aborted
	// on its host, or no result came within the deadline); Refused its
	// results refused for what they claimed.
	Played  int `json:"played"`
	Faults  int `json:"hostFaults"`
	Refused int `json:"refused"`
	// TurnMs is the median of its last games' median turns (0: none).
	TurnMs float64 `json:"turnMs,omitempty"`
}

// Judged counts a result judged (tournament.Exchange.Judged).
func (t *Tally) Judged(j tournament.Judgement) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[string]*tallied{}
	}
	w := t.by[j.Worker]
	if w == nil {
		w = &tallied{}
		t.by[j.Worker] = w
	}
	switch j.Outcome {
	case tournament.Played:
		w.Played++
		w.keep(j.TurnMs)
	case tournament.HostFault, tournament.Overdue:
		w.Faults++
	case tournament.Refused:
		w.Refused++
	}
}

// keep keeps a game's median turn among the worker's last turnsKept.
func (w *tallied) keep(ms float64) {
	if ms <= 0 {
		return
	}
	if len(w.turns) < turnsKept {
		w.turns = append(w.turns, ms)
		return
	}
	w.turns[w.next] = ms
	w.next = (w.next + 1) % turnsKept
}

// Workers are each worker's tally, and for each the median turn of the
// other workers' games (0: none), by worker.
func (t *Tally) Workers() (tallies map[string]WorkerTally, others map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tallies, others = map[string]WorkerTally{}, map[string]float64{}
	for name, w := range t.by {
		wt := w.WorkerTally
		wt.TurnMs = median(w.turns)
		tallies[name] = wt
		var rest []float64
		for other, o := range t.by {
			if other != name {
				rest = append(rest, o.turns...)
			}
		}
		others[name] = median(rest)
	}
	return tallies, others
}

// median of xs (0 for none), xs left as they were.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

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
	return time.Duration(median(took)), len(took), rows.Err()
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
