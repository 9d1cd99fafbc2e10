package codeclash

import (
	"math/rand/v2"

	"github.com/arenabots/arena/rules"
)

// Positions implements rules.Exerciser: a scripted Code Clash game seen from both sides: every setup
// step as each colour, then play positions that include a fogged view, an
// active opponent shield, a pawnReset notice and states with some abilities
// used. Returned per side, in the order the side meets them in that game.
func (Game) Positions(seed uint64) [2][]rules.Position {
	var out [2][]rules.Position
	rng := rand.New(rand.NewPCG(seed, 0x7a11d))
	s := NewState(DefaultOptions(), seed)
	labels := map[[2]int]bool{}
	for s.Phase() == "setup" {
		side := s.ToMove()
		key := [2]int{int(side), s.SetupStep()}
		if !labels[key] {
			labels[key] = true
			out[side] = append(out[side], rules.Position{Label: "setup step " + string(rune('0'+s.SetupStep())) + " as " + side.String(), State: s.clone()})
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
		{"first play move as white", Fog},
		{"play as black, fogged (3 turns left)", Shield},
		{"play as white facing an active shield, fog used", PawnReset},
		{"play as black, fogged (2 turns left), told of a pawnReset", ""},
		{"play as white, two abilities used", ""},
		{"play as black, fogged (1 turn left), shield used", Fog},
		{"play as white, fogged by black", ""},
		{"play as black, all but pawnReset used", ""},
	}
	for _, step := range script {
		if s.Outcome().Over {
			break
		}
		side := s.ToMove()
		out[side] = append(out[side], rules.Position{Label: step.label, State: s.clone()})
		m := quiet(s, rng)
		if step.ability != "" {
			m.Ability = step.ability
			if step.ability == Shield {
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

// quiet picks a legal move that captures nothing, if there is one.
func quiet(s *State, rng *rand.Rand) Move {
	moves := s.Moves()
	b := s.Board()
	var calm []Move
	for _, m := range moves {
		if b[m.To.R][m.To.C].Kind == None {
			calm = append(calm, m)
		}
	}
	if len(calm) > 0 {
		return calm[rng.IntN(len(calm))]
	}
	return moves[rng.IntN(len(moves))]
}
