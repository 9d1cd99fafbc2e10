package tournament

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
)

// stronger wins every game: the lower-numbered bot.
func stronger(white, black int) string {
	if white < black {
		return transcript.WinnerWhite
	}
	return transcript.WinnerBlack
}

// placesOf lists rank:bot of the standings.
func placesOf(rows []Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%d:%d", r.Rank, r.Bot))
	}
	return strings.Join(out, " ")
}

// A double elimination of eight, the stronger bot winning every match:
// 14 matches (no second grand final: the unbeaten side wins it), places
// 1, 2, 3, 4, then two and two sharing, by the round each went out in.
// With the grand final lost by the unbeaten side, its second match is
// played and decides.
func TestADoubleEliminationPlacesByTheRoundEachWentOut(t *testing.T) {
	t.Parallel()
	c := formatOf(DoubleElimination, 8, 2)
	recs := playFormat(t, c, stronger)
	if len(recs) != 14*2 {
		t.Errorf("%d games, want 14 matches of 2", len(recs))
	}
	if got, want := placesOf(c.Standings(recs, recs)), "1:0 2:1 3:2 4:3 5:4 5:5 7:6 7:7"; got != want {
		t.Errorf("places %s, want %s (rank:bot)", got, want)
	}
	ms := c.matches(recs)
	if last := ms[len(ms)-1]; !last.Skipped {
		t.Errorf("the second grand final was played: %+v", last)
	}

	// Bot 1 loses only to bot 0 in the winners' final, then beats it in
	// the grand final: both have lost once, so a second match decides.
	met := 0
	recs = playFormat(t, c, func(white, black int) string {
		if min(white, black) == 0 && max(white, black) == 1 {
			met++
			if met > 2 { // the grand final and its second match: bot 1 wins
				if white == 1 {
					return transcript.WinnerWhite
				}
				return transcript.WinnerBlack
			}
		}
		return stronger(white, black)
	})
	if len(recs) != 15*2 {
		t.Errorf("%d games, want 15 matches of 2 (the grand final twice)", len(recs))
	}
	if got, want := placesOf(c.Standings(recs, recs))[:7], "1:1 2:0"; got != want {
		t.Errorf("places %s, want %s first", placesOf(c.Standings(recs, recs)), want)
	}
}

// Any field of 2 to 33 bots, any results: the double elimination ends;
// every bot but the winner has lost twice, the winner at most once; no bot
// plays two matches of a round; 2n-2 or 2n-1 matches are played.
func TestADoubleEliminationOfAnyFieldEnds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 40))
	for n := 2; n <= 33; n++ {
		for trial := range 5 {
			c := formatOf(DoubleElimination, n, 1)
			recs := playFormat(t, c, func(int, int) string {
				return []string{transcript.WinnerWhite, transcript.WinnerBlack, transcript.WinnerDraw}[rng.IntN(3)]
			})
			ms := c.matches(recs)
			losses, played := map[int]int{}, 0
			seen := map[[2]int]bool{}
			for _, m := range ms {
				if m.Winner == open && !m.Skipped {
					t.Fatalf("%d bots, trial %d: a match left open: %+v", n, trial, m)
				}
				if m.A < 0 || m.B < 0 || m.Skipped {
					continue
				}
				played++
				losses[m.Loser]++
				for _, b := range []int{m.A, m.B} {
					if seen[[2]int{m.Round, b}] {
						t.Fatalf("%d bots: bot %d plays twice in round %d", n, b, m.Round)
					}
					seen[[2]int{m.Round, b}] = true
				}
			}
			rows := c.Standings(recs, recs)
			champion := rows[0].Bot
			for b := range n {
				want := 2
				if b == champion {
					want = losses[b] // 0 or 1
					if want > 1 {
						t.Errorf("%d bots: the winner %d lost %d matches", n, b, want)
					}
				}
				if losses[b] != want {
					t.Errorf("%d bots, trial %d: bot %d lost %d matches", n, trial, b, losses[b])
				}
			}
			if played != 2*n-2 && played != 2*n-1 {
				t.Errorf("%d bots: %d matches played", n, played)
			}
			if rows[0].Rank != 1 || rows[1].Rank != 2 {
				t.Errorf("%d bots: places %s", n, placesOf(rows))
			}
		}
	}
}

// A stages tournament: the Swiss qualifier's top 4 of 10 play a round
// robin (or a double elimination) seeded by it; they hold the first four
// places in its order, the rest the qualifier's.
func TestAStagesTournamentSendsTheQualifiersTopOn(t *testing.T) {
	t.Parallel()
	for _, then := range SecondStages() {
		c := formatOf(Stages, 10, 2)
		c.Advance, c.Then, c.TieBreaks = 4, then, SwissTieBreaks()
		recs := playFormat(t, c, stronger)
		q := c.SwissRounds()
		if q != SwissRounds(10) {
			t.Fatalf("qualifier of %d rounds", q)
		}
		second := map[int]bool{}
		n := 0
		for _, r := range recs {
			if r.Round > q {
				second[r.White], second[r.Black] = true, true
				n++
			}
		}
		if len(second) != 4 || !second[0] || !second[1] || !second[2] || !second[3] {
			t.Errorf("then %s: the second stage's bots %v, want the qualifier's top 4 (0-3)", then, second)
		}
		want := 4 * 3 // a round robin, 2 games a pair
		if then == DoubleElimination {
			want = 6 * 2 // 6 matches of 2, no second grand final
		}
		if n != want {
			t.Errorf("then %s: %d games in the second stage, want %d", then, n, want)
		}
		rows := c.Standings(recs, recs)
		if got := placesOf(rows); !strings.HasPrefix(got, "1:0 2:1 3:2 4:3 5:") {
			t.Errorf("then %s: places %s", then, got)
		}
		for _, r := range rows {
			if r.Out != !second[r.Bot] && (then != DoubleElimination || !second[r.Bot]) {
				t.Errorf("then %s: bot %d out %v, in the second stage %v", then, r.Bot, r.Out, second[r.Bot])
			}
		}
		if planned := c.Planned(); planned != len(recs) {
			t.Errorf("then %s: %d games planned, %d played", then, planned, len(recs))
		}
	}
}

// A rating tournament of bots of clear strengths stops once every
// adjacent pair is told apart, before its budget; one of equal bots (every
// game drawn) plays its budget out and tells none apart.
func TestARatingTournamentPlaysWhereRanksAreUnsure(t *testing.T) {
	t.Parallel()
	c := formatOf(Rating, 6, 2)
	c.Budget = 2000
	recs := playFormat(t, c, stronger)
	if len(recs) >= c.Budget {
		t.Errorf("%d games, the whole budget: it never told them apart", len(recs))
	}
	rows := c.Standings(recs, recs)
	if got, want := placesOf(rows), "1:0 2:1 3:2 4:3 5:4 6:5"; got != want {
		t.Errorf("places %s, want %s", got, want)
	}
	for _, r := range rows[:5] {
		if !r.Separated {
			t.Errorf("stopped with %s not told apart from the next: %+v", r.Name, r.RankSet)
		}
	}
	// Where it played: after the Swiss start, only adjacent bots.
	for _, r := range recs {
		if r.Round > 3 && r.White-r.Black != 1 && r.Black-r.White != 1 {
			t.Errorf("round %d: %d against %d, not adjacent", r.Round, r.White, r.Black)
		}
	}

	c.Budget = 60
	recs = playFormat(t, c, func(int, int) string { return transcript.WinnerDraw })
	if len(recs) != c.Budget {
		t.Errorf("%d games of all draws, want the budget of %d", len(recs), c.Budget)
	}
	for _, r := range c.Standings(recs, recs) {
		if r.Separated {
			t.Errorf("equal bots told apart: %+v", r)
		}
	}
}

// A tournament played to its end has no games left to play, whatever its
// format planned: a rating tournament that told its ranks apart before
// its budget, or whose budget leaves less than a pair, is over (its run
// says finished, not interrupted); one with a round still to pair is not.
func TestATournamentPlayedToItsEndHasNothingLeftToPlay(t *testing.T) {
	t.Parallel()
	draws := func(int, int) string { return transcript.WinnerDraw }
	for _, c := range []struct {
		name   string
		config Config
		result func(int, int) string
	}{
		{"rating of 2, told apart", func() Config { c := formatOf(Rating, 2, 2); c.Budget = 12; return c }(), stronger},
		{"rating of 6, told apart", func() Config { c := formatOf(Rating, 6, 2); c.Budget = 2000; return c }(), stronger},
		{"rating of 5, its budget spent", func() Config { c := formatOf(Rating, 5, 2); c.Budget = 31; return c }(), draws},
		{"swiss of 7", formatOf(Swiss, 7, 2), stronger},
		{"knockout of 6, level", formatOf(Knockout, 6, 2), draws},
		{"double elimination of 5", formatOf(DoubleElimination, 5, 2), stronger},
		{"stages of 9", func() Config { c := formatOf(Stages, 9, 2); c.Advance, c.Then = 4, Knockout; return c }(), draws},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recs := playFormat(t, c.config, c.result)
			if n := c.config.unpaired(recs); n != 0 {
				t.Errorf("played to its end in %d games, it still has %d to play (planned %d)", len(recs), n, c.config.Planned())
			}
			first := c.config.Next(nil)
			if len(first) < len(recs) && c.config.unpaired(recs[:len(first)]) == 0 && c.config.Planned() > len(first) {
				t.Errorf("after its first round it has nothing left to play")
			}
			pending := append([]Record(nil), recs[:len(first)]...)
			pending[0].Status = Pending
			if len(first) < c.config.Planned() && c.config.unpaired(pending) == 0 {
				t.Errorf("with a game of its first round to play, its later rounds are not counted")
			}
		})
	}
}

// A stages tournament's bracket numbers each bot by its seed, its place in
// the qualifier, not by its place in the list given.
func TestAStagesBracketNumbersTheQualifiersPlaces(t *testing.T) {
	t.Parallel()
	c := formatOf(Stages, 6, 2)
	c.Advance, c.Then, c.TieBreaks = 4, DoubleElimination, SwissTieBreaks()
	// The last bot given is the strongest: it qualifies first.
	recs := playFormat(t, c, func(white, black int) string { return stronger(black, white) })
	for i := range recs {
		recs[i].Status = Done
	}
	svg := (&State{Config: c, Games: recs}).BracketSVG()
	for _, want := range []string{">1. b5<", ">2. b4<", ">3. b3<", ">4. b2<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the bracket does not name %s: %.400s", want, svg)
		}
	}
	if strings.Contains(svg, ">6. b5<") {
		t.Error("the bracket numbers the qualifier's first by its place in the list given")
	}
}
