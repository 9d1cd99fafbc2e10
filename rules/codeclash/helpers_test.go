package codeclash

import (
	"errors"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

// position builds a play-phase state from a diagram: rows top to bottom, upper
// case White, lower case Black, '#' a blocked tile, '.' empty.
func position(t testing.TB, diagram string, toMove rules.Side) *State {
	t.Helper()
	s := NewState(DefaultOptions(), 1)
	rows := strings.Split(strings.TrimSpace(diagram), "\n")
	if len(rows) != Size {
		t.Fatalf("diagram has %d rows", len(rows))
	}
	for r, row := range rows {
		cells := strings.Fields(row)
		if len(cells) != Size {
			t.Fatalf("diagram row %d has %d cells", r, len(cells))
		}
		for c, cell := range cells {
			ch := cell[0]
			switch {
			case ch == '.':
			case ch == '#':
				s.blocked = append(s.blocked, sq(r, c))
			case ch >= 'A' && ch <= 'Z':
				s.board[r][c] = Piece{Kind: Kind(ch), Side: rules.White}
			default:
				s.board[r][c] = Piece{Kind: Kind(ch - 'a' + 'A'), Side: rules.Black}
			}
		}
	}
	s.setupIdx = SetupTurns
	for _, side := range rules.Sides {
		s.pawnStart[side] = s.pawnSquares(side)
	}
	s.toMove = toMove
	if toMove == rules.Black {
		s.plies = 1
	}
	return s
}

func mv(fr, fc, tr, tc int) Move { return Move{From: sq(fr, fc), To: sq(tr, tc)} }

func withAbility(m Move, name string, target ...int) Move {
	m.Ability = name
	if len(target) == 2 {
		t := sq(target[0], target[1])
		m.Target = &t
	}
	return m
}

// mustApply plays m or fails.
func mustApply(t testing.TB, s *State, m Move) {
	t.Helper()
	if err := s.Apply(m); err != nil {
		t.Fatalf("apply %v: %v", m, err)
	}
}

// wantIllegal asserts Judge refuses m with a message containing want.
func wantIllegal(t testing.TB, s *State, m Move, want string) {
	t.Helper()
	err := s.Judge(m)
	var ie *rules.IllegalError
	if !errors.As(err, &ie) {
		t.Fatalf("%v: want illegal (%q), got %v", m, want, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("%v: reason %q does not mention %q", m, err, want)
	}
}

// targetsOf lists the destinations of the legal moves from one square.
func targetsOf(s *State, from Square) []Square {
	var out []Square
	for _, m := range s.Moves() {
		if m.From == from {
			out = append(out, m.To)
		}
	}
	return out
}

func squares(coords ...int) []Square {
	var out []Square
	for i := 0; i+1 < len(coords); i += 2 {
		out = append(out, sq(coords[i], coords[i+1]))
	}
	return out
}

func sameSquares(a, b []Square) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[Square]int{}
	for _, q := range a {
		seen[q]++
	}
	for _, q := range b {
		seen[q]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// standardSetup plays a fixed, legal setup: kings, blocks, rooks, then bishops
// and pawns.
func standardSetup(t testing.TB, s *State) {
	t.Helper()
	for _, m := range standardPlacements {
		mustApply(t, s, m)
	}
}

var standardPlacements = []Move{
	{Setup: true, Place: King, To: sq(0, 2)}, {Setup: true, Place: King, To: sq(4, 2)},
	{Setup: true, Place: None, To: sq(3, 0)}, {Setup: true, Place: None, To: sq(1, 4)},
	{Setup: true, Place: Rook, To: sq(0, 0)}, {Setup: true, Place: Rook, To: sq(4, 0)},
	{Setup: true, Place: Rook, To: sq(0, 4)}, {Setup: true, Place: Rook, To: sq(4, 4)},
	{Setup: true, Place: Bishop, To: sq(0, 1)}, {Setup: true, Place: Bishop, To: sq(4, 1)},
	{Setup: true, Place: Bishop, To: sq(0, 3)}, {Setup: true, Place: Bishop, To: sq(4, 3)},
	{Setup: true, Place: Pawn, To: sq(1, 0)}, {Setup: true, Place: Pawn, To: sq(3, 1)},
	{Setup: true, Place: Pawn, To: sq(1, 1)}, {Setup: true, Place: Pawn, To: sq(3, 2)},
	{Setup: true, Place: Pawn, To: sq(1, 2)}, {Setup: true, Place: Pawn, To: sq(3, 3)},
}
