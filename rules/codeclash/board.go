package codeclash

import (
	"fmt"

	"github.com/arenabots/arena/rules"
)

// Size is the board's width and height.
const Size = 5

// Square is [row, col], 0-based, rows top to bottom.
type Square struct{ R, C int8 }

func (s Square) String() string { return fmt.Sprintf("[%d,%d]", s.R, s.C) }

func (s Square) onBoard() bool { return s.R >= 0 && s.R < Size && s.C >= 0 && s.C < Size }

func (s Square) add(d Square) Square { return Square{s.R + d.R, s.C + d.C} }

func (s Square) index() int { return int(s.R)*Size + int(s.C) }

func sq(r, c int) Square { return Square{int8(r), int8(c)} }

// Kind is a piece type, as its letter in state.json.
type Kind byte

// The piece kinds.
const (
	None   Kind = 0
	King   Kind = 'K'
	Queen  Kind = 'Q'
	Rook   Kind = 'R'
	Bishop Kind = 'B'
	Pawn   Kind = 'P'
)

func (k Kind) name() string {
	switch k {
	case King:
		return "king"
	case Queen:
		return "queen"
	case Rook:
		return "rook"
	case Bishop:
		return "bishop"
	case Pawn:
		return "pawn"
	}
	return "nothing"
}

// typeCodes are the guide's "type for setup phase" squares (section 4).
var typeCodes = map[Square]Kind{sq(0, 0): King, sq(0, 1): Queen, sq(0, 2): Rook, sq(0, 3): Bishop, sq(0, 4): Pawn}

func typeCode(k Kind) Square {
	for s, kk := range typeCodes {
		if kk == k {
			return s
		}
	}
	return Square{}
}

// Piece is what stands on a square; Kind None is empty.
type Piece struct {
	Kind Kind
	Side rules.Side
}

func (p Piece) empty() bool { return p.Kind == None }

// Board is the 5x5 grid.
type Board [Size][Size]Piece

func (b *Board) at(s Square) Piece     { return b[s.R][s.C] }
func (b *Board) set(s Square, p Piece) { b[s.R][s.C] = p }

var (
	orthogonal = []Square{{-1, 0}, {1, 0}, {0, -1}, {0, 1}}
	diagonal   = []Square{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	allDirs    = append(append([]Square{}, orthogonal...), diagonal...)
)

// forward is the row direction a side's pawns move: White down, Black up.
func forward(s rules.Side) int8 {
	if s == rules.White {
		return 1
	}
	return -1
}

// promotionRow is the row where a side's pawns become queens.
func promotionRow(s rules.Side) int8 {
	if s == rules.White {
		return Size - 1
	}
	return 0
}

// homeRows reports whether row r is one of side's back two rows.
func homeRow(s rules.Side, r int8) bool {
	if s == rules.White {
		return r == 0 || r == 1
	}
	return r == 3 || r == 4
}

// obstacle says whether a square stops movement without holding a piece (a
// blocked tile when blocked tiles are in play).
type obstacle func(Square) bool

// targets calls fn for every square the piece on from could move to or capture
// on, judged by movement alone: own pieces are included as the end of a ray (the
// caller filters them), shields are not considered. It is the one definition of
// movement used for legality and for fog.
func (b *Board) targets(from Square, blocked obstacle, fn func(to Square)) {
	p := b.at(from)
	switch p.Kind {
	case King:
		for _, d := range allDirs {
			if to := from.add(d); to.onBoard() && !blocked(to) {
				fn(to)
			}
		}
	case Rook:
		b.slide(from, orthogonal, blocked, fn)
	case Bishop:
		b.slide(from, diagonal, blocked, fn)
	case Queen:
		b.slide(from, allDirs, blocked, fn)
	case Pawn:
		f := forward(p.Side)
		if to := from.add(Square{f, 0}); to.onBoard() && !blocked(to) {
			fn(to)
		}
		for _, dc := range []int8{-1, 1} {
			if to := from.add(Square{f, dc}); to.onBoard() && !blocked(to) {
				fn(to)
			}
		}
	}
}

func (b *Board) slide(from Square, dirs []Square, blocked obstacle, fn func(Square)) {
	for _, d := range dirs {
		for to := from.add(d); to.onBoard() && !blocked(to); to = to.add(d) {
			fn(to)
			if !b.at(to).empty() {
				break
			}
		}
	}
}

// canMove reports whether the piece on from may go to to by movement rules
// (pieces in the way, pawn capture shape), ignoring shields. It returns the
// reason when not.
func (b *Board) canMove(from, to Square, blocked obstacle) (bool, string) {
	p, q := b.at(from), b.at(to)
	if !q.empty() && q.Side == p.Side {
		return false, fmt.Sprintf("to %v holds your own %s", to, q.Kind.name())
	}
	if blocked(to) {
		return false, fmt.Sprintf("to %v is a blocked tile", to)
	}
	dr, dc := to.R-from.R, to.C-from.C
	switch p.Kind {
	case King:
		if abs(dr) > 1 || abs(dc) > 1 {
			return false, fmt.Sprintf("a king moves one square; %v to %v is not", from, to)
		}
		return true, ""
	case Pawn:
		f := forward(p.Side)
		switch {
		case dr == f && dc == 0 && q.empty():
			return true, ""
		case dr == f && dc == 0:
			return false, fmt.Sprintf("a pawn captures diagonally only; %v is occupied", to)
		case dr == f && abs(dc) == 1 && !q.empty():
			return true, ""
		case dr == f && abs(dc) == 1:
			return false, fmt.Sprintf("a pawn moves diagonally only to capture; %v is empty", to)
		case dr == -f:
			return false, fmt.Sprintf("a pawn never moves backwards (%v to %v)", from, to)
		}
		return false, fmt.Sprintf("a pawn moves one square forward; %v to %v is not", from, to)
	case Rook, Bishop, Queen:
		straight := dr == 0 || dc == 0
		diag := abs(dr) == abs(dc)
		if (p.Kind == Rook && !straight) || (p.Kind == Bishop && !diag) || (p.Kind == Queen && !straight && !diag) {
			return false, fmt.Sprintf("a %s cannot move from %v to %v", p.Kind.name(), from, to)
		}
		step := Square{sign(dr), sign(dc)}
		for s := from.add(step); s != to; s = s.add(step) {
			if !b.at(s).empty() {
				return false, fmt.Sprintf("the path from %v to %v is blocked at %v", from, to, s)
			}
			if blocked(s) {
				return false, fmt.Sprintf("the path from %v to %v crosses the blocked tile %v", from, to, s)
			}
		}
		return true, ""
	}
	return false, fmt.Sprintf("%v holds no piece", from)
}

func abs(x int8) int8 {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int8) int8 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
