package tournament

import (
	"fmt"
	"slices"
	"time"
)

// maxBatches bounds a play-out: no format pairs this many batches (a
// Swiss of 1,000 bots plays a few dozen rounds, a rating tournament
// its budget in rounds of every bot), so a pairing that never ends is
// reported, not looped on.
const maxBatches = 100_000

// PlayOut plays the tournament out by its own pairing before a game of it
// is played: its first games (FirstGames), then each batch Next pairs
// once every game before it is over (a Swiss round, a bracket's round,
// a playoff's), each game's winner told by result, until Next pairs
// none. It returns the batches in the order they are paired. Like Next,
// it is a pure function of the configuration and result.
func (c Config) PlayOut(result func(Game) string) ([][]Game, error) {
	games, err := c.FirstGames()
	if err != nil {
		return nil, err
	}
	var recs []Record
	var out [][]Game
	for len(games) > 0 {
		if len(out) == maxBatches {
			return out, fmt.Errorf("the %s tournament of %d bots paired %d batches and goes on", c.Format, len(c.Bots), maxBatches)
		}
		out = append(out, games)
		for _, g := range games {
			recs = append(recs, Record{Game: g, Status: Done, Winner: result(g)})
		}
		games = c.Next(recs)
	}
	return out, nil
}

// Run is one play-out of a tournament (Simulate): the games it played and
// how long they took.
type Run struct {
	Games int
	Wall  time.Duration
}

// Simulate plays the tournament out runs times (PlayOut), each game's
// winner and time drawn by play, as the runner plays it: the games of a
// batch atOnce at a time, each game in its order taking the first place
// that is free, the next batch paired once the last game of the batch
// before ends. It returns the runs, in order.
func (c Config) Simulate(runs, atOnce int, play func(Game) (winner string, took time.Duration)) ([]Run, error) {
	atOnce = max(atOnce, 1)
	out := make([]Run, 0, runs)
	free := make([]time.Duration, atOnce) // when each place is free, from the batch's start
	for range runs {
		var run Run
		took := map[int]time.Duration{}
		batches, err := c.PlayOut(func(g Game) string {
			w, d := play(g)
			took[g.ID] = d
			return w
		})
		if err != nil {
			return nil, err
		}
		for _, b := range batches {
			clear(free)
			for _, g := range b {
				i := slices.Index(free, slices.Min(free))
				free[i] += took[g.ID]
			}
			run.Games += len(b)
			run.Wall += slices.Max(free)
		}
		out = append(out, run)
	}
	return out, nil
}
