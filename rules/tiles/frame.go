package tiles

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Terrain is what cell r c (1-based) holds under any tile now: Empty,
// Terminator or Amplifier. A terminator laid on is used up (Empty); Map
// keeps the terrain of the start.
func (s *State) Terrain(r, c int) byte { return s.board[(r-1)*s.n+c-1].terrain }

// Teleported reports whether TELEPORT was used on side's chain number
// chain (1-based, as Chains numbers them).
func (s *State) Teleported(side rules.Side, chain int) bool {
	return chain >= 1 && chain <= len(s.chains[side]) && s.chains[side][chain-1].teleported
}

// The ground letters of a frame: a terminator, one used up by the tile laid
// on it, and an amplifier.
const (
	groundTerminator = "T"
	groundUsed       = "t"
	groundAmplifier  = "A"
)

// Frame implements rules.Framer.
//
// Cells: "W" a first player's tile, "b" a second player's, "T" a
// terminator, "A" an amplifier without a tile, "" empty. Owners says whose
// tile is on a cell; Ground holds "A" for an amplifier (under a tile too),
// "T" for a terminator and "t" for a terminator used up by the tile laid on
// it; Labels hold each tile's index in its chain, Rings mark the chains'
// tails and Links join a chain's consecutive tiles; Players are the bots'
// cells.
//
// The true position (viewer NoSide) shows all of it. A bot's view is what
// that bot knows: its own tiles and chains and where it stands, the opponent
// tiles it was told of or met (without their index, which it is not told),
// the amplifiers, and of the terminators only those its own tiles used up.
//
// Notes give the bots' cells and points and each chain's tiles by index
// (1@r c is the tail), of both bots for the true position, of the viewer
// alone otherwise.
func (s *State) Frame(viewer rules.Side) rules.Frame {
	n := s.N()
	terrain := s.Map()
	grid := func() [][]string {
		g := make([][]string, n)
		for r := range g {
			g[r] = make([]string, n)
		}
		return g
	}
	f := rules.Frame{Cells: grid(), Ground: grid(), Labels: grid(), Owners: make([][]int, n), Base: 1}
	for r := range f.Owners {
		f.Owners[r] = slices.Repeat([]int{-1}, n)
	}
	// Where each side's tiles lie, by chain number.
	var chains [2]map[int][][2]int
	var numbers [2][]int
	for _, side := range rules.Sides {
		chains[side] = s.Chains(side)
		for k := range chains[side] {
			numbers[side] = append(numbers[side], k)
		}
		slices.Sort(numbers[side])
	}
	// sees: the viewer knows the tile of side on r c (1-based); reads: it
	// knows the tile's chain and index too.
	sees := func(side rules.Side, r, c int) bool {
		return viewer == rules.NoSide || side == viewer || s.Knows(viewer, r, c)
	}
	reads := func(side rules.Side) bool { return viewer == rules.NoSide || side == viewer }
	for _, side := range rules.Sides {
		for _, k := range numbers[side] {
			cells := chains[side][k]
			for j, rc := range cells {
				r, c := rc[0]-1, rc[1]-1
				if !sees(side, rc[0], rc[1]) {
					continue
				}
				f.Cells[r][c] = tileLetter(side)
				f.Owners[r][c] = int(side)
				if !reads(side) {
					continue
				}
				f.Labels[r][c] = fmt.Sprint(j + 1)
				if j == 0 {
					f.Rings = append(f.Rings, [2]int{r, c})
				} else {
					f.Links = append(f.Links, [2][2]int{{cells[j-1][0] - 1, cells[j-1][1] - 1}, {r, c}})
				}
			}
		}
	}
	for r := range n {
		for c := range n {
			orig, now := terrain.At(r+1, c+1), s.Terrain(r+1, c+1)
			switch {
			case now == Amplifier:
				f.Ground[r][c] = groundAmplifier
			case now == Terminator && viewer == rules.NoSide:
				f.Ground[r][c] = groundTerminator
			case orig == Terminator && now != Terminator && (viewer == rules.NoSide || f.Owners[r][c] == int(viewer)):
				f.Ground[r][c] = groundUsed
			}
			if f.Owners[r][c] < 0 && (f.Ground[r][c] == groundAmplifier || f.Ground[r][c] == groundTerminator) {
				f.Cells[r][c] = f.Ground[r][c]
			}
		}
	}
	for _, side := range rules.Sides {
		if reads(side) {
			r, c := s.Pos(side)
			f.Players = append(f.Players, rules.Player{Side: side.String(), At: [2]int{r - 1, c - 1}})
		}
	}
	pts := s.Points()
	f.Legend = legend(viewer)
	for _, side := range rules.Sides {
		if !reads(side) {
			known := 0
			for _, k := range numbers[side] {
				for _, rc := range chains[side][k] {
					if s.Knows(viewer, rc[0], rc[1]) {
						known++
					}
				}
			}
			f.Notes = append(f.Notes, fmt.Sprintf("%s knows %d of %s's tiles", viewer, known, side))
			continue
		}
		r, c := s.Pos(side)
		f.Notes = append(f.Notes, fmt.Sprintf("%s (%s) stands on %d %d, %d points", side, tileLetter(side), r, c, pts[side]))
		for _, k := range numbers[side] {
			cells := chains[side][k]
			var b strings.Builder
			fmt.Fprintf(&b, "%s chain %d:", side, k)
			for j, rc := range cells {
				fmt.Fprintf(&b, " %d@%d %d", j+1, rc[0], rc[1])
			}
			if s.Active(side) == k {
				b.WriteString(", active")
			}
			if s.Teleported(side, k) {
				b.WriteString(", teleported")
			}
			if terrain.At(cells[0][0], cells[0][1]) == Amplifier {
				b.WriteString(", tail on an amplifier")
			}
			f.Notes = append(f.Notes, b.String())
		}
	}
	return f
}

// legend explains a frame's letters and marks.
func legend(viewer rules.Side) []string {
	l := []string{
		"numbers: a tile's index in its chain; ringed: the chain's tail (index 1); bars join a chain's tiles",
		"A: an amplifier (a chain with its tail on one scores its length once more)",
	}
	if viewer == rules.NoSide {
		return append(l,
			"T: a terminator, hidden from the bots; t: a terminator used up by the tile laid on it",
			"the marker in a cell's corner: where that side's bot stands")
	}
	return append(l,
		fmt.Sprintf("t: a terminator %s's tile used up; %s sees no other terminator", viewer, viewer),
		fmt.Sprintf("%s's tiles shown are those %s was told of or met; their index is unknown to it", viewer.Other(), viewer),
		fmt.Sprintf("the marker: where %s stands (it is not told where %s is)", viewer, viewer.Other()))
}

func tileLetter(side rules.Side) string {
	if side == rules.White {
		return "W"
	}
	return "b"
}
