package ladder

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/rating"
)

// ladderOf is n entries rated 1000 + 20 per index.
func ladderOf(n int) []Entry {
	var out []Entry
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		r := rating.Start()
		r.Rating = 1000 + 20*float64(i)
		out = append(out, Entry{Team: int64(i + 1), Submission: int64(100 + i), Rating: r, Active: t0})
	}
	return out
}

// play records that entries a and b played at t.
func play(e []Entry, a, b int, t time.Time) {
	e[a].LastPlayed, e[b].LastPlayed = t, t
	e[a].LastOpponent, e[b].LastOpponent = e[b].Team, e[a].Team
}

func TestTheLongestWaitingPlaysNextAndNeverTheSameRivalTwiceInARow(t *testing.T) {
	e := ladderOf(12)
	rng := rand.New(rand.NewPCG(7, 7))
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	met := map[[2]int64]int{}
	for game := range 2000 {
		a, b, ok := Pick(e, DefaultOptions, rng)
		if !ok {
			t.Fatal("no pick")
		}
		for i := range e {
			if waitedLonger(e[i], e[a]) {
				t.Fatalf("game %d: %d waited longer than the pick %d", game, e[i].Team, e[a].Team)
			}
		}
		if e[a].LastOpponent == e[b].Team {
			t.Fatalf("game %d: %d plays %d twice in a row", game, e[a].Team, e[b].Team)
		}
		x, y := min(e[a].Team, e[b].Team), max(e[a].Team, e[b].Team)
		met[[2]int64{x, y}]++
		now = now.Add(time.Minute)
		play(e, a, b, now)
	}
	// The far draws make every pair meet, the top and the bottom too.
	if len(met) != 12*11/2 {
		t.Errorf("%d of %d pairs met", len(met), 12*11/2)
	}
}

// Pairs played at once, some far quicker than others (a bot that faults at
// once): a pair that ends while the others play is not played again at
// once, busy entries are never picked, and every pair still meets.
func TestPairsPlayedAtOnceNeitherRepeatNorStarve(t *testing.T) {
	e := ladderOf(8)
	rng := rand.New(rand.NewPCG(3, 3))
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	type flight struct {
		a, b int
		ends time.Time
	}
	var playing []flight
	met := map[[2]int64]int{}
	for range 400 {
		// Fill the 4 slots, then end the pair that ends first.
		for len(playing) < 4 {
			a, b, ok := Pick(e, DefaultOptions, rng)
			if !ok {
				break
			}
			if e[a].Busy || e[b].Busy || e[a].LastOpponent == e[b].Team {
				t.Fatalf("picked %d (busy %v) and %d (busy %v), last opponent of the first %d", e[a].Team, e[a].Busy, e[b].Team, e[b].Busy, e[a].LastOpponent)
			}
			took := 10 * time.Minute
			if a < 2 || b < 2 { // the first two fault at once
				took = time.Second
			}
			e[a].Busy, e[b].Busy = true, true
			playing = append(playing, flight{a, b, now.Add(took)})
		}
		if len(playing) == 0 {
			t.Fatal("nothing plays and nothing can be picked")
		}
		first := 0
		for i, f := range playing {
			if f.ends.Before(playing[first].ends) {
				first = i
			}
		}
		f := playing[first]
		playing = append(playing[:first], playing[first+1:]...)
		now = f.ends
		e[f.a].Busy, e[f.b].Busy = false, false
		play(e, f.a, f.b, now)
		met[[2]int64{min(e[f.a].Team, e[f.b].Team), max(e[f.a].Team, e[f.b].Team)}]++
	}
	if len(met) != 8*7/2 {
		t.Errorf("%d of %d pairs met: %v", len(met), 8*7/2, met)
	}
}

func TestANewSubmissionPlaysFirst(t *testing.T) {
	e := ladderOf(5)
	rng := rand.New(rand.NewPCG(1, 1))
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for i := range e {
		e[i].LastPlayed = now
	}
	e[3].LastPlayed, e[3].Active = time.Time{}, now.Add(time.Hour) // a new version
	if a, _, _ := Pick(e, DefaultOptions, rng); a != 3 {
		t.Errorf("picked %d first, want the new submission", e[a].Team)
	}
	if _, _, ok := Pick(e[:1], DefaultOptions, rng); ok {
		t.Error("a pick with one entry")
	}
}

// BenchmarkPick300 is one pick among 300 active submissions.
func BenchmarkPick300(b *testing.B) {
	e := ladderOf(300)
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	for b.Loop() {
		a, o, _ := Pick(e, DefaultOptions, rng)
		now = now.Add(time.Second)
		play(e, a, o, now)
	}
}

func TestExhaustedPairsAreNeverPickedAndNewOnesComeFirst(t *testing.T) {
	e := ladderOf(4)
	met := func(a, b int, m Meeting) {
		for _, p := range [][2]int{{a, b}, {b, a}} {
			if e[p[0]].Met == nil {
				e[p[0]].Met = map[int64]Meeting{}
			}
			e[p[0]].Met[e[p[1]].Submission] = m
		}
	}
	// The first entry waited longest; it met the second (exhausted) and
	// the third (not): it plays the fourth, the one it never met.
	met(0, 1, Meeting{Pairs: 2, Exhausted: true})
	met(0, 2, Meeting{Pairs: 1})
	rng := rand.New(rand.NewPCG(5, 5))
	for range 50 {
		if a, b, ok := Pick(e, DefaultOptions, rng); !ok || a != 0 || b != 3 {
			t.Fatalf("picked %d and %d (%v), want 1 against 4, the pair not yet known", a+1, b+1, ok)
		}
	}
	// Every pair of the first exhausted: it has nobody to play, the next
	// one plays.
	met(0, 2, Meeting{Pairs: 2, Exhausted: true})
	met(0, 3, Meeting{Pairs: 2, Exhausted: true})
	if a, b, ok := Pick(e, DefaultOptions, rng); !ok || a == 0 || b == 0 {
		t.Errorf("picked %d and %d (%v): the first has only exhausted pairs", a+1, b+1, ok)
	}
	// Every pair exhausted: nothing to play.
	met(1, 2, Meeting{Pairs: 2, Exhausted: true})
	met(1, 3, Meeting{Pairs: 2, Exhausted: true})
	met(2, 3, Meeting{Pairs: 2, Exhausted: true})
	if a, b, ok := Pick(e, DefaultOptions, rng); ok {
		t.Errorf("picked %d and %d though every pair is exhausted", a+1, b+1)
	}
}
