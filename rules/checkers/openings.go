package checkers

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Standard notation numbers the 32 dark squares 1 to 32 from the first
// player's (Black's) back row: its men start on 1-12, the second player's
// (White's) on 21-32. On this package's board the first player sits on rows
// 5-7, so square 1 is at row 7, column 6.

// SquareOf is the board square of standard square n (1..32).
func SquareOf(n int) (Square, bool) {
	if n < 1 || n > 32 {
		return Square{}, false
	}
	r := (n - 1) / 4
	c := 2 * ((n - 1) % 4)
	if r%2 == 0 {
		c++
	}
	return Square{7 - r, 7 - c}, true
}

// NumberOf is the standard number of a dark square (0 for a light one).
func NumberOf(q Square) int {
	r, c := 7-q.R, 7-q.C
	if !q.on() || (r+c)%2 == 0 {
		return 0
	}
	return 4*r + c/2 + 1
}

// StartAt is the position o.Start names (the initial one when empty).
func StartAt(o Options) (*State, error) {
	s := NewState(o)
	start := strings.TrimSpace(o.Start)
	switch {
	case start == "":
		return s, nil
	case strings.Contains(start, ":"):
		return fromFEN(o, start)
	}
	for _, m := range strings.Fields(start) {
		if strings.HasSuffix(m, ".") { // a move number
			continue
		}
		if err := s.PlayNotation(m); err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
	}
	if s.outcome.Over {
		return nil, fmt.Errorf("start: the game is over after %q", start)
	}
	return s, nil
}

// PlayNotation plays one move written in standard notation: a step "9-13",
// or a capture "13x22" (its landing squares "15x24x31" when they matter),
// every jump of it a turn of the same player.
func (s *State) PlayNotation(move string) error {
	sep := "-"
	if strings.Contains(move, "x") {
		sep = "x"
	}
	var path []Square
	for _, f := range strings.Split(move, sep) {
		n, err := strconv.Atoi(f)
		q, ok := SquareOf(n)
		if err != nil || !ok {
			return fmt.Errorf("%q is not a move in standard notation (9-13, 13x22)", move)
		}
		path = append(path, q)
	}
	if len(path) < 2 {
		return fmt.Errorf("%q is not a move in standard notation (9-13, 13x22)", move)
	}
	if sep == "-" && len(path) == 2 {
		for _, m := range s.Moves() {
			if m.From == path[0] && m.To == path[1] && !m.jump() {
				return s.Apply(s.relative(m))
			}
		}
		// A jump written with a dash, as older books do.
	}
	next, ok := s.jumpTo(path[0], path[1:])
	if !ok {
		return fmt.Errorf("%s is not legal here", move)
	}
	*s = *next
	return nil
}

// jumpTo plays jumps from the piece on from through the landing squares
// via (the last one where the capture ends; between them any path), as
// long as the same player keeps capturing.
func (s *State) jumpTo(from Square, via []Square) (*State, bool) {
	for _, m := range s.Moves() {
		if m.From != from || !m.jump() {
			continue
		}
		c := s.Clone().(*State)
		if c.Apply(c.relative(m)) != nil {
			continue
		}
		rest := via
		if m.To == via[0] {
			rest = via[1:]
		}
		more := c.chain != nil && !c.outcome.Over
		switch {
		case len(rest) == 0 && !more:
			return c, true
		case more && len(rest) > 0:
			if out, ok := c.jumpTo(m.To, rest); ok {
				return out, true
			}
		}
	}
	return nil, false
}

// fromFEN reads PDN's FEN of English checkers: the side to move (B: the
// first player, W: the second), then each side's squares, a K before a
// king's ("B:W18,24,27,K28:B12,16,20,K22").
func fromFEN(o Options, fen string) (*State, error) {
	fen = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(fen), `[FEN "`), `"]`)
	parts := strings.Split(strings.TrimSuffix(fen, "."), ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("start: %q: want a PDN FEN such as B:W21,22:B1,2", clip(fen))
	}
	s := NewState(o)
	s.board = [8][8]int8{}
	switch strings.ToUpper(parts[0]) {
	case "B":
		s.toMove = rules.White
	case "W":
		s.toMove = rules.Black
	default:
		return nil, fmt.Errorf("start: %q: the side to move must be B or W", clip(fen))
	}
	for _, part := range parts[1:] {
		if part == "" {
			return nil, fmt.Errorf("start: %q: an empty side", clip(fen))
		}
		man, king := int8(FirstMan), int8(FirstK) // Black: the first player
		switch part[0] {
		case 'B', 'b':
		case 'W', 'w':
			man, king = OtherMan, OtherK
		default:
			return nil, fmt.Errorf("start: %q: a side must begin with B or W", clip(fen))
		}
		for _, f := range strings.Split(part[1:], ",") {
			f = strings.TrimSpace(f)
			p := man
			if k, ok := strings.CutPrefix(strings.ToUpper(f), "K"); ok {
				f, p = k, king
			}
			n, err := strconv.Atoi(f)
			q, ok := SquareOf(n)
			if f == "" {
				continue
			}
			if err != nil || !ok || s.at(q) != Empty {
				return nil, fmt.Errorf("start: %q: square %q", clip(fen), f)
			}
			s.board[q.R][q.C] = p
		}
	}
	s.seen = map[string]int{}
	s.note()
	if len(s.Moves()) == 0 {
		return nil, fmt.Errorf("start: %q: the side to move has no move", clip(fen))
	}
	return s, nil
}

// Openings implements rules.Opener: one opening per line, moves in
// standard notation from the initial position ("9-13 22-18 6-9", an ACF
// number or a name before a tab or a colon names it) or a PDN FEN.
func (Game) Openings(text []byte, _ int) ([]rules.Opening, error) {
	lines, numbers := rules.OpeningLines(text)
	var out []rules.Opening
	for i, l := range lines {
		name := fmt.Sprintf("line %d", numbers[i])
		if k, v, ok := strings.Cut(l, "\t"); ok {
			name, l = strings.TrimSpace(k), strings.TrimSpace(v)
		} else if k, v, ok := strings.Cut(l, ": "); ok && !strings.ContainsAny(k, "-x") {
			name, l = strings.TrimSpace(k), strings.TrimSpace(v)
		}
		o := DefaultOptions()
		o.MenCaptureBackward = false // checked again under the event's rules
		o.Start = l
		if _, err := StartAt(o); err != nil {
			return nil, fmt.Errorf("line %d: %w", numbers[i], err)
		}
		out = append(out, rules.Opening{Name: name, Rules: map[string]string{"start": l}})
	}
	return out, nil
}

//go:embed acf3.txt
var acf3 []byte

// Deck implements rules.Opener: "acf3" is the ACF's three-move deck, 156
// ballots named "ACF N" by their ACF numbers.
func (g Game) Deck(name string) ([]rules.Opening, bool) {
	if name != "acf3" {
		return nil, false
	}
	list, err := g.Openings(acf3, 0)
	if err != nil {
		panic("the ACF deck: " + err.Error()) // its test reads every ballot
	}
	for i := range list {
		list[i].Name = "ACF " + list[i].Name
	}
	return list, true
}

// Notation implements rules.Notator: standard notation, "9-13" or, for one
// jump, "13x22" (a capture of several jumps is several turns).
func (Game) Notation(before rules.State, m rules.Move) string {
	s := before.(*State)
	a := s.relative(m.(Move))
	sep := "-"
	if a.jump() {
		sep = "x"
	}
	return fmt.Sprintf("%d%s%d", NumberOf(a.From), sep, NumberOf(a.To))
}
