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
	// Met are the submissions this one met on the ladder, by their id.
	Met map[int64]Meeting
}

// Meeting is what two submissions' ladder pairs so far tell.
type Meeting struct {
	// Pairs is how many pairs they played.
	Pairs int
	// Exhausted: their last pair only repeated games they had played
	// already, move for move: the two play the same games whenever they
	// meet (deterministic bots, no openings), so meeting again tells
	// nothing.
	Exhausted bool
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
// waited longest (one that never played first, then the newest submission)
// among those with an opponent, and an opponent near it in rating, never
// the one it played last unless the ladder has no other (busy ones count: a
// pair that ends while the others play waits for them rather than play
// again at once), never one whose games with it are exhausted, and among
// the near ones one it never met if there is one: a pair's first games are
// the ones that tell most. It returns the indexes of the two entries; ok is
// false when there is no such game.
func Pick(entries []Entry, o Options, rng *rand.Rand) (a, b int, ok bool) {
	var order []int
	for i, e := range entries {
		if !e.Busy {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case waitedLonger(entries[x], entries[y]):
			return -1
		case waitedLonger(entries[y], entries[x]):
			return 1
		}
		return 0
	})
	for _, a := range order {
		me := entries[a]
		var others []int
		for i, e := range entries {
			if i != a && !e.Busy && (e.Team != me.LastOpponent || len(entries) == 2) && !me.Met[e.Submission].Exhausted {
				others = append(others, i)
			}
		}
		if len(others) == 0 {
			continue
		}
		if rng.Float64() >= o.Far && o.Near > 0 && len(others) > o.Near {
			r := me.Rating.Rating
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
		var unmet []int
		for _, i := range others {
			if me.Met[entries[i].Submission].Pairs == 0 {
				unmet = append(unmet, i)
			}
		}
		if len(unmet) > 0 {
			others = unmet
		}
		return a, others[rng.IntN(len(others))], true
	}
	return 0, 0, false
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
