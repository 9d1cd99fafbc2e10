package referee

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/acm6x6"
	"github.com/arenabots/arena/rules/checkers"
	"github.com/arenabots/arena/rules/chess"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
)

func newRef(t *testing.T, g rules.Game, opts map[string]string, policy Policy) *Referee {
	t.Helper()
	r, err := New(Config{Game: g, Rules: opts, Seed: 11, OnFault: policy})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// legalAnswer is a file-protocol report whose move.json is the first legal move.
func legalAnswer(st rules.State) sandbox.Report {
	data := st.EncodeMove(st.LegalMoves()[0])
	return sandbox.Report{Wall: 1234567 * time.Nanosecond, CPU: 999999 * time.Nanosecond,
		Answer:  sandbox.Collected{Present: true, Type: sandbox.TypeFile, Data: data, Size: int64(len(data))},
		GameDir: []sandbox.Entry{{Name: "move.json", Type: sandbox.TypeFile, Size: int64(len(data))}}}
}

// fileFacts are the facts of the next turn: a legal answer, then variations
// of every kind the verdict table knows.
func fileFacts(st rules.State, turn int) sandbox.Report {
	r := legalAnswer(st)
	switch turn % 7 {
	case 1:
		r.GameDir = append(r.GameDir, sandbox.Entry{Name: "memo.bin", Type: sandbox.TypeFile, Size: 3, SHA256: "abc"})
		r.Stdout = sandbox.Tail{Data: []byte("thinking\n"), Total: 9}
	case 2:
		r.Answer.Data = []byte{0xff, 0xfe, '{'}
	case 3:
		r.TimedOut, r.Wall = true, 5*time.Second+1500*time.Nanosecond
	case 4:
		r.ExitCode = 1
		r.Stderr = sandbox.Tail{Data: []byte("bad state"), Total: 9}
	case 5:
		r.Answer = sandbox.Collected{Present: true, Type: sandbox.TypeSymlink}
	case 6:
		r.GameDir = append(r.GameDir, sandbox.Entry{Name: "a", Type: sandbox.TypeFile, Size: 1, SHA256: "1"},
			sandbox.Entry{Name: "b", Type: sandbox.TypeDir})
	}
	return r
}

// lineFacts are the facts of a line game's next turn.
func lineFacts(st rules.State, turn int) sandbox.Exchange {
	ex := sandbox.Exchange{Line: st.LegalMoves()[0].String(), Wall: 3*time.Millisecond + 777*time.Nanosecond}
	switch turn % 6 {
	case 1:
		ex.Line = "e9e9"
	case 2:
		ex = sandbox.Exchange{TimedOut: true, Wall: 100*time.Millisecond + 12345*time.Nanosecond}
	case 3:
		ex.Early = "hello"
	case 4:
		ex.Late = "e2e4"
	case 5:
		ex = sandbox.Exchange{Exited: true, Wall: time.Millisecond}
	}
	return ex
}

// TestReplayedFactsRebuildTheRecord is the property replay rests on: settling
// the facts read back from a record (FactsOf) rebuilds that record exactly,
// turn after turn, with the same substitutions, clocks and lines sent.
func TestReplayedFactsRebuildTheRecord(t *testing.T) {
	cases := []struct {
		name string
		game rules.Game
		opts map[string]string
	}{
		{"codeclash, every verdict", codeclash.Game{}, nil},
		{"chess with a time bank", chess.Game{}, map[string]string{"gameTime": "1s", "moveTime": "200ms", "maxPlies": "60"}},
		{"checkers, single moves played automatically", checkers.Game{}, map[string]string{"maxPlies": "80"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			play, again := newRef(t, c.game, c.opts, RandomMove), newRef(t, c.game, c.opts, RandomMove)
			for n := 0; !play.Over(); n++ {
				a, err := play.Next()
				if err != nil {
					t.Fatal(err)
				}
				var f Facts
				if play.Lines() != nil {
					f.Exchange = lineFacts(play.State(), n)
				} else {
					f.Report = fileFacts(play.State(), n)
				}
				s, err := play.Settle(a, f)
				if err != nil {
					t.Fatal(err)
				}
				b, err := again.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("ply %d: asked differently:\n%+v\n%+v", a.Ply, a, b)
				}
				back, err := FactsOf(roundTrip(t, s.Record))
				if err != nil {
					t.Fatal(err)
				}
				s2, err := again.Settle(b, back)
				if err != nil {
					t.Fatal(err)
				}
				if x, y := jsonOf(t, s.Record), jsonOf(t, s2.Record); x != y {
					t.Fatalf("ply %d: the record is not rebuilt:\n%s\n%s", a.Ply, x, y)
				}
				if !reflect.DeepEqual(s.Send, s2.Send) {
					t.Fatalf("ply %d: lines sent %q, then %q", a.Ply, s.Send, s2.Send)
				}
			}
			if x, y := jsonOf(t, play.Result()), jsonOf(t, again.Result()); x != y {
				t.Fatalf("results differ:\n%s\n%s", x, y)
			}
			if r := play.Result(); len(r.Faults) == 0 || r.Reason == transcript.ReasonAborted {
				t.Fatalf("the facts produced no faults or no end: %+v", r)
			}
		})
	}
}

// roundTrip passes a record through its JSON form, as the transcript does.
func roundTrip(t *testing.T, rec transcript.Turn) transcript.Turn {
	t.Helper()
	var out transcript.Turn
	if err := json.Unmarshal([]byte(jsonOf(t, rec)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnOnlyLegalMoveIsPlayedWithoutAsking(t *testing.T) {
	r := newRef(t, checkers.Game{}, nil, Forfeit)
	autos := 0
	for n := 0; !r.Over() && n < 400; n++ {
		legal := r.State().LegalMoves()
		a, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a.Auto != (len(legal) == 1) {
			t.Fatalf("ply %d: %d legal moves, auto %v", a.Ply, len(legal), a.Auto)
		}
		var f Facts
		if !a.Auto {
			if a.Question == "" || a.Timeout <= 0 {
				t.Fatalf("ply %d: asked %q with %v", a.Ply, a.Question, a.Timeout)
			}
			f.Exchange = sandbox.Exchange{Line: legal[n%len(legal)].String(), Wall: time.Millisecond}
		}
		s, err := r.Settle(a, f)
		if err != nil {
			t.Fatal(err)
		}
		if a.Auto {
			autos++
			rec := s.Record
			if !rec.Auto || rec.State != "" || rec.Answer != nil || rec.Verdict != string(rules.OK) || rec.Played != legal[0].String() || len(s.Send[0])+len(s.Send[1]) != 0 {
				t.Fatalf("ply %d: an automatic move recorded as %+v, sending %q", a.Ply, rec, s.Send)
			}
		}
	}
	if autos == 0 {
		t.Fatal("no position with a single legal move in a whole game: the test proves nothing")
	}
}

func TestFaultsAreSettledByThePolicy(t *testing.T) {
	timeout := sandbox.Report{TimedOut: true, Wall: 5 * time.Second}
	t.Run("forfeit ends the game for the opponent", func(t *testing.T) {
		r := newRef(t, codeclash.Game{}, nil, Forfeit)
		a, _ := r.Next()
		s, err := r.Settle(a, Facts{Report: timeout})
		if err != nil {
			t.Fatal(err)
		}
		res := r.Result()
		if !r.Over() || s.Record.Played != "" || s.Record.Substituted || res.Winner != transcript.WinnerBlack || res.Reason != string(rules.Timeout) || len(res.Faults) != 1 {
			t.Fatalf("record %+v result %+v", s.Record, res)
		}
	})
	t.Run("random-move plays the same substitute for the same seed", func(t *testing.T) {
		var played []string
		for range 2 {
			r := newRef(t, codeclash.Game{}, nil, RandomMove)
			a, _ := r.Next()
			s, _ := r.Settle(a, Facts{Report: timeout})
			if r.Over() || !s.Record.Substituted || s.Record.Played == "" || s.Record.Verdict != string(rules.Timeout) {
				t.Fatalf("record %+v", s.Record)
			}
			played = append(played, s.Record.Played)
		}
		if played[0] != played[1] {
			t.Fatalf("substitutes %q", played)
		}
	})
	t.Run("a data-file violation forgiven is removed before the side's next turn", func(t *testing.T) {
		r := newRef(t, codeclash.Game{}, nil, RandomMove)
		a, _ := r.Next()
		f := legalAnswer(r.State())
		f.GameDir = append(f.GameDir, sandbox.Entry{Name: "x", Type: sandbox.TypeDir})
		if s, _ := r.Settle(a, Facts{Report: f}); s.Record.Verdict != string(rules.DataFileViolation) {
			t.Fatalf("%+v", s.Record)
		}
		b, _ := r.Next()
		s, _ := r.Settle(b, Facts{Report: legalAnswer(r.State())})
		c, _ := r.Next()
		if !slicesEqual(b.Turn.Remove, []string{"move.json"}) || !slicesEqual(c.Turn.Remove, []string{"move.json", "x"}) || s.Record.Verdict != "ok" {
			t.Fatalf("removes %q then %q", b.Turn.Remove, c.Turn.Remove)
		}
	})
	t.Run("a late ACM bot gets a random move whatever the policy", func(t *testing.T) {
		r := newRef(t, acm6x6.Game{}, nil, Forfeit)
		a, _ := r.Next()
		s, _ := r.Settle(a, Facts{Exchange: sandbox.Exchange{TimedOut: true, Wall: 100 * time.Millisecond}})
		if r.Over() || !s.Record.Substituted || len(r.Result().Faults) != 1 {
			t.Fatalf("%+v", s.Record)
		}
	})
	t.Run("a bot that cannot start loses whatever the policy", func(t *testing.T) {
		r := newRef(t, chess.Game{}, nil, RandomMove)
		s := r.StartFailed(rules.Black, "exec format error")
		res := r.Result()
		if !r.Over() || res.Winner != transcript.WinnerWhite || res.Reason != string(rules.Crash) || s.Record.StartError != "exec format error" || s.Record.Side != "black" {
			t.Fatalf("record %+v result %+v", s.Record, res)
		}
	})
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestTheTimeBankLimitsTheAnswer(t *testing.T) {
	r := newRef(t, chess.Game{}, map[string]string{"gameTime": "1s", "moveTime": "700ms"}, Forfeit)
	wall := 600 * time.Millisecond
	var asked []time.Duration
	for range 4 {
		a, _ := r.Next()
		asked = append(asked, a.Timeout)
		ex := sandbox.Exchange{Line: r.State().LegalMoves()[0].String(), Wall: wall}
		if a.Timeout < wall {
			ex = sandbox.Exchange{TimedOut: true, Wall: a.Timeout}
		}
		s, _ := r.Settle(a, Facts{Exchange: ex})
		if s.Record.Verdict != "ok" {
			if !strings.Contains(s.Record.Reason, "time bank") || s.Record.Side != "white" {
				t.Fatalf("%+v", s.Record)
			}
			break
		}
		if want := []string{"A 0"}; s.Send[a.Side][0] != want[0] && !strings.HasPrefix(s.Send[a.Side][0], "A ") {
			t.Fatalf("reply %q", s.Send)
		}
	}
	// Each side's first answer also has the program's start; the bank is
	// charged every answer's whole wall time.
	want := []time.Duration{700*time.Millisecond + rules.ProgramStart, 700*time.Millisecond + rules.ProgramStart, 400 * time.Millisecond}
	if !reflect.DeepEqual(asked, want) || !r.Over() {
		t.Fatalf("asked with %v, want %v; over %v", asked, want, r.Over())
	}
}

func TestLineTimesComeFromTheRules(t *testing.T) {
	p := *chess.Game{}.Protocol().Lines
	l, err := LineTimes(p, map[string]string{"moveTime": "5s"})
	if err != nil || l.MoveTime != 5*time.Second || l.GameTime != p.GameTime {
		t.Fatalf("%v %v %v", l.MoveTime, l.GameTime, err)
	}
	if _, err := LineTimes(p, map[string]string{"gameTime": "soon"}); err == nil || !strings.Contains(err.Error(), "gameTime") {
		t.Fatalf("%v", err)
	}
}
