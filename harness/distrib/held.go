package distrib

import (
	"sort"
	"time"
)

// Holding is a game a worker holds now, as the coordinator sees it.
type Holding struct {
	Game    int    `json:"game"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
	// Since is when it was handed out; News when its holder last said it
	// still plays it.
	Since time.Time `json:"since"`
	News  time.Time `json:"news"`
	// Deadline is the game's deadline from Since, as its coordinator told
	// it (Job.Deadline; 0: none told).
	Deadline time.Duration `json:"deadline,omitempty"`
}

// The rule that flags a held game as stuck before its deadline passes: it
// has been held longer than half its deadline, or, once StuckSamples games
// were handed in since the coordinator started, longer than StuckFactor
// times their median time (hand-out to result) and StuckFloor. A game that
// long without a result is far out of its peers' run: its worker's sandbox
// hangs, or its machine is lost while its link still says it plays. Nothing
// is done to it: the flag is for the organizer, and the deadline still
// decides.
const (
	StuckFactor  = 5
	StuckSamples = 5
	StuckFloor   = 30 * time.Second
)

// gameTimesKept is how many of the last games' times the median of
// GameTimes is taken over.
const gameTimesKept = 101

// Stuck says whether the game looks stuck at now, given the median time of
// the games handed in lately and how many there were (GameTimes).
func (h Holding) Stuck(now time.Time, median time.Duration, timed int) bool {
	held := now.Sub(h.Since)
	if h.Deadline > 0 && held > h.Deadline/2 {
		return true
	}
	return timed >= StuckSamples && held > max(StuckFactor*median, StuckFloor)
}

// DeadlineIn is how long the game has until its deadline at now (negative:
// past it); ok is false when no deadline was told.
func (h Holding) DeadlineIn(now time.Time) (left time.Duration, ok bool) {
	if h.Deadline <= 0 {
		return 0, false
	}
	return h.Since.Add(h.Deadline).Sub(now), true
}

// Holdings are the games workers hold now, the longest held first (none
// on a worker's queue).
func (q *Queue) Holdings() []Holding {
	d := q.dispatch
	if d == nil {
		return nil
	}
	d.mu.Lock()
	out := make([]Holding, 0, len(d.held))
	for _, h := range d.held {
		out = append(out, holdingOf(h))
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Game < out[j].Game
	})
	return out
}

// holdingOf is a hand-out as Holdings shows it.
func holdingOf(h *holding) Holding {
	return Holding{Game: h.job.Game, Attempt: h.job.Attempt, Worker: h.worker, Since: h.since, News: h.news, Deadline: h.job.Deadline}
}

// Heard is when each worker last said something the coordinator took (an
// ask for a game, news of one, a result), since the coordinator started.
func (q *Queue) Heard() map[string]time.Time {
	d := q.dispatch
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]time.Time, len(d.heard))
	for w, at := range d.heard {
		out[w] = at
	}
	return out
}

// GameTimes is the median time of the last games handed in (hand-out to
// result, at most gameTimesKept of them) and how many that is.
func (q *Queue) GameTimes() (median time.Duration, n int) {
	d := q.dispatch
	if d == nil {
		return 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gameTimes()
}

// gameTimes is GameTimes with mu held.
func (d *dispatcher) gameTimes() (time.Duration, int) {
	if len(d.took) == 0 {
		return 0, 0
	}
	xs := append([]time.Duration(nil), d.took...)
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2, n
	}
	return xs[len(xs)/2], len(xs)
}

// timed keeps a game's time, hand-out to result, among the last
// gameTimesKept. Called with mu held.
func (d *dispatcher) timed(took time.Duration) {
	if len(d.took) < gameTimesKept {
		d.took = append(d.took, took)
		return
	}
	d.took[d.tookNext] = took
	d.tookNext = (d.tookNext + 1) % gameTimesKept
}

// stuck counts the games held that look stuck at now. Called with mu held.
func (d *dispatcher) stuck(now time.Time) int {
	median, n := d.gameTimes()
	stuck := 0
	for _, h := range d.held {
		if holdingOf(h).Stuck(now, median, n) {
			stuck++
		}
	}
	return stuck
}
