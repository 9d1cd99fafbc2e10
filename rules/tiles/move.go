package tiles

import (
	"strconv"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Kind says which of the three shapes a line has.
type Kind uint8

// The shapes of a line: commands (TERMINATE, TELEPORT i, MOVE d, LAY, in
// that order), INFO alone, or DESTROY alone.
const (
	Commands Kind = iota
	Info
	Destroy
)

// Move is one answer line. For Commands at least one of Terminate, Teleport,
// Dir and Lay is set.
type Move struct {
	Kind      Kind
	Terminate bool
	// Teleport is set for TELEPORT; Index is its tile index as written (an
	// index of more than nine digits is kept as maxIndex, out of every range).
	Teleport bool
	Index    int
	// Dir is 0 without MOVE, else 'U', 'D', 'L' or 'R'.
	Dir byte
	Lay bool
}

// maxIndex stands for a TELEPORT index too long to be a tile's.
const maxIndex = 1_000_000_000

// String is the canonical line: INFO, DESTROY, or the commands in order,
// separated by single spaces.
func (m Move) String() string {
	switch m.Kind {
	case Info:
		return "INFO"
	case Destroy:
		return "DESTROY"
	}
	var b strings.Builder
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	if m.Terminate {
		add("TERMINATE")
	}
	if m.Teleport {
		add("TELEPORT " + strconv.Itoa(m.Index))
	}
	if m.Dir != 0 {
		add("MOVE " + string(m.Dir))
	}
	if m.Lay {
		add("LAY")
	}
	return b.String()
}

// asMove reads a rules.Move of this game: a Move, or a *Move as LegalMoves
// returns them.
func asMove(m rules.Move) (Move, bool) {
	switch v := m.(type) {
	case Move:
		return v, true
	case *Move:
		if v != nil {
			return *v, true
		}
	}
	return Move{}, false
}

// The commands' places in a line.
const (
	rankTerminate = iota
	rankTeleport
	rankMove
	rankLay
)

// ParseMove reads one answer line. Tokens are separated by one or more
// spaces; spaces around the line and a carriage return or newline at its end
// are ignored. Anything that is not INFO, DESTROY or the commands in their
// order, each at most once, is a *rules.FormatError. Whether the line is
// allowed in the position is Judge's question.
func ParseMove(answer []byte) (Move, error) {
	line := strings.TrimRight(string(answer), "\r\n")
	line = strings.Trim(line, " ")
	if line == "" {
		return Move{}, rules.Formatf("empty line: want INFO, DESTROY, or TERMINATE, TELEPORT i, MOVE U|D|L|R, LAY in that order")
	}
	toks := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' })
	switch toks[0] {
	case "INFO", "DESTROY":
		if len(toks) != 1 {
			return Move{}, rules.Formatf("%q: %s stands alone on its line", clip(line), toks[0])
		}
		if toks[0] == "INFO" {
			return Move{Kind: Info}, nil
		}
		return Move{Kind: Destroy}, nil
	}
	var m Move
	last := -1
	order := func(tok string, rank int) error {
		if rank <= last {
			return rules.Formatf("%q: %s repeated or out of order (the order is TERMINATE, TELEPORT i, MOVE d, LAY, each at most once)", clip(line), tok)
		}
		last = rank
		return nil
	}
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		switch tok {
		case "TERMINATE":
			if err := order(tok, rankTerminate); err != nil {
				return Move{}, err
			}
			m.Terminate = true
		case "TELEPORT":
			if err := order(tok, rankTeleport); err != nil {
				return Move{}, err
			}
			if i+1 == len(toks) || !digits(toks[i+1]) {
				return Move{}, rules.Formatf("%q: TELEPORT takes a tile index (digits)", clip(line))
			}
			i++
			m.Teleport, m.Index = true, index(toks[i])
		case "MOVE":
			if err := order(tok, rankMove); err != nil {
				return Move{}, err
			}
			if i+1 == len(toks) || len(toks[i+1]) != 1 || !strings.Contains("UDLR", toks[i+1]) {
				return Move{}, rules.Formatf("%q: MOVE takes a direction U, D, L or R", clip(line))
			}
			i++
			m.Dir = toks[i][0]
		case "LAY":
			if err := order(tok, rankLay); err != nil {
				return Move{}, err
			}
			m.Lay = true
		case "INFO", "DESTROY":
			return Move{}, rules.Formatf("%q: %s stands alone on its line", clip(line), tok)
		default:
			return Move{}, rules.Formatf("%q: unknown command %q (want INFO, DESTROY, TERMINATE, TELEPORT i, MOVE d or LAY)", clip(line), clip(tok))
		}
	}
	return m, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// index reads a string of digits, leading zeros allowed; more than nine
// significant digits is maxIndex.
func index(s string) int {
	s = strings.TrimLeft(s, "0")
	if len(s) > 9 {
		return maxIndex
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return min(n, maxIndex)
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
