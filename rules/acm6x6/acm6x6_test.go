package acm6x6

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/rulestest"
)

func pos(t *testing.T, fen string, o ...Options) *State {
	t.Helper()
	opts := DefaultOptions()
	if len(o) > 0 {
		opts = o[0]
	}
	s, err := Parse(opts, fen)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dests(s *State, from string) string {
	var out []string
	for _, m := range s.Moves() {
		if m.From.String() == from {
			out = append(out, m.To.String())
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestStartPosition(t *testing.T) {
	s := NewState(DefaultOptions())
	if s.FEN() != StartFEN {
		t.Fatalf("%s", s.FEN())
	}
	f := s.Frame(rules.NoSide)
	if strings.Join(f.Cells[5], "") != "RNQKBS" || strings.Join(f.Cells[0], "") != "rnqkbs" {
		t.Fatalf("%v", f.Cells)
	}
}

func TestPieceMoves(t *testing.T) {
	cases := []struct {
		name, fen, from, want string
	}{
		{"star: one diagonal or a jump of two straight, over pieces", "6/6/2P3/1PSP2/2P3/K4k w 0", "c3", "a3 b2 b4 c1 c5 d2 d4 e3"},
		{"star at the edge", "K5/6/6/6/6/S4k w 0", "a1", "a3 b2 c1"},
		{"joker: one or two in any direction, jumping", "5K/6/6/2J3/6/5k w 0", "c3", "a1 a3 a5 b2 b3 b4 c1 c2 c4 c5 d2 d3 d4 e1 e3 e5"},
		{"joker cannot land on its own piece", "5K/6/6/2J3/2P3/5k w 0", "c3", "a1 a3 a5 b2 b3 b4 c1 c4 c5 d2 d3 d4 e1 e3 e5"},
		{"pawn: one or two forward, anywhere (doubleStep always)", "6/6/6/2P3/6/K4k w 0", "c3", "c4 c5"},
		{"pawn: blocked two squares ahead", "6/6/2p3/2P3/6/K4k w 0", "c3", ""},
		{"pawn: no capture straight ahead, diagonal capture", "6/6/1p4/2P3/6/K4k w 0", "c3", "b4 c4 c5"},
		{"black pawn moves down", "K4k/6/3p2/6/6/6 b 0", "d4", "d2 d3"},
		{"knight jumps over its pawns, not onto them", "K5/6/6/6/PPP3/NP3k w 0", "a1", "b3"},
		{"castle slides until blocked", "6/6/R1p3/6/6/K4k w 0", "a4", "a2 a3 a5 a6 b4 c4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := dests(pos(t, c.fen), c.from); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	first := Options{DoubleStep: "first", MaxMoves: 50}
	if got := dests(pos(t, "6/6/6/2P3/6/K4k w 0", first), "c3"); got != "c4" {
		t.Fatalf("doubleStep=first from the third rank: %q", got)
	}
	if got := dests(pos(t, "6/6/6/6/2P3/K4k w 0", first), "c2"); got != "c3 c4" {
		t.Fatalf("doubleStep=first from the start rank: %q", got)
	}
}

func TestPromotionToJoker(t *testing.T) {
	s := pos(t, "6/2P3/6/6/6/K4k w 0")
	m, _ := s.ParseMove([]byte("c5c6"))
	if err := s.Apply(m); err != nil {
		t.Fatal(err)
	}
	if s.board[5][2] != 'J' {
		t.Fatalf("%s", s.FEN())
	}
	b := pos(t, "K4k/6/6/6/1p4/6 b 0")
	m, _ = b.ParseMove([]byte("b2b1"))
	b.Apply(m)
	if b.board[0][1] != 'j' {
		t.Fatalf("%s", b.FEN())
	}
}

func TestKingCaptureAndFiftyMoveDraw(t *testing.T) {
	s := pos(t, "6/6/6/6/6/Kk4 w 0")
	m, _ := s.ParseMove([]byte("a1b1"))
	s.Apply(m)
	if o := s.Outcome(); !o.Over || o.Winner != rules.White || o.Reason != rules.ReasonKingCaptured {
		t.Fatalf("%+v", o)
	}
	d := pos(t, "k5/6/6/6/6/5K w 98")
	for _, w := range []string{"f1f2", "a6a5"} {
		m, _ := d.ParseMove([]byte(w))
		if err := d.Apply(m); err != nil {
			t.Fatal(err)
		}
	}
	if o := d.Outcome(); !o.Over || o.Reason != rules.ReasonMaxPlies || o.Winner != rules.NoSide {
		t.Fatalf("%+v after %d plies", o, d.Plies())
	}
}

func TestParseAndJudge(t *testing.T) {
	s := NewState(DefaultOptions())
	for _, c := range []struct{ in, verdict, msg string }{
		{"a2a4", "ok", ""}, {" A2A3 ", "ok", ""},
		{"a2a5", "illegal-move", "pawn on a2 cannot go to a5"},
		{"a7a8", "invalid-output", "a1 to f6"},
		{"a2", "invalid-output", "four characters"},
		{"d6d5", "illegal-move", "opponent's piece"},
		{"c3c4", "illegal-move", "c3 is empty"},
	} {
		m, err := s.ParseMove([]byte(c.in))
		if err == nil {
			err = s.Judge(m)
		}
		if got := string(rules.VerdictOf(err)); got != c.verdict || (err != nil && !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%q: %v (%s)", c.in, err, got)
		}
	}
}

// Regression counts of this move generator (no published table exists for
// this variant); they change only if the rules change.
func TestPerftRegression(t *testing.T) {
	s := NewState(DefaultOptions())
	got := []int64{s.Perft(1), s.Perft(2), s.Perft(3)}
	// perft(1) by hand: six pawns with one or two steps (12), the knight to a3
	// or c3 (2), the star's jump to f3 (1).
	if want := []int64{15, 214, 3451}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("perft 1-3: %v, want %v", got, want)
	}
}

func TestRequestLineRoundTrip(t *testing.T) {
	s := NewState(DefaultOptions())
	before, q := codec{}.Request(s, "", rules.Clock{})
	if len(before[0])+len(before[1]) != 0 {
		t.Fatalf("lines before the question: %q", before)
	}
	if q != "NONE "+StartFEN {
		t.Fatalf("%q", q)
	}
	back, err := Game{}.FromView(nil, []byte(q))
	if err != nil || back.(*State).FEN() != s.FEN() {
		t.Fatalf("%v %v", back, err)
	}
}

func TestTheExplanationsDialogueIsTheGames(t *testing.T) {
	rulestest.Check(t, Game{}.Explain(), Game{}.Protocol().Lines, NewState(DefaultOptions()), 50*time.Millisecond)
}
