package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
)

// resultToken is the game's result as PGN and PDN write it, for the side
// the format calls White.
func resultToken(winner string, whiteIs rules.Side) string {
	switch winner {
	case transcript.WinnerDraw:
		return "1/2-1/2"
	case transcript.WinnerWhite, transcript.WinnerBlack:
		won := rules.White
		if winner == transcript.WinnerBlack {
			won = rules.Black
		}
		if won == whiteIs {
			return "1-0"
		}
		return "0-1"
	}
	return "*"
}

// termination is PGN's Termination tag for how the game ended.
func (g *game) termination() string {
	r := g.result
	switch {
	case r.Reason == transcript.ReasonAborted || r.Winner == transcript.WinnerNone:
		return "unterminated"
	case r.Reason == rules.ReasonMaxPlies:
		return "adjudication"
	}
	if f, ok := r.Forfeit(); ok {
		if f.Verdict == string(rules.Timeout) {
			return "time forfeit"
		}
		return "rules infraction"
	}
	return "normal"
}

// tag writes one tag pair, its value escaped.
func tag(b *strings.Builder, name, value string) {
	value = strings.ReplaceAll(strings.ReplaceAll(value, `\`, `\\`), `"`, `\"`)
	fmt.Fprintf(b, "[%s \"%s\"]\n", name, value)
}

// date is the header's start as YYYY.MM.DD ("????.??.??" when unknown).
func (g *game) date() string {
	t, err := time.Parse(time.RFC3339, g.header.StartedAt)
	if err != nil {
		return "????.??.??"
	}
	return t.UTC().Format("2006.01.02")
}

// clk is a PGN clock comment: the time left, h:mm:ss.
func clk(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("{[%%clk %d:%02d:%02d]}", s/3600, s/60%60, s%60)
}

func (g *game) write(w io.Writer, format string) error {
	var b strings.Builder
	if format == PGN {
		g.pgn(&b)
	} else {
		g.pdn(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// common writes the tags both formats share, White and Black as the format
// names them.
func (g *game) common(b *strings.Builder, white, black, result string) {
	tag(b, "Event", g.event)
	tag(b, "Site", "arena")
	tag(b, "Date", g.date())
	tag(b, "Round", g.round)
	tag(b, "White", white)
	tag(b, "Black", black)
	tag(b, "Result", result)
}

// extra writes arena's own tags: the pair and the opening of a
// tournament's game.
func (g *game) extra(b *strings.Builder) {
	if j := g.header.Job; j != nil {
		if j.Pair > 0 {
			tag(b, "ArenaPair", strconv.Itoa(j.Pair))
		}
		if j.Opening != "" {
			tag(b, "ArenaOpening", j.Opening)
		}
	}
}

// movetext writes numbered moves wrapped at 79 columns, then the result.
func movetext(b *strings.Builder, tokens []string, result string) {
	line := 0
	for _, t := range append(tokens, result) {
		if line > 0 && line+1+len(t) > 79 {
			b.WriteByte('\n')
			line = 0
		} else if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(t)
		line += len(t)
	}
	b.WriteString("\n\n")
}

// pgn writes the game as PGN: the seven tags, the start position when it is
// not the standard one, the termination and time control, and the moves in
// SAN with the time each side had left.
func (g *game) pgn(b *strings.Builder) {
	result := resultToken(g.result.Winner, rules.White)
	g.common(b, g.header.White.Name, g.header.Black.Name, result)
	fen := g.header.Rules["fen"]
	moveNo, blackFirst := 1, false
	if fen != "" {
		tag(b, "SetUp", "1")
		tag(b, "FEN", fen)
		f := strings.Fields(fen)
		blackFirst = len(f) > 1 && f[1] == "b"
		if len(f) > 5 {
			if n, err := strconv.Atoi(f[5]); err == nil && n > 0 {
				moveNo = n
			}
		}
	}
	tag(b, "Termination", g.termination())
	if tc := g.header.TimeControl; tc != nil && tc.GameTime > 0 {
		tag(b, "TimeControl", strconv.Itoa(int(tc.GameTime/time.Second)))
	}
	g.extra(b)
	b.WriteByte('\n')
	var tokens []string
	for i, m := range g.moves {
		switch {
		case m.side == rules.White:
			tokens = append(tokens, fmt.Sprintf("%d.", moveNo))
		case i == 0 && blackFirst:
			tokens = append(tokens, fmt.Sprintf("%d...", moveNo))
		}
		tokens = append(tokens, m.text)
		if m.bank {
			tokens = append(tokens, clk(m.left))
		}
		if m.side == rules.Black {
			moveNo++
		}
	}
	movetext(b, tokens, result)
}

// pdn writes the game as PDN 3.0 for English checkers (GameType 21): Black
// is the first player, arena's White; the opening's moves, when the game
// began from a sequence of them, are the game's first moves, and a capture
// of several jumps (several turns here) is one move, 15x24x31.
func (g *game) pdn(b *strings.Builder) {
	result := resultToken(g.result.Winner, rules.Black) // PDN's White moves second
	g.common(b, g.header.Black.Name, g.header.White.Name, result)
	tag(b, "GameType", "21")
	start := strings.TrimSpace(g.header.Rules["start"])
	var opening []string
	if strings.Contains(start, ":") {
		tag(b, "SetUp", "1")
		tag(b, "FEN", start)
	} else if start != "" {
		for _, f := range strings.Fields(start) {
			if !strings.HasSuffix(f, ".") {
				opening = append(opening, f)
			}
		}
	}
	g.extra(b)
	b.WriteByte('\n')
	// Whole moves: the opening's, then the turns, jumps of one capture
	// joined.
	type whole struct {
		text  string
		first bool // the first player's
	}
	var moves []whole
	for i, m := range opening {
		moves = append(moves, whole{m, i%2 == 0})
	}
	for _, m := range g.moves {
		first := m.side == rules.White
		if n := len(moves); n > 0 && moves[n-1].first == first && strings.Contains(moves[n-1].text, "x") && strings.Contains(m.text, "x") {
			_, to, _ := strings.Cut(m.text, "x")
			moves[n-1].text += "x" + to
			continue
		}
		moves = append(moves, whole{m.text, first})
	}
	var tokens []string
	moveNo := 1
	for i, m := range moves {
		switch {
		case m.first:
			tokens = append(tokens, fmt.Sprintf("%d.", moveNo))
		case i == 0:
			tokens = append(tokens, fmt.Sprintf("%d...", moveNo))
		}
		tokens = append(tokens, m.text)
		if !m.first {
			moveNo++
		}
	}
	movetext(b, tokens, result)
}
