package event

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/tournament"
)

// Job numbers of the games an event sends to workers: each kind of pair a
// range of its own, in it each pair its own numbers (a scrimmage's or a
// ladder pair's id times 4, plus its game's number; the final's game its
// number), so that no two games the queue carries share one.
const (
	JobsScrimmage = 1 << 40
	JobsLadder    = 2 << 40
	JobsFinal     = 3 << 40
)

// EventWorker is a worker machine enrolled in the event, and its
// suspension if it has one.
type EventWorker struct {
	Name      string             `json:"name"`
	Suspended *roster.Suspension `json:"suspended,omitempty"`
	// Game names the game of the suspension as the event's pages do
	// ("ladder pair 12, game 2"), not by its job number.
	Game string `json:"game,omitempty"`
}

// JobName names an event's game sent to workers by its job number as a
// person reads it: "scrimmage 5, game 1", "ladder pair 12, game 2", "the
// final, game 34".
func JobName(job int) string {
	switch kind, id, game := JobOf(job); {
	case kind == FinalGame:
		return fmt.Sprintf("the final, game %d", game)
	case kind == LadderGame:
		return fmt.Sprintf("ladder pair %d, game %d", id, game)
	case kind == ScrimmageGame:
		return fmt.Sprintf("scrimmage %d, game %d", id, game)
	case job > 0:
		return fmt.Sprintf("game %d", job)
	}
	return "no game"
}

// EventWorkers lists the worker machines enrolled in the event (arena enroll
// --out DIR), each with its suspension.
func (s *Store) EventWorkers() ([]EventWorker, error) {
	wdir := tournament.WorkersDir(s.Dir)
	enrolled, err := roster.Enrolled(wdir)
	if err != nil {
		return nil, err
	}
	out, err := roster.Suspended(wdir)
	if err != nil {
		return nil, err
	}
	var list []EventWorker
	for _, name := range roster.Names(enrolled) {
		w := EventWorker{Name: name}
		if su, ok := out[name]; ok {
			w.Suspended = &su
			if su.Game != 0 {
				w.Game = JobName(su.Game)
			}
		}
		list = append(list, w)
	}
	return list, nil
}

// Readmit lets a suspended worker in again (the server's queue admits it
// within seconds).
func (s *Store) Readmit(ctx context.Context, worker string) error {
	return s.act(ctx, ActionReadmit, func(*sql.Tx) (string, error) {
		su, err := roster.Readmit(tournament.WorkersDir(s.Dir), worker)
		if err != nil {
			return "", &RefusedError{err.Error()}
		}
		at := su.At.UTC().Format(time.RFC3339)
		if su.Game == 0 {
			return fmt.Sprintf("worker %s (it was suspended at %s: %s)", worker, at, su.Reason), nil
		}
		return fmt.Sprintf("worker %s (it was suspended at %s: %s, %s)", worker, at, JobName(su.Game), su.Reason), nil
	})
}
