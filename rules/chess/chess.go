// Package chess is standard chess as the Frieda competition plays it: one bot
// process per game speaking lines on stdin and stdout, positions as FEN, moves
// as four characters (e2e4) or O-O / O-O-O, a time bank per side, and A/D status
// lines. The rules themselves (castling, en passant, promotion, check,
// checkmate, stalemate) come from github.com/corentings/chess/v2; arena adds the
// automatic draws and the protocol.
package chess

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	cc "github.com/corentings/chess/v2"

	"github.com/arenabots/arena/rules"
)

// Options are the rule choices.
type Options struct {
	// FEN is the starting position (default: the standard one).
	FEN string
	// FiftyMoves draws the game automatically when 50 moves of each side pass
	// without a capture or a pawn move (default true).
	FiftyMoves bool
	// Repetition draws on the Nth occurrence of a position (default 3; 0 off).
	Repetition int
	// MaxPlies draws after this many plies (default 400; 0 off).
	MaxPlies int
	// GameTime is each side's time bank and MoveTime the longest one move
	// may take; the harness applies them.
	GameTime, MoveTime time.Duration
}

// Move is a legal-looking chess move.
type Move struct {
	m    cc.Move
	wire string
}

func (m Move) String() string { return m.wire }

// State is a chess position with its history.
type State struct {
	opts    Options
	pos     *cc.Position
	start   *cc.Position
	seen    map[string]int
	plies   int
	last    string
	outcome rules.Outcome
}

// fenMu serializes every call into the chess library that decodes a FEN:
// its decoder splits the board into a package-level buffer (rankBuffer in
// fen.go of corentings/chess v2.3.2), so two games starting at once in one
// process, as a tournament's do, would read each other's ranks.
var fenMu sync.Mutex

// decoding runs f, which decodes a FEN in the chess library, alone.
func decoding[T any](f func() (T, error)) (T, error) {
	fenMu.Lock()
	defer fenMu.Unlock()
	return f()
}

// position decodes fen ("": the standard start).
func position(fen string) (*cc.Position, error) {
	return decoding(func() (*cc.Position, error) {
		if fen == "" {
			return cc.StartingPosition(), nil
		}
		f, err := cc.FEN(fen)
		if err != nil {
			return nil, err
		}
		return cc.NewGame(f).Position(), nil
	})
}

// NewState starts a game.
func NewState(o Options) (*State, error) {
	start, err := position(o.FEN)
	if err != nil {
		return nil, fmt.Errorf("fen: %w", err)
	}
	s := &State{opts: o, pos: start, start: start, seen: map[string]int{}, outcome: rules.Outcome{Winner: rules.NoSide}}
	s.seen[repKey(start)]++
	s.checkEnd()
	return s, nil
}

func side(c cc.Color) rules.Side {
	if c == cc.Black {
		return rules.Black
	}
	return rules.White
}

// ToMove implements rules.State.
func (s *State) ToMove() rules.Side { return side(s.pos.Turn()) }

// Phase implements rules.State.
func (s *State) Phase() string { return "play" }

// Turn implements rules.State.
func (s *State) Turn() int { return s.plies }

// Plies is the number of plies played.
func (s *State) Plies() int { return s.plies }

// FEN is the current position.
func (s *State) FEN() string { return s.pos.String() }

// View implements rules.State: the position as FEN, the same for both sides.
func (s *State) View(rules.Side) ([]byte, error) { return []byte(s.pos.String()), nil }

// Outcome implements rules.State.
func (s *State) Outcome() rules.Outcome { return s.outcome }

// Clone implements rules.State.
func (s *State) Clone() rules.State {
	c := *s
	c.seen = make(map[string]int, len(s.seen))
	for k, v := range s.seen {
		c.seen[k] = v
	}
	return &c
}

// wire is how a move is written on the line: O-O and O-O-O for castling, the
// two squares otherwise, and the promotion piece as a fifth letter.
func wire(m cc.Move) string {
	switch {
	case m.HasTag(cc.KingSideCastle):
		return "O-O"
	case m.HasTag(cc.QueenSideCastle):
		return "O-O-O"
	}
	return cc.UCINotation{}.Encode(nil, &m)
}

// LegalMoves implements rules.State.
func (s *State) LegalMoves() []rules.Move {
	if s.outcome.Over {
		return nil
	}
	var out []rules.Move
	for _, m := range s.pos.ValidMoves() {
		out = append(out, Move{m: m, wire: wire(m)})
	}
	return out
}

// EncodeMove implements rules.State.
func (s *State) EncodeMove(m rules.Move) []byte { return []byte(m.String()) }

// ParseMove implements rules.State. It accepts e2e4, e7e8q (a promotion
// without a piece letter is to a queen), O-O and O-O-O (also with zeros),
// upper or lower case, surrounded by spaces.
func (s *State) ParseMove(answer []byte) (rules.Move, error) {
	t := strings.TrimSpace(string(answer))
	switch strings.ToUpper(strings.ReplaceAll(t, "0", "O")) {
	case "O-O", "O-O-O":
		tag := cc.KingSideCastle
		if len(t) == 5 {
			tag = cc.QueenSideCastle
		}
		for _, m := range s.pos.ValidMoves() {
			if m.HasTag(tag) {
				return Move{m: m, wire: wire(m)}, nil
			}
		}
		return nil, rules.Illegalf("%s: castling is not legal here", t)
	}
	low := strings.ToLower(t)
	if len(low) < 4 || len(low) > 5 || low[0] < 'a' || low[0] > 'h' || low[2] < 'a' || low[2] > 'h' ||
		low[1] < '1' || low[1] > '8' || low[3] < '1' || low[3] > '8' || (len(low) == 5 && !strings.ContainsRune("qrbn", rune(low[4]))) {
		return nil, rules.Formatf("%q is not a move: want four characters such as e2e4 (a fifth for a promotion: e7e8q), O-O or O-O-O", clip(t))
	}
	var match []cc.Move
	for _, m := range s.pos.ValidMoves() {
		u := cc.UCINotation{}.Encode(nil, &m)
		if u == low || (len(low) == 4 && len(u) == 5 && u[:4] == low && u[4] == 'q') {
			match = append(match, m)
		}
	}
	if len(match) == 0 {
		return nil, rules.Illegalf("%s is not a legal move in %s", low, s.pos.String())
	}
	return Move{m: match[0], wire: wire(match[0])}, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Judge implements rules.State.
func (s *State) Judge(m rules.Move) error {
	if s.outcome.Over {
		return rules.Illegalf("the game is over")
	}
	cm, ok := m.(Move)
	if !ok {
		return rules.Illegalf("not a chess move: %T", m)
	}
	for _, v := range s.pos.ValidMoves() {
		if v.S1() == cm.m.S1() && v.S2() == cm.m.S2() && v.Promo() == cm.m.Promo() {
			return nil
		}
	}
	return rules.Illegalf("%s is not a legal move", cm.wire)
}

// Apply implements rules.State.
func (s *State) Apply(m rules.Move) error {
	if err := s.Judge(m); err != nil {
		return err
	}
	cm := m.(Move)
	for _, v := range s.pos.ValidMoves() {
		if v.S1() == cm.m.S1() && v.S2() == cm.m.S2() && v.Promo() == cm.m.Promo() {
			s.pos = s.pos.Update(&v)
			break
		}
	}
	s.plies++
	s.last = cm.wire
	s.seen[repKey(s.pos)]++
	s.checkEnd()
	return nil
}

// repKey identifies a position for the repetition rule: the placement, the side
// to move, the castling rights and the en passant square (FEN's first four
// fields), not the move counters.
func repKey(p *cc.Position) string {
	f := strings.Fields(p.String())
	return strings.Join(f[:min(4, len(f))], " ")
}

// Last is the previous move in wire form, or "NONE".
func (s *State) Last() string {
	if s.last == "" {
		return "NONE"
	}
	return s.last
}

func (s *State) checkEnd() {
	switch s.pos.Status() {
	case cc.Checkmate:
		s.outcome = rules.Outcome{Over: true, Winner: s.ToMove().Other(), Reason: rules.ReasonCheckmate}
		return
	case cc.Stalemate:
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonStalemate}
		return
	}
	draw := func(reason string) { s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: reason} }
	switch {
	case insufficient(s.pos.Board()):
		draw(rules.ReasonMaterial)
	case s.opts.Repetition > 0 && s.seen[repKey(s.pos)] >= s.opts.Repetition:
		draw(rules.ReasonRepetition)
	case s.opts.FiftyMoves && s.pos.HalfMoveClock() >= 100:
		draw(rules.ReasonFiftyMoves)
	case s.opts.MaxPlies > 0 && s.plies >= s.opts.MaxPlies:
		draw(rules.ReasonMaxPlies)
	}
}

// insufficient reports a position where neither side can mate: kings alone, a
// king and one minor piece against a king, or only bishops on one colour.
func insufficient(b *cc.Board) bool {
	minors, bishopColours := 0, map[int]bool{}
	onlyBishops := true
	for sq, p := range b.SquareMap() {
		switch p.Type() {
		case cc.King:
		case cc.Bishop:
			minors++
			bishopColours[(int(sq)/8+int(sq)%8)%2] = true
		case cc.Knight:
			minors++
			onlyBishops = false
		default:
			return false
		}
	}
	return minors <= 1 || (onlyBishops && len(bishopColours) == 1)
}

// Perft implements rules.Perfter.
func (s *State) Perft(depth int) int64 { return perft(s.pos, depth) }

func perft(p *cc.Position, depth int) int64 {
	if depth == 0 {
		return 1
	}
	moves := p.ValidMoves()
	if depth == 1 {
		return int64(len(moves))
	}
	var n int64
	for i := range moves {
		n += perft(p.Update(&moves[i]), depth-1)
	}
	return n
}

// Frame implements rules.Framer: the board, rank 8 at the top.
func (s *State) Frame(rules.Side) rules.Frame {
	f := rules.Frame{Cells: make([][]string, 8)}
	b := s.pos.Board()
	for r := 0; r < 8; r++ {
		f.Cells[r] = make([]string, 8)
		for c := 0; c < 8; c++ {
			p := b.Piece(cc.Square((7-r)*8 + c))
			if p == cc.NoPiece {
				continue
			}
			l := strings.ToUpper(p.Type().String())
			if p.Color() == cc.Black {
				l = strings.ToLower(l)
			}
			f.Cells[r][c] = l
		}
	}
	f.Notes = []string{"FEN " + s.pos.String()}
	return f
}

// Render implements rules.Renderer.
func (s *State) Render() string {
	var b strings.Builder
	f := s.Frame(rules.NoSide)
	for r, row := range f.Cells {
		fmt.Fprintf(&b, "%d  ", 8-r)
		for _, c := range row {
			if c == "" {
				c = "."
			}
			b.WriteString(c + " ")
		}
		b.WriteByte('\n')
	}
	b.WriteString("   a b c d e f g h\n")
	return b.String()
}

// seconds is the bank as the protocol's <time>: whole seconds, 0 to 1000.
func seconds(d time.Duration) string {
	n := int(d / time.Second)
	return strconv.Itoa(min(max(n, 0), 1000))
}
