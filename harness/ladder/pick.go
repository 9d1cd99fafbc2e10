// Package ladder chooses the games of an event's rated ladder: which active
// submission plays next and against whom. It is pure: it must never play a
// game, read a clock or a database; the server feeds it the entries and
// plays what it picks through the tournament runner.
package ladder

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/arenabots/arena/harness/rating"
)

// Entry is one team's active submission on the ladder.
type Entry struct {
	Team       int64
	Submission int64
	Rating     rating.Rating
	// LastPlayed is when it last played a ladder game (zero: never);
	// Active since when this submission is the team's active one.
	LastPlayed time.Time
	Active     time.Time
	// LastOpponent is the team it last played (0: none).
	LastOpponent int64
	// Busy: it plays a pair now, so it is not picked (a team plays one
	// rated pair at a time).
	Busy bool
}

// Options tune the choice of an opponent.
type Options struct {
	// Near is how many of the closest entries in rating the opponent is
	// drawn from.
	Near int
	// Far is the chance that the opponent is drawn from every entry instead,
	// so that teams far apart (the top ones among them) meet too.
	Far float64
}

// DefaultOptions: one of the 6 nearest, and one game in 10 against anyone.
var DefaultOptions = Options{Near: 6, Far: 0.1}

// Pick chooses the next game among the entries not busy: the one that
// waited longest (one that never played first, then the newest submission),
// and an opponent near it in rating, never the one it played last unless
// the ladder has no other (busy ones count: a pair that ends while the
// others play waits for them rather than play again at once). It returns
// the indexes of the two entries; ok is false when there is no such game.
func Pick(entries []Entry, o Options, rng *rand.Rand) (a, b int, ok bool) {
	a = -1
	for i, e := range entries {
		if !e.Busy && (a < 0 || waitedLonger(e, entries[a])) {
			a = i
		}
	}
	if a < 0 {
		return 0, 0, false
	}
	var others []int
	for i, e := range entries {
		if i != a && !e.Busy && (e.Team != entries[a].LastOpponent || len(entries) == 2) {
			others = append(others, i)
		}
	}
	if len(others) == 0 {
		return 0, 0, false
	}
	if rng.Float64() >= o.Far && o.Near > 0 && len(others) > o.Near {
		r := entries[a].Rating.Rating
		slices.SortFunc(others, func(x, y int) int {
			dx, dy := math.Abs(entries[x].Rating.Rating-r), math.Abs(entries[y].Rating.Rating-r)
			switch {
			case dx < dy:
				return -1
			case dx > dy:
				return 1
			}
			return int(entries[x].Team - entries[y].Team)
		})
		others = others[:o.Near]
	}
	return a, others[rng.IntN(len(others))], true
}

// waitedLonger says whether x should play before y.
func waitedLonger(x, y Entry) bool {
	switch {
	case !x.LastPlayed.Equal(y.LastPlayed):
		return x.LastPlayed.Before(y.LastPlayed)
	case !x.Active.Equal(y.Active):
		return x.Active.After(y.Active)
	}
	return x.Team < y.Team
}
