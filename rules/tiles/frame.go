package tiles

import (
	"fmt"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Frame implements rules.Framer. Cells: "W" a first player's tile, "b" a
// second player's, "T" a terminator, "A" an amplifier without a tile, ""
// empty. A viewer sees its own tiles, the opponent tiles it knows, the
// amplifiers, and no terminator. Notes give the bots' cells and points and
// each chain's tiles by index (1@r c is the tail), of both bots for the true
// position, of the viewer alone otherwise.
func (s *State) Frame(viewer rules.Side) rules.Frame {
	f := rules.Frame{Cells: make([][]string, s.n)}
	for r := range s.n {
		f.Cells[r] = make([]string, s.n)
		for c := range s.n {
			i := r*s.n + c
			x := s.board[i]
			switch {
			case x.owner >= 0 && (viewer == rules.NoSide || rules.Side(x.owner) == viewer || s.known[viewer][i]):
				f.Cells[r][c] = tileLetter(rules.Side(x.owner))
			case x.terrain == Amplifier:
				f.Cells[r][c] = "A"
			case x.terrain == Terminator && viewer == rules.NoSide:
				f.Cells[r][c] = "T"
			}
		}
	}
	pts := s.Points()
	for _, side := range rules.Sides {
		if viewer != rules.NoSide && side != viewer {
			n := 0
			for i, x := range s.board {
				if rules.Side(x.owner) == side && s.known[viewer][i] {
					n++
				}
			}
			f.Notes = append(f.Notes, fmt.Sprintf("%s knows %d of %s's tiles", viewer, n, side))
			continue
		}
		f.Notes = append(f.Notes, fmt.Sprintf("%s (%s) stands on %s, %d points", side, tileLetter(side), s.cellName(s.pos[side]), pts[side]))
		for i, ch := range s.chains[side] {
			if ch.destroyed {
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s chain %d:", side, i+1)
			for j, q := range ch.cells {
				fmt.Fprintf(&b, " %d@%s", j+1, s.cellName(int(q)))
			}
			if s.active[side] == i {
				b.WriteString(", active")
			}
			if ch.teleported {
				b.WriteString(", teleported")
			}
			if s.isAmp(int(ch.cells[0])) {
				b.WriteString(", tail on an amplifier")
			}
			f.Notes = append(f.Notes, b.String())
		}
	}
	return f
}

func tileLetter(side rules.Side) string {
	if side == rules.White {
		return "W"
	}
	return "b"
}
