// Package checkers is English checkers as the university tournament framework
// plays it: 8x8, captures mandatory with a free choice among them, a capturing
// piece must keep capturing (each jump is one turn of the same player), kings
// move one square, men capture backwards too, a man reaching the far row is
// crowned (which ends its turn), the side without a move loses, and threefold
// repetition or 20 moves each without a man move or capture draw. A move that
// is the only legal one is played without asking the bot.
package checkers

import (
	"fmt"
	"strings"
	"time"

	"github.com/arenabots/arena/rules"
)

// Squares hold 0 (empty) or a piece, from the first player's side: 1 its man,
// 2 the second player's man, 3 its king, 4 the second player's king. Dark
// squares are those with (row+col) odd; the first player starts on rows 5-7 and
// moves up (towards row 0).
const (
	Empty    = 0
	FirstMan = 1
	OtherMan = 2
	FirstK   = 3
	OtherK   = 4
)

// Square is (row, col).
type Square struct{ R, C int }

func (q Square) on() bool { return q.R >= 0 && q.R < 8 && q.C >= 0 && q.C < 8 }

// Move is one step or one jump, in absolute coordinates.
type Move struct{ From, To Square }

func (m Move) jump() bool { return abs(m.To.R-m.From.R) == 2 }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// String is the move as the mover sees it: four digits, row and column of
// the start and the end (from the first player's side for the first player,
// turned around for the second).
func (m Move) String() string { return fmt.Sprintf("%d%d%d%d", m.From.R, m.From.C, m.To.R, m.To.C) }

// Options are the rule choices.
type Options struct {
	// MenCaptureBackward: men capture in all four diagonal directions (the
	// framework's rule, default) or only forward (standard English checkers).
	MenCaptureBackward bool
	// NoProgressMoves draws after this many moves of each side without a man
	// moving or a capture (default 20).
	NoProgressMoves int
	// Repetition draws on the Nth occurrence of a position (default 3).
	Repetition int
	// MaxPlies draws after this many turns whatever happens (default 500).
	MaxPlies int
	// GameTime is each side's time bank and MoveTime the longest one move
	// may take; the harness applies them.
	GameTime, MoveTime time.Duration
	// Start is where the game begins: moves in standard notation played
	// from the initial position ("9-13 22-18 6-9"), or a position as PDN's
	// FEN tag gives it ("B:W21,22,...:B1,2,..."); empty: the initial
	// position.
	Start string
}

// State is a position.
type State struct {
	opts    Options
	board   [8][8]int8
	toMove  rules.Side
	chain   *Square // a piece that must keep capturing
	plies   int
	quiet   int            // turns since a man moved or a piece was captured
	seen    map[string]int // position counts, when the repetition rule is on
	outcome rules.Outcome
}

// NewState is the starting position.
func NewState(o Options) *State {
	s := &State{opts: o, seen: map[string]int{}, outcome: rules.Outcome{Winner: rules.NoSide}}
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			if (r+c)%2 == 1 {
				switch {
				case r <= 2:
					s.board[r][c] = OtherMan
				case r >= 5:
					s.board[r][c] = FirstMan
				}
			}
		}
	}
	s.note()
	return s
}

// note counts the position for the repetition rule.
func (s *State) note() int {
	if s.opts.Repetition == 0 {
		return 0
	}
	s.seen[s.key()]++
	return s.seen[s.key()]
}

func owner(p int8) rules.Side {
	if p == FirstMan || p == FirstK {
		return rules.White
	}
	return rules.Black
}

func isKing(p int8) bool { return p == FirstK || p == OtherK }

func (s *State) at(q Square) int8 { return s.board[q.R][q.C] }

// forward is the row direction a side's men move.
func forward(side rules.Side) int {
	if side == rules.White {
		return -1
	}
	return 1
}

// steps lists the piece's simple moves and jumps, ignoring the must-capture
// rule.
func (s *State) steps(from Square) (moves, jumps []Move) {
	p := s.at(from)
	me := owner(p)
	for _, dr := range []int{-1, 1} {
		for _, dc := range []int{-1, 1} {
			forwardDir := dr == forward(me)
			one := Square{from.R + dr, from.C + dc}
			if (isKing(p) || forwardDir) && one.on() && s.at(one) == Empty {
				moves = append(moves, Move{from, one})
			}
			if !isKing(p) && !forwardDir && !s.opts.MenCaptureBackward {
				continue
			}
			two := Square{from.R + 2*dr, from.C + 2*dc}
			if two.on() && s.at(two) == Empty && s.at(one) != Empty && owner(s.at(one)) != me {
				jumps = append(jumps, Move{from, two})
			}
		}
	}
	return moves, jumps
}

// Moves lists the legal moves (single steps or single jumps) in square order.
func (s *State) Moves() []Move {
	if s.outcome.Over {
		return nil
	}
	if s.chain != nil {
		_, jumps := s.steps(*s.chain)
		return jumps
	}
	var moves, jumps []Move
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			q := Square{r, c}
			if p := s.at(q); p != Empty && owner(p) == s.toMove {
				m, j := s.steps(q)
				moves = append(moves, m...)
				jumps = append(jumps, j...)
			}
		}
	}
	if len(jumps) > 0 {
		return jumps
	}
	return moves
}

func (s *State) key() string {
	var b strings.Builder
	for r := range s.board {
		for _, p := range s.board[r] {
			b.WriteByte(byte('0' + p))
		}
	}
	b.WriteByte(byte('0' + s.toMove))
	return b.String()
}

// ToMove implements rules.State.
func (s *State) ToMove() rules.Side { return s.toMove }

// Phase implements rules.State.
func (s *State) Phase() string { return "play" }

// Turn implements rules.State.
func (s *State) Turn() int { return s.plies }

// Plies is the number of turns played (every jump of a chain is a turn).
func (s *State) Plies() int { return s.plies }

// Outcome implements rules.State.
func (s *State) Outcome() rules.Outcome { return s.outcome }

// Clone implements rules.State.
func (s *State) Clone() rules.State {
	c := *s
	if s.chain != nil {
		q := *s.chain
		c.chain = &q
	}
	if s.opts.Repetition > 0 {
		c.seen = make(map[string]int, len(s.seen))
		for k, v := range s.seen {
			c.seen[k] = v
		}
	}
	return &c
}

// LegalMoves implements rules.State.
func (s *State) LegalMoves() []rules.Move {
	var out []rules.Move
	for _, m := range s.Moves() {
		out = append(out, s.relative(m))
	}
	return out
}

// relative turns an absolute move into the mover's coordinates and back (the
// turn is its own inverse).
func (s *State) relative(m Move) Move {
	if s.toMove == rules.White {
		return m
	}
	flip := func(q Square) Square { return Square{7 - q.R, 7 - q.C} }
	return Move{flip(m.From), flip(m.To)}
}

// EncodeMove implements rules.State: the mover's four digits.
func (s *State) EncodeMove(m rules.Move) []byte { return []byte(m.String()) }

// ParseMove implements rules.State: the four digits r1 c1 r2 c2 in the mover's
// coordinates, with any separators ("5 1 4 0", "((5,1),(4,0))").
func (s *State) ParseMove(answer []byte) (rules.Move, error) {
	var d []int
	for _, ch := range strings.TrimSpace(string(answer)) {
		switch {
		case ch >= '0' && ch <= '9':
			d = append(d, int(ch-'0'))
		case strings.ContainsRune(" ,()[]-", ch):
		default:
			return nil, rules.Formatf("%q is not a move: want four digits, row and column of the start and the end, such as 5140", clip(string(answer)))
		}
	}
	if len(d) != 4 || d[0] > 7 || d[1] > 7 || d[2] > 7 || d[3] > 7 {
		return nil, rules.Formatf("%q is not a move: want four digits 0-7, such as 5140", clip(string(answer)))
	}
	return Move{Square{d[0], d[1]}, Square{d[2], d[3]}}, nil
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Judge implements rules.State. m is in the mover's coordinates.
func (s *State) Judge(mv rules.Move) error {
	m, ok := mv.(Move)
	if !ok {
		return rules.Illegalf("not a checkers move: %T", mv)
	}
	if s.outcome.Over {
		return rules.Illegalf("the game is over")
	}
	abs := s.relative(m)
	legal := s.Moves()
	for _, l := range legal {
		if l == abs {
			return nil
		}
	}
	switch {
	case s.chain != nil:
		q := s.relative(Move{*s.chain, *s.chain}).From
		return rules.Illegalf("%s: the piece on %d%d has just captured and must capture again", m, q.R, q.C)
	case len(legal) > 0 && legal[0].jump():
		return rules.Illegalf("%s: a capture is available, and capturing is mandatory", m)
	}
	return rules.Illegalf("%s is not a legal move", m)
}

// Apply implements rules.State. m is in the mover's coordinates.
func (s *State) Apply(mv rules.Move) error {
	if err := s.Judge(mv); err != nil {
		return err
	}
	m := s.relative(mv.(Move))
	me := s.toMove
	p := s.at(m.From)
	s.board[m.From.R][m.From.C] = Empty
	crowned := false
	if !isKing(p) && (m.To.R == 0 || m.To.R == 7) {
		p += 2
		crowned = true
	}
	s.board[m.To.R][m.To.C] = p
	s.plies++
	if m.jump() {
		s.board[(m.From.R+m.To.R)/2][(m.From.C+m.To.C)/2] = Empty
		s.quiet = 0
		if !crowned {
			if _, more := s.steps(m.To); len(more) > 0 {
				to := m.To
				s.chain = &to
				return nil // the same player goes on capturing
			}
		}
	} else if !isKing(p) || crowned {
		s.quiet = 0
	} else {
		s.quiet++
	}
	s.chain = nil
	s.toMove = me.Other()
	seen := s.note()
	switch {
	case len(s.Moves()) == 0:
		s.outcome = rules.Outcome{Over: true, Winner: me, Reason: rules.ReasonNoLegalMove}
	case s.opts.Repetition > 0 && seen >= s.opts.Repetition:
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonRepetition}
	case s.opts.NoProgressMoves > 0 && s.quiet >= 2*s.opts.NoProgressMoves:
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonNoProgress}
	case s.opts.MaxPlies > 0 && s.plies >= s.opts.MaxPlies:
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonMaxPlies}
	}
	return nil
}

// View implements rules.State: the request's board from side's point of view,
// 64 characters row by row: '-' a light square, '0' empty, '1' own man, '2'
// the opponent's man, '3' own king, '4' the opponent's king.
func (s *State) View(side rules.Side) ([]byte, error) {
	var b strings.Builder
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			q := Square{r, c}
			if side == rules.Black {
				q = Square{7 - r, 7 - c}
			}
			if (q.R+q.C)%2 == 0 {
				b.WriteByte('-')
				continue
			}
			p := s.at(q)
			if side == rules.Black && p != Empty {
				p = map[int8]int8{FirstMan: OtherMan, OtherMan: FirstMan, FirstK: OtherK, OtherK: FirstK}[p]
			}
			b.WriteByte(byte('0' + p))
		}
	}
	return []byte(b.String()), nil
}

// Frame implements rules.Framer: men as m (first player upper case), kings as
// K, from the first player's side.
func (s *State) Frame(rules.Side) rules.Frame {
	f := rules.Frame{Cells: make([][]string, 8)}
	for r := 0; r < 8; r++ {
		f.Cells[r] = make([]string, 8)
		for c := 0; c < 8; c++ {
			f.Cells[r][c] = map[int8]string{FirstMan: "M", OtherMan: "m", FirstK: "K", OtherK: "k"}[s.board[r][c]]
		}
	}
	if s.chain != nil {
		f.Notes = append(f.Notes, fmt.Sprintf("the piece on row %d, column %d must keep capturing", s.chain.R, s.chain.C))
	}
	f.Notes = append(f.Notes, fmt.Sprintf("%d turns without a man move or a capture", s.quiet))
	return f
}

// Perft counts the positions depth moves ahead, a whole capture sequence being
// one move (as the published tables count).
func (s *State) Perft(depth int) int64 {
	if depth == 0 {
		return 1
	}
	var n int64
	for _, next := range s.sequences() {
		n += next.Perft(depth - 1)
	}
	return n
}

// sequences lists the positions after each complete move of the side to move.
func (s *State) sequences() []*State {
	var out []*State
	for _, m := range s.Moves() {
		c := s.Clone().(*State)
		c.Apply(c.relative(m))
		if c.chain != nil && c.toMove == s.toMove {
			out = append(out, c.sequences()...)
		} else {
			out = append(out, c)
		}
	}
	return out
}
