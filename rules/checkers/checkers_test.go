package checkers

import (
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/rulestest"
)

// board builds a position from rows of '.', 'm' (first player's man), 'M'
// (its king), 'o' (second player's man), 'O' (its king).
func board(t *testing.T, toMove rules.Side, rows ...string) *State {
	t.Helper()
	o := DefaultOptions()
	s := NewState(o)
	s.board = [8][8]int8{}
	for r, row := range rows {
		for c, ch := range row {
			s.board[r][c] = map[rune]int8{'m': FirstMan, 'M': FirstK, 'o': OtherMan, 'O': OtherK}[ch]
		}
	}
	s.toMove = toMove
	s.seen = map[string]int{}
	return s
}

func moves(s *State) string {
	var out []string
	for _, m := range s.LegalMoves() {
		out = append(out, m.String())
	}
	return strings.Join(out, ",")
}

func apply(t *testing.T, s *State, w string) {
	t.Helper()
	m, err := s.ParseMove([]byte(w))
	if err == nil {
		err = s.Apply(m)
	}
	if err != nil {
		t.Fatalf("%s: %v", w, err)
	}
}

// Published perft counts for English checkers (standard rules: men capture
// forward only, a whole capture sequence is one move).
func TestPerftMatchesThePublishedTable(t *testing.T) {
	o := DefaultOptions()
	o.MenCaptureBackward, o.Repetition, o.NoProgressMoves, o.MaxPlies = false, 0, 0, 0
	s := NewState(o)
	want := []int64{7, 49, 302, 1469, 7361, 36768, 179740}
	if testing.Short() {
		want = want[:5]
	}
	for d, w := range want {
		if got := s.Perft(d + 1); got != w {
			t.Errorf("perft(%d) = %d, want %d", d+1, got, w)
		}
	}
}

func TestCapturesAreMandatoryAndChainsContinue(t *testing.T) {
	s := board(t, rules.White,
		"........",
		"........",
		"...o....",
		"........",
		".o......",
		"m.......",
		"........",
		"........")
	// The man on 50 must jump the man on 41 (landing on 32): no step is legal.
	if got := moves(s); got != "5032" {
		t.Fatalf("moves %s", got)
	}
	apply(t, s, "5032")
	// From 32 it can jump the man on 23 as well, so it must, as the same player.
	if s.ToMove() != rules.White || s.chain == nil {
		t.Fatalf("the capture chain did not continue: to move %s", s.ToMove())
	}
	if got := moves(s); got != "3214" {
		t.Fatalf("continuation %s", got)
	}
	apply(t, s, "3214")
	if s.ToMove() != rules.Black || s.chain != nil {
		t.Fatal("the turn did not pass after the chain")
	}
	if o := s.Outcome(); !o.Over || o.Winner != rules.White || o.Reason != rules.ReasonNoLegalMove {
		t.Fatalf("black has nothing left: %+v", o)
	}
}

func TestMenCaptureBackwardOnlyWhenTheRuleSaysSo(t *testing.T) {
	rows := []string{
		"........",
		"........",
		"........",
		"..m.....",
		"...o....",
		"........",
		"........",
		"......o.",
	}
	s := board(t, rules.White, rows...)
	if got := moves(s); got != "3254" {
		t.Fatalf("framework rule: %s", got)
	}
	s.opts.MenCaptureBackward = false
	if got := moves(s); got != "3221,3223" {
		t.Fatalf("standard rule: %s", got)
	}
}

func TestKingsMoveOneSquareAndCrowningEndsTheTurn(t *testing.T) {
	s := board(t, rules.White,
		"........",
		"........",
		"........",
		"...M....",
		"........",
		"........",
		"........",
		"o.......")
	if got := moves(s); got != "3322,3324,3342,3344" {
		t.Fatalf("king moves %s", got)
	}
	c := board(t, rules.White,
		"........",
		"..o.o...",
		".m......",
		"........",
		"........",
		"........",
		"........",
		"o.......")
	apply(t, c, "2103") // crowned on row 0; it could jump 12 next, but crowning ends the turn
	if c.board[0][3] != FirstK || c.ToMove() != rules.Black {
		t.Fatalf("crowning: %v, to move %s", c.board[0][3], c.ToMove())
	}
}

func TestTheSecondPlayerSeesTheBoardTurnedAround(t *testing.T) {
	s := NewState(DefaultOptions())
	apply(t, s, "5041")
	view, _ := s.View(rules.Black)
	white, _ := NewState(DefaultOptions()).View(rules.White)
	// Black's own men are at the bottom as 1s, like White's at the start.
	if string(view[40:64]) != string(white[40:64]) {
		t.Fatalf("black's view of its own men:\n%s\n%s", view[40:], white[40:])
	}
	if !strings.Contains(string(view[16:24]), "2") {
		t.Fatalf("white's advanced man should show as 2 on black's row 2: %s", view[16:24])
	}
	for _, m := range s.LegalMoves() {
		if m.(Move).From.R < 5 {
			t.Fatalf("black's moves must start from its rows 5-7 in its own coordinates: %v", m)
		}
	}
}

func TestDraws(t *testing.T) {
	s := board(t, rules.White,
		"M.......",
		"........",
		"........",
		"........",
		"........",
		"........",
		"........",
		".......O")
	// White's king steps 00-11 and back; Black's, turned around, the same.
	shuffle := []string{"0011", "0011", "1100", "1100"}
	for i := 0; i < 12 && !s.Outcome().Over; i++ {
		apply(t, s, shuffle[i%4])
	}
	if o := s.Outcome(); !o.Over || o.Reason != rules.ReasonRepetition {
		t.Fatalf("%+v after %d turns", o, s.Plies())
	}
	q := board(t, rules.White,
		"M.......",
		"........",
		"........",
		"........",
		"........",
		"........",
		"........",
		".......O")
	q.opts.Repetition = 0
	for i := 0; i < 60 && !q.Outcome().Over; i++ {
		apply(t, q, shuffle[i%4])
	}
	if o := q.Outcome(); !o.Over || o.Reason != rules.ReasonNoProgress || q.Plies() != 40 {
		t.Fatalf("%+v after %d turns", o, q.Plies())
	}
}

func TestParseForms(t *testing.T) {
	s := NewState(DefaultOptions())
	for _, in := range []string{"5041", "5 0 4 1", "((5, 0), (4, 1))", "[5,0,4,1]\n"} {
		m, err := s.ParseMove([]byte(in))
		if err != nil || m.String() != "5041" || s.Judge(m) != nil {
			t.Errorf("%q: %v %v", in, m, err)
		}
	}
	for _, c := range []struct{ in, verdict string }{{"504", "invalid-output"}, {"5a41", "invalid-output"}, {"5849", "invalid-output"}, {"5043", "illegal-move"}, {"error", "invalid-output"}} {
		m, err := s.ParseMove([]byte(c.in))
		if err == nil {
			err = s.Judge(m)
		}
		if got := string(rules.VerdictOf(err)); got != c.verdict {
			t.Errorf("%q: %s (%v)", c.in, got, err)
		}
	}
}

func TestRequestAndFromView(t *testing.T) {
	s := NewState(DefaultOptions())
	before, q := codec{}.Request(s, "", rules.Clock{})
	if len(before[0])+len(before[1]) != 0 {
		t.Fatalf("lines before the question: %q", before)
	}
	want := "board=-2-2-2-22-2-2-2--2-2-2-20-0-0-0--0-0-0-01-1-1-1--1-1-1-11-1-1-1- moves=5041,5241,5243,5443,5445,5645,5647"
	if q != want {
		t.Fatalf("request\n%s\nwant\n%s", q, want)
	}
	back, err := Game{}.FromView(nil, []byte(q))
	if err != nil {
		t.Fatal(err)
	}
	if moves(back.(*State)) != moves(s) {
		t.Fatalf("rebuilt moves %s, want %s", moves(back.(*State)), moves(s))
	}
}

func TestPackageAddsTheAdapter(t *testing.T) {
	files := map[string][]byte{"team/bot.py": []byte("import numpy\nclass bot():\n    def move(self, p, r):\n        return r[0]\n"), "team/util.py": []byte("x = 1\n")}
	extra, entry, err := Game{}.Package(files)
	if err != nil || entry != AdapterName || len(extra[AdapterName]) == 0 {
		t.Fatalf("%v %s %v", extra, entry, err)
	}
	if extra, entry, err := (Game{}).Package(map[string][]byte{"a.py": []byte("print(1)\n")}); err != nil || entry != "" || extra != nil {
		t.Fatal("a submission without class bot must be left to run as an executable")
	}
	two := map[string][]byte{"a.py": []byte("class bot():\n    pass\n"), "b.py": []byte("class bot:\n    pass\n")}
	if _, _, err := (Game{}).Package(two); err == nil || !strings.Contains(err.Error(), "2 Python files") {
		t.Fatalf("two bot classes: %v", err)
	}
}

func TestTheExplanationsDialogueIsTheGames(t *testing.T) {
	rulestest.Check(t, Game{}.Explain(), Game{}.Protocol().Lines, NewState(DefaultOptions()), time.Second)
}
