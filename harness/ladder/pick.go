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

// Pick chooses the next game: the entry that waited longest (one that never
// played first, then the newest submission), and an opponent near it in
// rating, never the one it played last unless there is no other. It returns
// the indexes of the two entries; ok is false with fewer than two.
func Pick(entries []Entry, o Options, rng *rand.Rand) (a, b int, ok bool) {
	if len(entries) < 2 {
		return 0, 0, false
	}
	a = 0
	for i := 1; i < len(entries); i++ {
		if waitedLonger(entries[i], entries[a]) {
			a = i
		}
	}
	var others []int
	for i := range entries {
		if i != a && (entries[i].Team != entries[a].LastOpponent || len(entries) == 2) {
			others = append(others, i)
		}
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
