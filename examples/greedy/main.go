// Command greedy is an example Code Clash bot: it captures the most valuable
// piece it can (the king above all), otherwise plays a random move that does
// not leave the moved piece where an enemy can take it. It fogs the opponent on
// its first move of play and shields its king when the king is attacked. It
// remembers its moves in the data file greedy-bot.json.
package main

import (
	"math/rand/v2"

	"github.com/arenabots/arena/examples/botkit"
	"github.com/arenabots/arena/rules/codeclash"
)

var value = map[codeclash.Kind]int{codeclash.King: 1000, codeclash.Queen: 9, codeclash.Rook: 5, codeclash.Bishop: 3, codeclash.Pawn: 1}

func main() {
	botkit.Run("greedy-bot.json", choose)
}

func choose(s *codeclash.State, rng *rand.Rand, mem *botkit.Memory) (codeclash.Move, bool) {
	moves := s.Moves()
	if len(moves) == 0 {
		return codeclash.Move{}, false
	}
	if s.Phase() == "setup" {
		return moves[rng.IntN(len(moves))], true
	}
	b := s.Board()
	best, bestScore := moves[rng.IntN(len(moves))], -1
	for _, m := range moves {
		score := 0
		if p := b[m.To.R][m.To.C]; p.Kind != codeclash.None {
			score = 10 * value[p.Kind]
		}
		if score == 0 && !attacked(s, m) {
			score = 1
		}
		if score > bestScore || (score == bestScore && rng.IntN(3) == 0) {
			best, bestScore = m, score
		}
	}
	abilities := map[string]bool{}
	for _, a := range s.Abilities() {
		abilities[a] = true
	}
	switch {
	case abilities[codeclash.Fog] && mem.Turns >= 9:
		best.Ability = codeclash.Fog
	case abilities[codeclash.Shield] && b[best.From.R][best.From.C].Kind == codeclash.King && attacked(s, best):
		best.Ability = codeclash.Shield
		t := best.To
		best.Target = &t
	}
	return best, true
}

// attacked reports whether the opponent could capture the moved piece on its
// next turn.
func attacked(s *codeclash.State, m codeclash.Move) bool {
	next := s.Clone()
	if err := next.Apply(m); err != nil || next.Outcome().Over {
		return false
	}
	for _, reply := range next.LegalMoves() {
		if r, ok := reply.(codeclash.Move); ok && r.To == m.To {
			return true
		}
	}
	return false
}
