package live_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/live"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
)

var _ match.Observer = (*live.Game)(nil)

// play starts a Code Clash game on h and records n turns, each side's with
// a stderr line of its own.
func play(t *testing.T, h *live.Hub, n int) (*live.Game, rules.State) {
	t.Helper()
	st, err := codeclash.Game{}.New(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := h.Start(live.Meta{Kind: "ladder", White: live.Player{Team: 1, Name: "a"}, Black: live.Player{Team: 2, Name: "b"}})
	g.Started(transcript.Header{Game: "codeclash", Seed: 1, White: transcript.Bot{Name: "a"}, Black: transcript.Bot{Name: "b"}}, st)
	for i := 1; i <= n; i++ {
		turn(g, i)
	}
	return g, st
}

// turn records ply i: White's on odd plies, each with its side's stderr.
func turn(g *live.Game, i int) {
	side := "white"
	if i%2 == 0 {
		side = "black"
	}
	st, _ := codeclash.Game{}.New(nil, 1)
	g.Turn(transcript.Turn{Ply: i, Side: side, Verdict: "ok", StderrTail: "own of " + side}, st)
}

// steps decodes what a watcher read.
func steps(t *testing.T, raw [][]byte) []view.Step {
	t.Helper()
	var out []view.Step
	for _, b := range raw {
		var s view.Step
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestEachWatcherReadsWhatItsSideMaySee: the organizer reads both sides'
// stderr, a side its own only, anyone neither; the board is everyone's.
func TestEachWatcherReadsWhatItsSideMaySee(t *testing.T) {
	g, _ := play(t, live.NewHub(), 4)
	for _, c := range []struct {
		a           live.Audience
		white, blck bool
	}{{live.Organizer, true, true}, {live.White, true, false}, {live.Black, false, true}, {live.Everyone, false, false}} {
		head, raw, ended, _, _ := g.Read(0, c.a)
		if head == nil || head.White != "a" || head.Kind != "ladder" || ended {
			t.Fatalf("audience %d: head %+v, ended %v", c.a, head, ended)
		}
		got := steps(t, raw)
		if len(got) != 5 || got[0].Ply != 0 || got[4].Ply != 4 {
			t.Fatalf("audience %d read %d steps, want the start and 4 turns", c.a, len(got))
		}
		for _, s := range got[1:] {
			own := strings.HasPrefix(s.StderrTail, "own of ")
			want := s.Side == "white" && c.white || s.Side == "black" && c.blck
			if own != want || !own && s.StderrTail != view.Hidden {
				t.Errorf("audience %d, ply %d (%s): stderr %q", c.a, s.Ply, s.Side, s.StderrTail)
			}
			if len(s.Frames["true"].Cells) == 0 {
				t.Errorf("audience %d, ply %d: no board", c.a, s.Ply)
			}
		}
	}
}

// TestAWatcherResumesWhereItLeftOffAndIsWokenByEachTurn: reading from a
// step gives the steps after it, none twice; a turn recorded wakes the
// watcher; the end is read with the result, and stays a while. A game
// whose match never started is dropped after Keep.
func TestAWatcherResumesWhereItLeftOffAndIsWokenByEachTurn(t *testing.T) {
	h := live.NewHub()
	g, _ := play(t, h, 2)
	_, raw, _, _, wake := g.Read(2, live.Everyone)
	if s := steps(t, raw); len(s) != 1 || s[0].Ply != 2 {
		t.Fatalf("from step 2: %+v", s)
	}
	// A wake asked for by the turns before may still come: the watcher
	// reads again and finds nothing new. The next turn wakes it.
	for {
		select {
		case <-wake:
			_, raw, _, _, wake = g.Read(3, live.Everyone)
			if len(raw) != 0 {
				t.Fatalf("a step after the last turn: %s", raw)
			}
			continue
		case <-time.After(50 * time.Millisecond):
		}
		break
	}
	turn(g, 3)
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("a turn recorded did not wake the watcher")
	}
	_, raw, _, _, _ = g.Read(3, live.Everyone)
	if s := steps(t, raw); len(s) != 1 || s[0].Ply != 3 {
		t.Fatalf("from step 3 after the turn: %+v", s)
	}
	if playing, _ := h.Playing(); len(playing) != 1 || playing[0] != g {
		t.Fatalf("playing: %v", playing)
	}
	g.Finished(transcript.Result{Winner: transcript.WinnerWhite, Reason: "king captured"})
	_, raw, ended, res, _ := g.Read(4, live.Everyone)
	if !ended || res.Winner != transcript.WinnerWhite || len(raw) != 0 {
		t.Errorf("after the end: ended %v, result %+v, %d steps", ended, res, len(raw))
	}
	if playing, _ := h.Playing(); len(playing) != 0 {
		t.Errorf("an ended game is still listed as playing")
	}
	if got, ok := h.Game(g.ID); !ok || got != g {
		t.Errorf("an ended game is gone at once: a watcher reconnecting would miss its end")
	}
}

// TestAnEndedGameIsDroppedAfterKeep: the hub keeps an ended game for Keep,
// not longer.
func TestAnEndedGameIsDroppedAfterKeep(t *testing.T) {
	now := time.Now()
	h := live.NewHubAt(func() time.Time { return now })
	g, _ := play(t, h, 1)
	g.Finished(transcript.Result{Winner: transcript.WinnerDraw})
	now = now.Add(live.Keep - time.Second)
	if _, ok := h.Game(g.ID); !ok {
		t.Fatal("dropped before Keep")
	}
	now = now.Add(2 * time.Second)
	if _, ok := h.Game(g.ID); ok {
		t.Fatal("kept after Keep")
	}
}

// TestIdsAreNotGuessable: each game has its own id of 18 hex digits.
func TestIdsAreNotGuessable(t *testing.T) {
	h := live.NewHub()
	seen := map[string]bool{}
	for range 100 {
		g := h.Start(live.Meta{Kind: "ladder"})
		if len(g.ID) != 18 || seen[g.ID] {
			t.Fatalf("id %q (seen: %v)", g.ID, seen[g.ID])
		}
		seen[g.ID] = true
	}
}

// TestAGameThatNeverStartedIsDropped: a game whose match was never set up
// (no header) is not listed, and is dropped after Keep.
func TestAGameThatNeverStartedIsDropped(t *testing.T) {
	now := time.Now()
	h := live.NewHubAt(func() time.Time { return now })
	g := h.Start(live.Meta{Kind: "ladder"})
	if head, _, _, _, _ := g.Read(0, live.Everyone); head != nil {
		t.Fatal("a head before the start")
	}
	now = now.Add(live.Keep + time.Second)
	if _, ok := h.Game(g.ID); ok {
		t.Fatal("a game never started is kept past Keep")
	}
}
