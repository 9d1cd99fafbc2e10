package chess

import (
	"strings"
	"testing"
)

func TestOpeningsFromFENEPDAndPGN(t *testing.T) {
	text := `# two positions
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1
rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - id "open game"; c0 "1.e4 e5";
`
	list, err := Game{}.Openings([]byte(text), 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("%v %v", list, err)
	}
	if list[0].Name != "line 2" || list[1].Name != "open game" || list[1].Rules["fen"] != "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1" {
		t.Errorf("%+v", list)
	}
	pgn := `[Event "t"]
[White "A"]
[Black "B"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0

[Event "u"]

1. d4 d5 *
`
	list, err = Game{}.Openings([]byte(pgn), 3)
	if err != nil || len(list) != 2 {
		t.Fatalf("%v %v", list, err)
	}
	if list[0].Name != "game 1 (A - B)" || !strings.HasPrefix(list[0].Rules["fen"], "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq") {
		t.Errorf("cut after 3 plies: %+v", list[0])
	}
	if !strings.HasPrefix(list[1].Rules["fen"], "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq") {
		t.Errorf("a game shorter than the cut is taken whole: %+v", list[1])
	}
	for _, bad := range []string{"not a fen at all\n", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq -\n"} {
		if _, err := (Game{}).Openings([]byte("8/8/8/8/8/8/8/K1k5 w - - 0 1\n"+bad), 0); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
