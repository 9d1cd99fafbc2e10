package chess

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	cc "github.com/corentings/chess/v2"

	"github.com/arenabots/arena/rules"
)

// Openings implements rules.Opener. A file of PGN games (its first
// character '[' or a move number) gives each game's position after plies
// half-moves (0: its last), named by its Event/White/Black tags; any other
// file is one position per line, a FEN or an EPD (its four fields, then
// operations: an id operation names it). Each becomes the fen option.
func (Game) Openings(text []byte, plies int) ([]rules.Opening, error) {
	trimmed := bytes.TrimSpace(text)
	if bytes.HasPrefix(trimmed, []byte("[")) || moveNumber.Match(trimmed) {
		return pgnOpenings(trimmed, plies)
	}
	lines, numbers := rules.OpeningLines(text)
	var out []rules.Opening
	for i, l := range lines {
		fen, name, err := epd(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", numbers[i], err)
		}
		if name == "" {
			name = fmt.Sprintf("line %d", numbers[i])
		}
		out = append(out, rules.Opening{Name: name, Rules: map[string]string{"fen": fen}})
	}
	return out, nil
}

// Deck implements rules.Opener: chess has no deck built in.
func (Game) Deck(string) ([]rules.Opening, bool) { return nil, false }

var moveNumber = regexp.MustCompile(`^[0-9]+\.`)

var epdID = regexp.MustCompile(`\bid\s+"([^"]*)"`)

// epd reads a FEN, or an EPD's position and id.
func epd(line string) (fen, name string, err error) {
	f := strings.Fields(line)
	if len(f) < 4 {
		return "", "", fmt.Errorf("%q: want a FEN or an EPD (placement, side, castling, en passant...)", clip(line))
	}
	if len(f) >= 6 && isCount(f[4]) && isCount(strings.TrimSuffix(f[5], ";")) {
		fen = strings.Join(f[:4], " ") + " " + f[4] + " " + strings.TrimSuffix(f[5], ";")
	} else {
		fen = strings.Join(f[:4], " ") + " 0 1"
		if m := epdID.FindStringSubmatch(line); m != nil {
			name = m[1]
		}
	}
	if _, err := position(fen); err != nil {
		return "", "", fmt.Errorf("%q is not a position: %v", clip(line), err)
	}
	return fen, name, nil
}

func isCount(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0
}

// pgnOpenings are the positions of PGN games after plies half-moves.
func pgnOpenings(text []byte, plies int) ([]rules.Opening, error) {
	// Every game the parser makes starts from a decoded FEN (see fenMu).
	fenMu.Lock()
	defer fenMu.Unlock()
	sc := cc.NewScanner(bytes.NewReader(text))
	var out []rules.Opening
	for n := 1; sc.HasNext(); n++ {
		g, err := sc.ParseNext()
		if err != nil {
			return nil, fmt.Errorf("PGN game %d: %v", n, err)
		}
		pos := g.Positions()
		if len(pos) == 0 {
			return nil, fmt.Errorf("PGN game %d has no position", n)
		}
		at := len(pos) - 1
		if plies > 0 && plies < at {
			at = plies
		}
		name := fmt.Sprintf("game %d", n)
		if w, b := g.GetTagPair("White"), g.GetTagPair("Black"); w != "" && w != "?" && b != "" && b != "?" {
			name = fmt.Sprintf("game %d (%s - %s)", n, w, b)
		} else if e := g.GetTagPair("Event"); e != "" && e != "?" {
			name = fmt.Sprintf("game %d (%s)", n, e)
		}
		out = append(out, rules.Opening{Name: name, Rules: map[string]string{"fen": pos[at].String()}})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no PGN game found")
	}
	return out, nil
}

// Notation implements rules.Notator: standard algebraic notation, with + for
// check and # for mate.
func (Game) Notation(before rules.State, m rules.Move) string {
	mv := m.(Move).m
	return cc.AlgebraicNotation{}.Encode(before.(*State).pos, &mv)
}
