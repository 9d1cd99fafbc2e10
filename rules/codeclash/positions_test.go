package codeclash

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

func TestPositionsCoverEveryKindOfTurn(t *testing.T) {
	pos := Game{}.Positions(1)
	for _, side := range rules.Sides {
		steps := map[int]bool{}
		fogged, shield, used := false, false, false
		for _, p := range pos[side] {
			s := p.State.(*State)
			if s.ToMove() != side {
				t.Fatalf("%s: %q is %s's turn", side, p.Label, s.ToMove())
			}
			view, _ := s.View(side)
			v := string(view)
			if s.Phase() == "setup" {
				steps[s.SetupStep()] = true
			}
			fogged = fogged || strings.Contains(v, `"color":"fog"`)
			shield = shield || strings.Contains(v, `"name":"shield"`)
			used = used || strings.Contains(v, `":false`)
		}
		if len(steps) != 4 || !fogged || !used || (side == rules.White && !shield) {
			t.Fatalf("%s: steps %v fogged %v shield %v used %v", side, steps, fogged, shield, used)
		}
	}
}
