// Command random is an example Code Clash bot: it plays a uniformly random legal
// move (or placement) and never uses an ability. It remembers its moves in the
// data file random-bot.json.
package main

import (
	"math/rand/v2"

	"github.com/arenabots/arena/examples/botkit"
	"github.com/arenabots/arena/rules/codeclash"
)

func main() {
	botkit.Run("random-bot.json", func(s *codeclash.State, rng *rand.Rand, _ *botkit.Memory) (codeclash.Move, bool) {
		moves := s.Moves()
		if len(moves) == 0 {
			return codeclash.Move{}, false
		}
		return moves[rng.IntN(len(moves))], true
	})
}
