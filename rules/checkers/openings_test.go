package checkers

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

func TestStandardNumbersMapOntoTheBoard(t *testing.T) {
	seen := map[Square]bool{}
	for n := 1; n <= 32; n++ {
		q, ok := SquareOf(n)
		if !ok || (q.R+q.C)%2 == 0 || seen[q] || NumberOf(q) != n {
			t.Fatalf("square %d: %v %v, back %d", n, q, ok, NumberOf(q))
		}
		seen[q] = true
	}
	start := NewState(DefaultOptions())
	for n := 1; n <= 32; n++ {
		q, _ := SquareOf(n)
		want := int8(Empty)
		switch {
		case n <= 12:
			want = FirstMan // Black, who moves first
		case n >= 21:
			want = OtherMan
		}
		if start.at(q) != want {
			t.Errorf("square %d holds %d at the start, want %d", n, start.at(q), want)
		}
	}
	if _, ok := SquareOf(33); ok {
		t.Error("square 33")
	}
}

// Every ballot of the ACF deck is played by the move generator from the
// initial position under standard rules (men capture forwards only), the
// deck has 156 distinct ballots, and its numbers are the ACF's: 1 to 174
// without the 18 barred ones.
func TestTheACFDeckIsLegalAndComplete(t *testing.T) {
	deck, ok := Game{}.Deck("acf3")
	if !ok || len(deck) != 156 {
		t.Fatalf("%d ballots", len(deck))
	}
	barred := map[string]bool{}
	for _, n := range strings.Fields("3 13 26 35 44 45 48 52 77 88 94 109 114 137 145 156 168 171") {
		barred["ACF "+n] = true
	}
	names, moves, positions := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, b := range deck {
		if names[b.Name] || moves[b.Rules["start"]] || barred[b.Name] {
			t.Errorf("%s (%s) twice or barred", b.Name, b.Rules["start"])
		}
		names[b.Name], moves[b.Rules["start"]] = true, true
		st, err := Game{}.New(map[string]string{"menCaptureBackward": "false", "start": b.Rules["start"]}, 1)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		s := st.(*State)
		if s.ToMove() != rules.Black || s.Outcome().Over {
			t.Errorf("%s: after three moves the second player is to move: %v %+v", b.Name, s.ToMove(), s.Outcome())
		}
		positions[s.key()] = true
	}
	if len(positions) != 156 {
		t.Errorf("%d distinct positions", len(positions))
	}
	if !names["ACF 1"] || !names["ACF 174"] || names["ACF 175"] {
		t.Error("numbering")
	}
	if _, ok := (Game{}).Deck("acf2"); ok {
		t.Error("a deck that is not there")
	}
}

func TestStartFromMovesOrAFEN(t *testing.T) {
	// 9-13 22-17 13x22 then 25x18: the capture is the only legal reply.
	s, err := StartAt(Options{Start: "9-13 22-17 13x22", NoProgressMoves: 20, Repetition: 3})
	if err != nil {
		t.Fatal(err)
	}
	if mv := s.Moves(); len(mv) != 2 || !mv[0].jump() {
		t.Errorf("White must recapture: %v", mv)
	}
	for _, bad := range []string{"9-18", "9-13 9-13", "21-17", "9-13 22-18 13x22", "a-b", "9"} {
		if _, err := StartAt(Options{Start: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A double jump, its landing squares given or not.
	fen := "B:W14,23:B9"
	for _, m := range []string{"9x27", "9x18x27"} {
		s, err := StartAt(Options{Start: fen})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PlayNotation(m); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if q, _ := SquareOf(27); s.at(q) != FirstMan || !s.Outcome().Over {
			t.Errorf("%s: %+v", m, s.Outcome())
		}
	}
	s, err = StartAt(Options{Start: `[FEN "W:WK5,30:B1,2"]`})
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := SquareOf(5); s.at(q) != OtherK || s.ToMove() != rules.Black {
		t.Errorf("king on 5: %d, to move %v", s.at(q), s.ToMove())
	}
	for _, bad := range []string{"B:W1:B1", "X:W1:B2", "B:W1", "B:W40:B1", "B::B1"} {
		if _, err := StartAt(Options{Start: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOpeningsFileNamesItsLines(t *testing.T) {
	text := "# a comment\n11-15 23-19 8-11\nkelso: 10-15 23-19 6-10\n\n12\t9-13 22-18 6-9\nB:W21,22:B1,2\n"
	list, err := Game{}.Openings([]byte(text), 0)
	if err != nil || len(list) != 4 {
		t.Fatalf("%v %v", list, err)
	}
	if list[0].Name != "line 2" || list[1].Name != "kelso" || list[2].Name != "12" || list[2].Rules["start"] != "9-13 22-18 6-9" {
		t.Errorf("%+v", list)
	}
	if _, err := (Game{}).Openings([]byte("11-15\n9-18 22-18\n"), 0); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("%v", err)
	}
}
