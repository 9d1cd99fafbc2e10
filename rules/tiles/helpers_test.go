package tiles

import (
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

// baseMap is the 6x6 terrain most rule tests play on:
//
//	  1 2 3 4 5 6
//	1 E E E E E E
//	2 E T E E A E
//	3 E E E E E E
//	4 E E A E T E
//	5 E E E E E E
//	6 E E E E E E
const baseMap = `0,1,2,3,4,5
E,E,E,E,E,E
E,T,E,E,A,E
E,E,E,E,E,E
E,E,A,E,T,E
E,E,E,E,E,E
E,E,E,E,E,E
`

// board returns a position on baseMap with the first player's start tile on
// 3 1 and the second player's on 3 6 (each an active chain 1), the first
// player to move.
func board(t testing.TB, mutate ...func(*Options)) *State {
	t.Helper()
	m, err := ParseMap(baseMap)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Map = &m
	for _, f := range mutate {
		f(&o)
	}
	return newState(o, m, [2]int{cellIdx(m.N, 3, 1), cellIdx(m.N, 3, 6)})
}

func cellIdx(n, r, c int) int { return (r-1)*n + c - 1 }

func (s *State) at(r, c int) int { return cellIdx(s.n, r, c) }

// addChain gives side a new chain on the cells (r, c pairs, tail first),
// bypassing the rules; it is not active. It returns the chain's number.
func addChain(s *State, side rules.Side, rc ...int) int {
	ch := chain{}
	a := len(s.chains[side])
	for i := 0; i < len(rc); i += 2 {
		p := s.at(rc[i], rc[i+1])
		if s.board[p].owner >= 0 {
			panic("addChain on a tile")
		}
		ch.cells = append(ch.cells, int32(p))
		s.board[p].owner, s.board[p].chain, s.board[p].idx = int8(side), int32(a), int32(len(ch.cells))
		s.tiles[side]++
	}
	s.chains[side] = append(s.chains[side], ch)
	return a + 1
}

func place(s *State, side rules.Side, r, c int) { s.pos[side] = s.at(r, c) }

func know(s *State, side rules.Side, r, c int) { s.known[side][s.at(r, c)] = true }

// blackToMove makes it the second player's turn.
func blackToMove(s *State) { s.turn = 1 }

// parse reads a line and judges it.
func parse(s *State, line string) (Move, error) {
	m, err := s.ParseMove([]byte(line))
	if err != nil {
		return Move{}, err
	}
	mv, _ := asMove(m)
	return mv, s.Judge(m)
}

// play applies lines, failing the test on any error, and returns the last
// line's replies (the codec's, TURNOVER included).
func play(t testing.TB, s *State, lines ...string) [2][]string {
	t.Helper()
	var out [2][]string
	for _, l := range lines {
		m, err := s.ParseMove([]byte(l))
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		mover := s.ToMove()
		if err := s.Apply(m); err != nil {
			t.Fatalf("%q: %v\n%s", l, err, s.Render())
		}
		out = Codec{}.Reply(s, mover, true, rules.Clock{})
	}
	return out
}

func lines(s ...string) []string { return s }

func eq(a, b []string) bool { return slices.Equal(a, b) || (len(a) == 0 && len(b) == 0) }

func show(l []string) string { return "[" + strings.Join(l, " | ") + "]" }
