package services

import (
	"sync"

	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/stats"
)

// Tally keeps what each worker's results came to since the server started
// (runner.Exchange.Judged): games played, host faults, results refused,
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

// Judged counts a result judged (runner.Exchange.Judged).
func (t *Tally) Judged(j runner.Judgement) {
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
	case runner.Played:
		w.Played++
		w.keep(j.TurnMs)
	case runner.HostFault, runner.Overdue:
		w.Faults++
	case runner.Refused:
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
		wt.TurnMs = stats.Median(w.turns)
		tallies[name] = wt
		var rest []float64
		for other, o := range t.by {
			if other != name {
				rest = append(rest, o.turns...)
			}
		}
		others[name] = stats.Median(rest)
	}
	return tallies, others
}
