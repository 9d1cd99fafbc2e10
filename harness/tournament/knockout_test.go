package tournament

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
)

func TestBracketOrder(t *testing.T) {
	t.Parallel()
	if got := bracketOrder(8); !slices.Equal(got, []int{1, 8, 4, 5, 2, 7, 3, 6}) {
		t.Errorf("the bracket of 8: %v", got)
	}
	for bots, want := range map[int]int{2: 2, 3: 4, 6: 8, 8: 8, 9: 16, 300: 512} {
		if got := bracketSize(bots); got != want {
			t.Errorf("bracketSize(%d) = %d, want %d", bots, got, want)
		}
	}
}

// formatOf is a configuration of n bots in format, gamesPerPair a pair.
func formatOf(format string, n, gamesPerPair int) Config {
	c := Config{Format: format, GamesPerPair: gamesPerPair, Seed: 1, Scoring: DefaultScoring(), TieBreaks: DefaultTieBreaks()}
	for i := range n {
		c.Bots = append(c.Bots, BotEntry{Name: fmt.Sprintf("b%d", i)})
	}
	return c
}

// playFormat plays a tournament by its own pairing, each game's result
// from result(white, black), until it adds no game; it returns the
// records.
func playFormat(t testing.TB, c Config, result func(white, black int) string) []Record {
	t.Helper()
	var recs []Record
	for range 10000 {
		games := c.Next(recs)
		if len(games) == 0 {
			return recs
		}
		for i, g := range games {
			if g.ID != len(recs)+1 {
				t.Fatalf("game %d of a round has id %d, want %d", i, g.ID, len(recs)+1)
			}
			recs = append(recs, Record{Game: g, Status: Done, Winner: result(g.White, g.Black)})
		}
	}
	t.Fatalf("the %s tournament never ended", c.Format)
	return nil
}

// playKnockout plays a knockout of n bots.
func playKnockout(t *testing.T, n, gamesPerPair int, result func(white, black int) string) []Record {
	t.Helper()
	return playFormat(t, formatOf(Knockout, n, gamesPerPair), result)
}

// knockoutRounds are a knockout's matches round by round.
func knockoutRounds(n, gamesPerPair int, recs []Record) [][]Match {
	var rounds [][]Match
	for _, m := range formatOf(Knockout, n, gamesPerPair).matches(recs) {
		if len(rounds) < m.Round {
			rounds = append(rounds, nil)
		}
		rounds[m.Round-1] = append(rounds[m.Round-1], m)
	}
	return rounds
}

// A bracket of six: seeds 1 and 2 sit the first round out, the stronger
// bot wins each match but one planted upset, and the places follow how
// far each went; a match level after its games gets single deciders, and
// after the last of them the higher seed goes through.
func TestAKnockoutPlaysItsBracket(t *testing.T) {
	t.Parallel()
	stronger := func(white, black int) string {
		// Bot 4 (seed 5) beats bot 3 (seed 4): the upset.
		if white == 4 && black == 3 || white == 3 && black == 4 {
			if white == 4 {
				return transcript.WinnerWhite
			}
			return transcript.WinnerBlack
		}
		if white < black {
			return transcript.WinnerWhite
		}
		return transcript.WinnerBlack
	}
	recs := playKnockout(t, 6, 2, stronger)
	rounds := knockoutRounds(6, 2, recs)
	if len(rounds) != 3 || rounds[0][0].B != Bye || rounds[0][2].B != Bye {
		t.Fatalf("the bracket: %+v", rounds)
	}
	if final := rounds[2][0]; final.A != 0 || final.B != 1 || final.Winner != 0 {
		t.Errorf("the final: %+v, want seed 1 beating seed 2", final)
	}
	if len(recs) != 5*2 {
		t.Errorf("%d games; 5 matches of 2 games and no decider", len(recs))
	}
	if got, want := placesOf(formatOf(Knockout, 6, 2).Standings(recs, recs)), "1:0 2:1 3:2 3:4 5:3 5:5"; got != want {
		t.Errorf("places %s, want %s (rank:bot)", got, want)
	}
	// Every bot but the winner went out; before the final, its two are in.
	for _, r := range formatOf(Knockout, 6, 2).Standings(recs, recs) {
		if r.Out != (r.Bot != 0) {
			t.Errorf("over: bot %d out %v", r.Bot, r.Out)
		}
	}
	var beforeFinal []Record
	for _, r := range recs {
		if r.Round < 3 {
			beforeFinal = append(beforeFinal, r)
		}
	}
	for _, r := range formatOf(Knockout, 6, 2).Standings(beforeFinal, beforeFinal) {
		if r.Out != (r.Bot != 0 && r.Bot != 1) {
			t.Errorf("before the final: bot %d out %v", r.Bot, r.Out)
		}
	}

	// Every game drawn: each match adds its deciders, then the higher
	// seed goes through.
	recs = playKnockout(t, 4, 2, func(int, int) string { return transcript.WinnerDraw })
	rounds = knockoutRounds(4, 2, recs)
	for _, ms := range rounds {
		for _, m := range ms {
			if m.Games != 2+maxDeciders || !m.BySeed || m.Winner != min(m.A, m.B) {
				t.Errorf("a match drawn throughout: %+v", m)
			}
		}
	}
	if len(recs) != 3*(2+maxDeciders) {
		t.Errorf("%d games, want 3 matches of %d", len(recs), 2+maxDeciders)
	}
	// The places say the seeds decided the final, and the deciders are
	// single games, not pairs left incomplete.
	c := formatOf(Knockout, 4, 2)
	rows := c.Standings(recs, recs)
	if rows[0].Bot != 0 || rows[0].DecidedBy != DecidedBySeed || rows[len(rows)-1].DecidedBy != "" {
		t.Errorf("the final decided on seed: %+v", rows)
	}
	for _, r := range rows { // level on points throughout, placed by the bracket
		if r.ByLot {
			t.Errorf("bot %d's place in the bracket is said drawn by lot", r.Bot)
		}
	}
	for i := range recs {
		recs[i].Status = Done
	}
	for _, p := range pairRows(c.Bots, recs) {
		if p.Incomplete != 0 || p.Singles != maxDeciders || p.Pentanomial[2] != 1 {
			t.Errorf("%s against %s: %d incomplete, %d single games, %v", p.A, p.B, p.Incomplete, p.Singles, p.Pentanomial)
		}
	}
}

// A bracket drawn as of a freeze shows only the games shown: a match whose
// games are hidden has no points and no winner, and the round after it
// does not know who plays.
func TestABracketDrawnAsOfAFreeze(t *testing.T) {
	t.Parallel()
	c := formatOf(Knockout, 4, 1)
	c.Bots[0].Name, c.Bots[3].Name = "Top", "Fourth"
	recs := playKnockout(t, 4, 1, stronger)
	s := &State{Config: c, Games: recs}
	whole := s.BracketSVG()
	// Shown: round one's first match only (seed 1 against seed 4).
	frozen := s.BracketSVGOf(func(r Record) bool { return r.Round == 1 && (r.White == 0 || r.Black == 0) })
	if strings.Count(whole, `font-weight="700"`) != 2*3 {
		t.Errorf("the whole bracket marks %d winners' lines, want both lines of 3 matches", strings.Count(whole, `font-weight="700"`)/2)
	}
	if n := strings.Count(frozen, `font-weight="700"`); n != 2 {
		t.Errorf("the frozen bracket marks %d winners' lines, want the one match shown", n/2)
	}
	if !strings.Contains(frozen, ">…<") || strings.Contains(whole, ">…<") {
		t.Error("the frozen bracket's final should not know one of its sides, the whole one should")
	}
}
