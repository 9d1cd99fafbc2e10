// Command chatty is a Code Clash fixture bot for the tests of games
// followed as they are played: it takes a quarter of a second over each
// turn, writes a line naming its side and the turn to stderr (its own
// output, which only its team may read), and plays a random legal move.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/arenabots/arena/examples/botkit"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
)

// Think is how long the bot takes over a turn.
const Think = 250 * time.Millisecond

func main() {
	botkit.Run("chatty.json", func(s *codeclash.State, rng *rand.Rand, mem *botkit.Memory) (codeclash.Move, bool) {
		time.Sleep(Think)
		side := "white"
		if s.ToMove() == rules.Black {
			side = "black"
		}
		fmt.Fprintf(os.Stderr, "secret of %s at turn %d\n", side, s.Turn())
		moves := s.Moves()
		if len(moves) == 0 {
			return codeclash.Move{}, false
		}
		return moves[rng.IntN(len(moves))], true
	})
}
