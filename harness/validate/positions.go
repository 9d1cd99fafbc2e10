package validate

import (
	"math/rand/v2"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
)

// Position is a state a submission must answer.
type Position struct {
	Label string
	Side  rules.Side
	State *codeclash.State // the true position, to judge the answer
}

// Positions is a scripted Code Clash game seen from both sides: every setup
// step as each colour, then play positions that include a fogged view, an
// active opponent shield, a pawnReset notice and states with some abilities
// used. Returned per side, in the order the side meets them in that game.
func Positions(seed uint64) [2][]Position {
	var out [2][]Position
	rng := rand.New(rand.NewPCG(seed, 0x7a11d))
	s := codeclash.NewState(codeclash.DefaultOptions(), seed)
	labels := map[[2]int]bool{}
	for s.Phase() == "setup" {
		side := s.ToMove()
		key := [2]int{int(side), s.SetupStep()}
		if !labels[key] {
			labels[key] = true
			out[side] = append(out[side], Position{Label: "setup step " + string(rune('0'+s.SetupStep())) + " as " + side.String(), Side: side, State: clone(s)})
		}
		moves := s.Moves()
		s.Apply(moves[rng.IntN(len(moves))])
	}
	// Play: each side moves quietly (no capture) and uses its abilities on
	// schedule, so the views cover fog, shield, pawnReset and used abilities.
	script := []struct {
		label   string
		ability string
	}{
		{"first play move as white", codeclash.Fog},
		{"play as black, fogged (3 turns left)", codeclash.Shield},
		{"play as white facing an active shield, fog used", codeclash.PawnReset},
		{"play as black, fogged (2 turns left), told of a pawnReset", ""},
		{"play as white, two abilities used", ""},
		{"play as black, fogged (1 turn left), shield used", codeclash.Fog},
		{"play as white, fogged by black", ""},
		{"play as black, all but pawnReset used", ""},
	}
	for _, step := range script {
		if s.Outcome().Over {
			break
		}
		side := s.ToMove()
		out[side] = append(out[side], Position{Label: step.label, Side: side, State: clone(s)})
		m := quiet(s, rng)
		if step.ability != "" {
			m.Ability = step.ability
			if step.ability == codeclash.Shield {
				t := m.To
				m.Target = &t
			}
			if s.Judge(m) != nil {
				m.Ability, m.Target = "", nil
			}
		}
		s.Apply(m)
	}
	return out
}

func clone(s *codeclash.State) *codeclash.State { return s.Clone().(*codeclash.State) }

// quiet picks a legal move that captures nothing, if there is one.
func quiet(s *codeclash.State, rng *rand.Rand) codeclash.Move {
	moves := s.Moves()
	b := s.Board()
	var calm []codeclash.Move
	for _, m := range moves {
		if b[m.To.R][m.To.C].Kind == codeclash.None {
			calm = append(calm, m)
		}
	}
	if len(calm) > 0 {
		return calm[rng.IntN(len(calm))]
	}
	return moves[rng.IntN(len(moves))]
}
