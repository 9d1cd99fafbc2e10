package tournament

import "github.com/arenabots/arena/harness/transcript"

// Batches are the games the tournament plays one batch after another, as
// far as they can be told before the results: a batch's games may all
// play at once, and the next is paired only once it is over. A schedule
// stored whole (a round robin, a gauntlet) is one batch; a Swiss round, a
// rating round and a bracket's round are one each. A bracket's are its
// pairing played out with the better seed winning every match (a level
// match would add deciders); a rating tournament's spend its whole budget
// (it may stop sooner). The sum is Planned's, or a bracket's games
// without deciders.
func (c Config) Batches() []int {
	n, perPair := len(c.Bots), c.GamesPerPair
	rounds := func(games, perRound int) []int {
		var out []int
		for ; games > 0 && perRound > 0; games -= perRound {
			out = append(out, min(games, perRound))
		}
		return out
	}
	switch c.Format {
	case RoundRobin:
		return []int{n * (n - 1) / 2 * perPair}
	case Gauntlet:
		return []int{(n - 1) * perPair}
	case Swiss:
		return rounds(c.SwissRounds()*(n/2)*perPair, n/2*perPair)
	case Rating:
		return rounds(c.RatingBudget(), n/2*perPair)
	case Knockout, DoubleElimination:
		return c.bracketBatches()
	case Stages:
		out := rounds(c.SwissRounds()*(n/2)*perPair, n/2*perPair)
		k := min(c.Advance, n)
		second := Config{Format: c.Then, GamesPerPair: perPair, Bots: c.Bots[:k], Scoring: c.Scoring, TieBreaks: c.TieBreaks}
		if c.Then == RoundRobin {
			return append(out, k*(k-1)/2*perPair)
		}
		return append(out, second.bracketBatches()...)
	}
	return nil
}

// bracketBatches plays a bracket out by its own pairing (PlayOut), the
// better seed (the lower-numbered bot) winning every game, and counts each
// round's games.
func (c Config) bracketBatches() []int {
	batches, err := c.PlayOut(func(g Game) string {
		if g.Black < g.White {
			return transcript.WinnerBlack
		}
		return transcript.WinnerWhite
	})
	if err != nil {
		// A bracket's first games are its pairing's (no schedule to
		// fail), and it ends within twice its rounds: a bug.
		panic(err)
	}
	out := make([]int, len(batches))
	for i, b := range batches {
		out[i] = len(b)
	}
	return out
}
