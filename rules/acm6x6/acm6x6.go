// Package acm6x6 is ACM Chess on a 6x6 board: castle, knight, queen, king,
// bishop and the Star for each side behind six pawns; pawns that step one or two
// squares and promote to the Joker; the king is captured, not mated; a draw
// after 50 moves each. Bots speak a line protocol with a FEN-like position.
package acm6x6

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/rules"
)

// Size is the board's width and height.
const Size = 6

// Piece letters. Upper case is White.
const (
	King   = 'K'
	Queen  = 'Q'
	Rook   = 'R' // the Castle
	Knight = 'N'
	Bishop = 'B'
	Pawn   = 'P'
	Star   = 'S'
	Joker  = 'J'
)

// Square is (file, rank), both 0-5; a1 is (0, 0).
type Square struct{ F, R int }

func (q Square) on() bool       { return q.F >= 0 && q.F < Size && q.R >= 0 && q.R < Size }
func (q Square) String() string { return string(rune('a'+q.F)) + strconv.Itoa(q.R+1) }

// Move is from one square to another.
type Move struct{ From, To Square }

func (m Move) String() string { return m.From.String() + m.To.String() }

// Options are the rule choices.
type Options struct {
	// DoubleStep says when a pawn may move two squares: "always" (default: the
	// rules say a pawn "can move one or two squares forward" without a
	// condition) or "first" (only from its starting rank, as in chess).
	DoubleStep string
	// MaxMoves draws the game after this many moves by each side (default 50).
	MaxMoves int
	// MoveTime is the time for one move; the harness applies it.
	MoveTime time.Duration
	// FEN is the starting position, as Parse reads it (empty: StartFEN).
	FEN string
}

// State is a position.
type State struct {
	opts    Options
	board   [Size][Size]byte // [rank][file], 0 empty
	toMove  rules.Side
	plies   int
	outcome rules.Outcome
}

// StartFEN is the starting position, rank 6 first.
const StartFEN = "rnqkbs/pppppp/6/6/PPPPPP/RNQKBS w 0"

// NewState sets up the starting position.
func NewState(o Options) *State {
	s, _ := Parse(o, StartFEN)
	return s
}

// Parse reads "RANKS SIDE PLIES": ranks 6 to 1 separated by '/', digits for
// empty squares, the side to move (w or b), and the plies played.
func Parse(o Options, fen string) (*State, error) {
	f := strings.Fields(fen)
	if len(f) != 3 {
		return nil, fmt.Errorf("position %q: want RANKS SIDE PLIES", clip(fen))
	}
	s := &State{opts: o, outcome: rules.Outcome{Winner: rules.NoSide}}
	ranks := strings.Split(f[0], "/")
	if len(ranks) != Size {
		return nil, fmt.Errorf("position: want %d ranks, got %d", Size, len(ranks))
	}
	kings := map[byte]int{}
	for i, rank := range ranks {
		r := Size - 1 - i
		file := 0
		for _, ch := range []byte(rank) {
			switch {
			case ch >= '1' && ch <= '6':
				file += int(ch - '0')
			case strings.IndexByte("KQRNBPSJkqrnbpsj", ch) >= 0:
				if file < Size {
					s.board[r][file] = ch
				}
				file++
				kings[ch]++
			default:
				return nil, fmt.Errorf("position: rank %d has %q", r+1, ch)
			}
		}
		if file != Size {
			return nil, fmt.Errorf("position: rank %d has %d squares", r+1, file)
		}
	}
	switch f[1] {
	case "w":
		s.toMove = rules.White
	case "b":
		s.toMove = rules.Black
	default:
		return nil, fmt.Errorf("position: side to move must be w or b, got %q", f[1])
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n < 0 {
		return nil, fmt.Errorf("position: plies must be a number, got %q", f[2])
	}
	s.plies = n
	if kings['K'] == 0 {
		s.outcome = rules.Outcome{Over: true, Winner: rules.Black, Reason: rules.ReasonKingCaptured}
	} else if kings['k'] == 0 {
		s.outcome = rules.Outcome{Over: true, Winner: rules.White, Reason: rules.ReasonKingCaptured}
	}
	return s, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// FEN writes the position as Parse reads it.
func (s *State) FEN() string {
	var b strings.Builder
	for r := Size - 1; r >= 0; r-- {
		empty := 0
		for f := 0; f < Size; f++ {
			if p := s.board[r][f]; p == 0 {
				empty++
			} else {
				if empty > 0 {
					b.WriteByte(byte('0' + empty))
					empty = 0
				}
				b.WriteByte(p)
			}
		}
		if empty > 0 {
			b.WriteByte(byte('0' + empty))
		}
		if r > 0 {
			b.WriteByte('/')
		}
	}
	side := "w"
	if s.toMove == rules.Black {
		side = "b"
	}
	return fmt.Sprintf("%s %s %d", b.String(), side, s.plies)
}

func owner(p byte) rules.Side {
	if p >= 'a' {
		return rules.Black
	}
	return rules.White
}

func (s *State) at(q Square) byte { return s.board[q.R][q.F] }

// targets lists where the piece on from may go, by movement alone.
func (s *State) targets(from Square) []Square {
	p := s.at(from)
	me := owner(p)
	var out []Square
	add := func(q Square) bool { // reports whether a slide may continue
		if !q.on() {
			return false
		}
		t := s.at(q)
		if t != 0 && owner(t) == me {
			return false
		}
		out = append(out, q)
		return t == 0
	}
	slide := func(dirs [][2]int) {
		for _, d := range dirs {
			for q := (Square{from.F + d[0], from.R + d[1]}); add(q); q = (Square{q.F + d[0], q.R + d[1]}) {
			}
		}
	}
	jumps := func(deltas [][2]int) {
		for _, d := range deltas {
			add(Square{from.F + d[0], from.R + d[1]})
		}
	}
	orth := [][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}}
	diag := [][2]int{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}}
	all := append(append([][2]int{}, orth...), diag...)
	switch p &^ 0x20 { // upper case
	case King:
		jumps(all)
	case Queen:
		slide(all)
	case Rook:
		slide(orth)
	case Bishop:
		slide(diag)
	case Knight:
		jumps([][2]int{{1, 2}, {2, 1}, {-1, 2}, {-2, 1}, {1, -2}, {2, -1}, {-1, -2}, {-2, -1}})
	case Star:
		// One square diagonally, or a jump of two squares straight.
		jumps(append(append([][2]int{}, diag...), [2]int{2, 0}, [2]int{-2, 0}, [2]int{0, 2}, [2]int{0, -2}))
	case Joker:
		// One square in any direction, or a jump of two in any direction.
		two := make([][2]int, 0, 8)
		for _, d := range all {
			two = append(two, [2]int{2 * d[0], 2 * d[1]})
		}
		jumps(append(append([][2]int{}, all...), two...))
	case Pawn:
		dir := 1
		start := 1
		if me == rules.Black {
			dir, start = -1, Size-2
		}
		one := Square{from.F, from.R + dir}
		if one.on() && s.at(one) == 0 {
			out = append(out, one)
			two := Square{from.F, from.R + 2*dir}
			if two.on() && s.at(two) == 0 && (s.opts.DoubleStep == "always" || from.R == start) {
				out = append(out, two)
			}
		}
		for _, df := range []int{-1, 1} {
			q := Square{from.F + df, from.R + dir}
			if q.on() && s.at(q) != 0 && owner(s.at(q)) != me {
				out = append(out, q)
			}
		}
	}
	return out
}

// Moves lists the legal moves of the side to move, by square order.
func (s *State) Moves() []Move {
	if s.outcome.Over {
		return nil
	}
	var out []Move
	for r := 0; r < Size; r++ {
		for f := 0; f < Size; f++ {
			from := Square{f, r}
			if p := s.at(from); p == 0 || owner(p) != s.toMove {
				continue
			}
			for _, to := range s.targets(from) {
				out = append(out, Move{from, to})
			}
		}
	}
	return out
}

// ToMove implements rules.State.
func (s *State) ToMove() rules.Side { return s.toMove }

// Phase implements rules.State.
func (s *State) Phase() string { return "play" }

// Turn implements rules.State.
func (s *State) Turn() int { return s.plies }

// Plies is the number of plies played.
func (s *State) Plies() int { return s.plies }

// Outcome implements rules.State.
func (s *State) Outcome() rules.Outcome { return s.outcome }

// View implements rules.State: the position, the same for both sides.
func (s *State) View(rules.Side) ([]byte, error) { return []byte(s.FEN()), nil }

// Clone implements rules.State.
func (s *State) Clone() rules.State { c := *s; return &c }

// LegalMoves implements rules.State.
func (s *State) LegalMoves() []rules.Move {
	var out []rules.Move
	for _, m := range s.Moves() {
		out = append(out, m)
	}
	return out
}

// EncodeMove implements rules.State.
func (s *State) EncodeMove(m rules.Move) []byte { return []byte(m.String()) }

// ParseMove implements rules.State: four characters, from and to (a2a4).
func (s *State) ParseMove(answer []byte) (rules.Move, error) {
	t := strings.ToLower(strings.TrimSpace(string(answer)))
	sq := func(a, b byte) (Square, bool) {
		q := Square{int(a) - 'a', int(b) - '1'}
		return q, q.on()
	}
	if len(t) != 4 {
		return nil, rules.Formatf("%q is not a move: want four characters such as a2a4 (files a-f, ranks 1-6)", clip(t))
	}
	from, ok1 := sq(t[0], t[1])
	to, ok2 := sq(t[2], t[3])
	if !ok1 || !ok2 {
		return nil, rules.Formatf("%q is not a move: squares run a1 to f6", t)
	}
	return Move{from, to}, nil
}

// Judge implements rules.State.
func (s *State) Judge(mv rules.Move) error {
	m, ok := mv.(Move)
	if !ok {
		return rules.Illegalf("not an ACM 6x6 move: %T", mv)
	}
	if s.outcome.Over {
		return rules.Illegalf("the game is over")
	}
	p := s.at(m.From)
	if p == 0 {
		return rules.Illegalf("%s is empty", m.From)
	}
	if owner(p) != s.toMove {
		return rules.Illegalf("%s holds the opponent's piece", m.From)
	}
	for _, to := range s.targets(m.From) {
		if to == m.To {
			return nil
		}
	}
	return rules.Illegalf("the %s on %s cannot go to %s", pieceName(p), m.From, m.To)
}

func pieceName(p byte) string {
	return map[byte]string{King: "king", Queen: "queen", Rook: "castle", Knight: "knight", Bishop: "bishop", Pawn: "pawn", Star: "star", Joker: "joker"}[p&^0x20]
}

// Apply implements rules.State.
func (s *State) Apply(mv rules.Move) error {
	if err := s.Judge(mv); err != nil {
		return err
	}
	m := mv.(Move)
	p, captured := s.at(m.From), s.at(m.To)
	s.board[m.From.R][m.From.F] = 0
	if p&^0x20 == Pawn && (m.To.R == 0 || m.To.R == Size-1) {
		p = Joker | (p & 0x20) // keep the case: the colour
	}
	s.board[m.To.R][m.To.F] = p
	s.plies++
	me := s.toMove
	s.toMove = me.Other()
	switch {
	case captured&^0x20 == King:
		s.outcome = rules.Outcome{Over: true, Winner: me, Reason: rules.ReasonKingCaptured}
	case s.plies >= 2*s.opts.MaxMoves:
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonMaxPlies}
	case len(s.Moves()) == 0:
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonNoLegalMove}
	}
	return nil
}

// Frame implements rules.Framer.
func (s *State) Frame(rules.Side) rules.Frame {
	f := rules.Frame{Cells: make([][]string, Size), Notes: []string{"position " + s.FEN()}}
	for i := range f.Cells {
		r := Size - 1 - i
		f.Cells[i] = make([]string, Size)
		for file := 0; file < Size; file++ {
			if p := s.board[r][file]; p != 0 {
				f.Cells[i][file] = string(p)
			}
		}
	}
	return f
}

// Perft counts the positions depth plies ahead.
func (s *State) Perft(depth int) int64 {
	if depth == 0 || s.outcome.Over {
		return 1
	}
	var n int64
	for _, m := range s.Moves() {
		c := *s
		c.Apply(m)
		n += c.Perft(depth - 1)
	}
	return n
}
