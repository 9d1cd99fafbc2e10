package tournament

import (
	"slices"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/transcript"
)

// A tournament played out before it is: a round robin whose better seed
// always wins is its schedule alone; one whose every pair splits (white
// wins every game) plays off its first place after it, as the runner
// would, batch after batch; a bracket's level matches get their deciders.
func TestAPlayOutPlaysWhatTheResultsPair(t *testing.T) {
	t.Parallel()
	better := func(g Game) string {
		if g.Black < g.White {
			return transcript.WinnerBlack
		}
		return transcript.WinnerWhite
	}
	white := func(Game) string { return transcript.WinnerWhite }
	sizes := func(batches [][]Game) []int {
		var out []int
		for _, b := range batches {
			out = append(out, len(b))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		c      Config
		result func(Game) string
		want   []int
	}{
		{"a round robin, the better seed winning", formatOf(RoundRobin, 4, 2), better, []int{12}},
		// Every pair splits: four teams level on everything play a
		// side-swapped pair each, level again, then a decider each (its
		// white wins, and the teams part).
		{"a round robin, white winning", formatOf(RoundRobin, 4, 2), white, []int{12, 12, 6}},
		{"a knockout, the better seed winning", formatOf(Knockout, 4, 2), better, []int{4, 2}},
		// Every match is level after its two games: a decider each.
		{"a knockout, white winning", formatOf(Knockout, 4, 2), white, []int{4, 2, 2, 1}},
	} {
		batches, err := tc.c.PlayOut(tc.result)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := sizes(batches); !slices.Equal(got, tc.want) {
			t.Errorf("%s: batches %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Simulate times a play-out as the runner plays it: a batch's games in
// order, each taking the first place free, the batch over when its last
// game is; the next batch starts then.
func TestASimulationTimesTheBatchesAsTheRunnerPlaysThem(t *testing.T) {
	t.Parallel()
	c := formatOf(Knockout, 4, 1) // two games, then the final's one
	took := map[int]time.Duration{1: 3 * time.Second, 2: time.Second, 3: 2 * time.Second}
	play := func(g Game) (string, time.Duration) {
		w := transcript.WinnerWhite
		if g.Black < g.White {
			w = transcript.WinnerBlack
		}
		return w, took[g.ID]
	}
	for _, tc := range []struct {
		atOnce int
		want   time.Duration
	}{
		{1, 6 * time.Second}, // 3 + 1, then 2
		{2, 5 * time.Second}, // max(3, 1), then 2
	} {
		runs, err := c.Simulate(3, tc.atOnce, play)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 3 {
			t.Fatalf("%d runs, want 3", len(runs))
		}
		for _, r := range runs {
			if r.Games != 3 || r.Wall != tc.want {
				t.Errorf("%d at once: %+v, want 3 games in %v", tc.atOnce, r, tc.want)
			}
		}
	}
	// Three games of 3 s, 1 s and 2 s, two at once: the third takes the
	// place the second left (at 1 s) and ends at 3 s.
	rr := formatOf(RoundRobin, 3, 1)
	runs, err := rr.Simulate(1, 2, func(g Game) (string, time.Duration) { w, _ := play(g); return w, took[g.ID] })
	if err != nil || runs[0].Wall != 3*time.Second {
		t.Errorf("three games two at once: %+v %v, want 3 s", runs, err)
	}
}
