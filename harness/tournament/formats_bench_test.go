package tournament

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/transcript"
)

// drawn is a game's result drawn from the two bots' strengths
// (log-strengths, Bradley-Terry), a tenth of games drawn.
func drawn(rng *rand.Rand, strength []float64) func(white, black int) string {
	return func(white, black int) string {
		if rng.Float64() < 0.1 {
			return transcript.WinnerDraw
		}
		if rng.Float64() < 1/(1+math.Exp(strength[black]-strength[white])) {
			return transcript.WinnerWhite
		}
		return transcript.WinnerBlack
	}
}

// strengths are n bots' strengths, about 200 Elo apart at one standard
// deviation.
func strengths(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64() * 200 * math.Ln10 / 400
	}
	return out
}

// BenchmarkSwissRound1000 pairs round 6 of a Swiss tournament of 1,000
// bots from the results of its first five: the target is under 1 s.
func BenchmarkSwissRound1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 1000))
	c := formatOf(Swiss, 1000, 2)
	c.Rounds = 12
	s := strengths(rng, 1000)
	result := drawn(rng, s)
	var recs []Record
	for round := 0; round < 5; round++ {
		for _, g := range c.Next(recs) {
			recs = append(recs, Record{Game: g, Status: Done, Winner: result(g.White, g.Black)})
		}
	}
	for b.Loop() {
		if games := c.Next(recs); len(games) != 1000 {
			b.Fatalf("%d games paired", len(games))
		}
	}
}

// simulated is what finals of one format did over trials: the games
// played, how often the standings' first was the true best and their top
// 3 the true top 3 in order,
// the share of the true top 10 whose set of ranks held their true rank,
// and those sets' mean width.
type simulated struct {
	format                      string
	games, first, top3, covered float64
	width                       float64
	trials                      int
}

// simulate plays trials finals of c's format among bots of strengths
// drawn afresh each time (outcomes drawn from them, no sandbox).
func simulate(t testing.TB, c Config, trials int, seed uint64) simulated {
	out := simulated{format: c.Describe(), trials: trials}
	n := len(c.Bots)
	for trial := range trials {
		rng := rand.New(rand.NewPCG(seed, uint64(trial)))
		s := strengths(rng, n)
		result := drawn(rng, s)
		c.Seed = uint64(trial) + 1
		var recs []Record
		games, err := c.FirstGames()
		if err != nil {
			t.Fatal(err)
		}
		for len(games) > 0 {
			for _, g := range games {
				recs = append(recs, Record{Game: g, Status: Done, Winner: result(g.White, g.Black)})
			}
			games = nil
			if c.Adaptive() {
				games = c.Next(recs)
			}
		}
		rows := c.Standings(recs, recs)
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return s[order[a]] > s[order[b]] })
		trueRank := make([]int, n)
		for r, b := range order {
			trueRank[b] = r + 1
		}
		out.games += float64(len(recs))
		if rows[0].Bot == order[0] {
			out.first++
		}
		if rows[0].Bot == order[0] && rows[1].Bot == order[1] && rows[2].Bot == order[2] {
			out.top3++
		}
		for _, r := range rows {
			if trueRank[r.Bot] <= 10 {
				if r.RankSet.Low <= trueRank[r.Bot] && trueRank[r.Bot] <= r.RankSet.High {
					out.covered++
				}
				out.width += float64(r.RankSet.High - r.RankSet.Low + 1)
			}
		}
	}
	out.games /= float64(trials)
	out.first /= float64(trials)
	out.top3 /= float64(trials)
	out.covered /= float64(10 * trials)
	out.width /= float64(10 * trials)
	return out
}

// finalFormats are the formats a final of n bots may take, as the
// simulation compares them: a double round robin, a Swiss final of its
// default rounds, a knockout and a double elimination of 2 games a match,
// a Swiss qualifier then its top 16 in a double elimination or a round
// robin, and a rating final of its default budget.
func finalFormats(n int) []Config {
	var out []Config
	for _, f := range []func(*Config){
		func(c *Config) { c.Format = RoundRobin },
		func(c *Config) { c.Format, c.TieBreaks = Swiss, SwissTieBreaks() },
		func(c *Config) { c.Format = Knockout },
		func(c *Config) { c.Format = DoubleElimination },
		func(c *Config) {
			c.Format, c.Advance, c.Then, c.TieBreaks = Stages, min(16, n), DoubleElimination, SwissTieBreaks()
		},
		func(c *Config) {
			c.Format, c.Advance, c.Then, c.TieBreaks = Stages, min(16, n), RoundRobin, SwissTieBreaks()
		},
		func(c *Config) { c.Format = Rating },
	} {
		c := formatOf(RoundRobin, n, 2)
		f(&c)
		out = append(out, c)
	}
	return out
}

// Finals of 32 bots of known strengths in every format, 30 of each: the
// sets of ranks of the true top 10 hold their true ranks at their stated
// rate or better whatever the format (an adaptive schedule picks its games
// from the results, which a fit's sets must survive); every format but a
// bracket and a rating final plays the games it planned, a rating final no
// more than its budget; the round robin, which plays the most games, names
// the true top 3 the most often. ARENA_SIMULATE=300,1000 prints the
// table of docs/finals.md for those sizes instead.
func TestFinalFormatsSimulated(t *testing.T) {
	sizes, trials := []int{32}, 30
	if env := os.Getenv("ARENA_SIMULATE"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 4 {
				t.Fatalf("ARENA_SIMULATE: want sizes such as 300,1000, got %q", env)
			}
			sizes = append(sizes, n)
		}
		trials, _ = strconv.Atoi(cmp.Or(os.Getenv("ARENA_SIMULATE_TRIALS"), "10"))
	} else {
		t.Parallel()
	}
	for _, n := range sizes {
		var rows []simulated
		for _, c := range finalFormats(n) {
			start := time.Now()
			r := simulate(t, c, trials, uint64(n))
			rows = append(rows, r)
			if os.Getenv("ARENA_SIMULATE") != "" {
				t.Logf("%d bots, %s: %v", n, r.format, time.Since(start).Round(time.Second))
			}
			if r.covered < 0.95 {
				t.Errorf("%d bots, %s: the true top 10's sets held their true rank %.1f%% of the time, below 95%%", n, r.format, 100*r.covered)
			}
			switch planned := float64(c.Planned()); c.Format {
			case RoundRobin:
				if r.games != float64(n*(n-1)) {
					t.Errorf("%d bots, a round robin: %.0f games", n, r.games)
				}
			case Swiss:
				if r.games != planned {
					t.Errorf("%d bots, %s: %.0f games, %0.f planned", n, r.format, r.games, planned)
				}
			case Rating:
				if r.games > planned {
					t.Errorf("%d bots, %s: %.0f games, over its budget of %.0f", n, r.format, r.games, planned)
				}
			}
		}
		for _, r := range rows[1:] {
			if r.top3 > rows[0].top3 {
				t.Errorf("%d bots: %s named the true top 3 more often (%.0f%%) than the round robin (%.0f%%)", n, r.format, 100*r.top3, 100*rows[0].top3)
			}
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n%d teams, %d finals of each format:\n\n| Format | Games | True best first | True top 3 in order | True top 10 within their sets | Their sets' mean width |\n|---|---:|---:|---:|---:|---:|\n", n, trials)
		for _, r := range rows {
			fmt.Fprintf(&sb, "| %s | %.0f | %.0f%% | %.0f%% | %.1f%% | %.1f |\n", r.format, r.games, 100*r.first, 100*r.top3, 100*r.covered, r.width)
		}
		t.Log(sb.String())
	}
}
