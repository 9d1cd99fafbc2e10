package chess

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/rulestest"
)

func state(t *testing.T, fen string) *State {
	t.Helper()
	o := DefaultOptions()
	o.FEN = fen
	s, err := NewState(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func play(t *testing.T, s *State, moves ...string) {
	t.Helper()
	for _, w := range moves {
		m, err := s.ParseMove([]byte(w))
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if err := s.Apply(m); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
	}
}

// The standard perft positions (chessprogramming.org/Perft_Results).
func TestPerft(t *testing.T) {
	cases := []struct {
		fen   string
		nodes []int64
	}{
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", []int64{20, 400, 8902, 197281}},
		{"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", []int64{48, 2039, 97862}},
		{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", []int64{14, 191, 2812, 43238}},
		{"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", []int64{6, 264, 9467}},
		{"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", []int64{44, 1486, 62379}},
		{"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", []int64{46, 2079, 89890}},
	}
	for _, c := range cases {
		s := state(t, c.fen)
		for d, want := range c.nodes {
			if testing.Short() && want > 100000 {
				continue
			}
			if got := s.Perft(d + 1); got != want {
				t.Errorf("%s depth %d: %d nodes, want %d", c.fen, d+1, got, want)
			}
		}
	}
}

func TestEndings(t *testing.T) {
	t.Run("checkmate wins", func(t *testing.T) {
		s := state(t, "")
		play(t, s, "f2f3", "e7e5", "g2g4", "d8h4")
		if o := s.Outcome(); !o.Over || o.Winner != rules.Black || o.Reason != rules.ReasonCheckmate {
			t.Fatalf("%+v", o)
		}
	})
	t.Run("stalemate draws", func(t *testing.T) {
		s := state(t, "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1")
		play(t, s, "f7f6") // not yet stalemate
		if s.Outcome().Over {
			t.Fatal("over too early")
		}
		s = state(t, "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")
		play(t, s, "f1f7")
		if o := s.Outcome(); !o.Over || o.Winner != rules.NoSide || o.Reason != rules.ReasonStalemate {
			t.Fatalf("%+v", o)
		}
	})
	t.Run("threefold repetition draws", func(t *testing.T) {
		s := state(t, "")
		play(t, s, "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1")
		if s.Outcome().Over {
			t.Fatal("drawn at the second repetition")
		}
		play(t, s, "f6g8")
		if o := s.Outcome(); !o.Over || o.Reason != rules.ReasonRepetition {
			t.Fatalf("%+v", o)
		}
	})
	t.Run("fifty moves without capture or pawn move draw", func(t *testing.T) {
		s := state(t, "7k/8/8/8/8/8/R7/K7 w - - 98 80")
		play(t, s, "a2b2")
		if s.Outcome().Over {
			t.Fatal("drawn at 99 half-moves")
		}
		play(t, s, "h8g8")
		if o := s.Outcome(); !o.Over || o.Reason != rules.ReasonFiftyMoves {
			t.Fatalf("%+v", o)
		}
	})
	t.Run("insufficient material draws", func(t *testing.T) {
		s := state(t, "7k/8/8/8/8/8/r7/KB6 w - - 0 1")
		play(t, s, "a1a2") // the king takes the last rook: K+B vs K
		if o := s.Outcome(); !o.Over || o.Reason != rules.ReasonMaterial {
			t.Fatalf("%+v", o)
		}
	})
}

func TestMoveForms(t *testing.T) {
	s := state(t, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
	for _, c := range []struct{ in, want string }{
		{"O-O", "O-O"}, {"0-0-0", "O-O-O"}, {"e1g1", "O-O"}, {" E1C1 \r", "O-O-O"}, {"a1a8", "a1a8"},
	} {
		m, err := s.ParseMove([]byte(c.in))
		if err != nil || m.String() != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, m, err, c.want)
		}
	}
	b := state(t, "4k3/8/8/8/8/8/1p6/4K3 b - - 0 1")
	for _, c := range []struct{ in, want string }{{"b2b1", "b2b1q"}, {"b2b1n", "b2b1n"}} {
		m, err := b.ParseMove([]byte(c.in))
		if err != nil || m.String() != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, m, err, c.want)
		}
	}
	for _, c := range []struct{ in, verdict, msg string }{
		{"e2e5", "illegal-move", "not a legal move"},
		{"O-O", "illegal-move", "castling is not legal"},
		{"hello", "invalid-output", "not a move"},
		{"z9z9", "invalid-output", "not a move"},
		{"", "invalid-output", "not a move"},
		{"e7e8k", "invalid-output", "not a move"},
	} {
		_, err := state(t, "").ParseMove([]byte(c.in))
		if string(rules.VerdictOf(err)) != c.verdict || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v (%s)", c.in, err, rules.VerdictOf(err))
		}
	}
}

func TestProtocolLines(t *testing.T) {
	s := state(t, "")
	c := codec{}
	if got := c.Start(s); len(got[0]) != 1 || got[0][0] != "white" || len(got[1]) != 1 || got[1][0] != "black" {
		t.Fatalf("%v", got)
	}
	_, q := c.Request(s, "", rules.Clock{Mine: 119_900e6, Theirs: 120e9})
	if q != "NONE 119 120 rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" {
		t.Fatalf("%q", q)
	}
	play(t, s, "e2e4")
	if _, q = c.Request(s, "", rules.Clock{Mine: 5000e9}); !strings.HasPrefix(q, "e2e4 1000 0 ") {
		t.Fatalf("%q", q)
	}
	if r := c.Reply(s, rules.Black, false, rules.Clock{Mine: 3e9}); len(r[0]) != 0 || len(r[1]) != 1 || r[1][0] != "D 3" {
		t.Fatalf("%v", r)
	}
	rebuilt, err := Game{}.FromView(nil, []byte(q))
	if err != nil || rebuilt.(*State).FEN() != s.FEN() {
		t.Fatalf("%v %v", rebuilt, err)
	}
}

func TestTheExplanationsDialogueIsTheGames(t *testing.T) {
	rulestest.Check(t, Game{}.Explain(), Game{}.Protocol().Lines, state(t, ""), 2500*time.Millisecond)
}

// Games start at once in one process (a tournament's, a duel's): each gets
// the position it was given, whatever the others decode meanwhile.
func TestGamesStartingAtOnceKeepTheirPositions(t *testing.T) {
	fens := []string{
		"",
		"rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
		"8/8/8/8/8/8/8/K1k5 w - - 0 1",
		"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
	}
	want := make([]string, len(fens))
	for i, f := range fens {
		s, err := NewState(Options{FEN: f})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = s.FEN()
	}
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := (g + i) % len(fens)
				s, err := NewState(Options{FEN: fens[k]})
				if err != nil || s.FEN() != want[k] {
					errs <- fmt.Sprintf("%q became %v %v", fens[k], s, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
