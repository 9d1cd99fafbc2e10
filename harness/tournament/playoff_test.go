package tournament

import (
	"testing"

	"github.com/arenabots/arena/harness/transcript"
)

// playOut plays a tournament from its first games until its pairing adds
// none, each game's winner from result.
func playOut(t *testing.T, c Config, result func(g Game) string) []Record {
	t.Helper()
	games, err := c.FirstGames()
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for range 1000 {
		if len(games) == 0 {
			return recs
		}
		for _, g := range games {
			if g.ID != len(recs)+1 {
				t.Fatalf("game id %d, want %d", g.ID, len(recs)+1)
			}
			recs = append(recs, Record{Game: g, Status: Done, Winner: result(g)})
		}
		games = c.Next(recs)
	}
	t.Fatalf("the %s tournament never ended", c.Format)
	return nil
}

func playoffsOf(recs []Record) []Record {
	var out []Record
	for _, r := range recs {
		if r.Playoff > 0 {
			out = append(out, r)
		}
	}
	return out
}

// winner says bot w wins a game it plays (or the game is drawn).
func winner(g Game, w int) string {
	switch w {
	case g.White:
		return transcript.WinnerWhite
	case g.Black:
		return transcript.WinnerBlack
	}
	return transcript.WinnerDraw
}

// levelPair: in a round robin of four, bots 0 and 1 draw each other and
// beat 2 and 3 alike: level on points and on every tie-break but the lot.
func levelPair(playoff func(g Game) string) func(g Game) string {
	return func(g Game) string {
		if g.Playoff > 0 {
			return playoff(g)
		}
		a, b := min(g.White, g.Black), max(g.White, g.Black)
		switch {
		case a == 0 && b == 1:
			return transcript.WinnerDraw
		case a <= 1:
			return winner(g, a)
		}
		return winner(g, 2)
	}
}

// A title level after every tie-break is played for: a side-swapped pair
// after the last round (the same seed, sides swapped, in that round), and
// its winner is first, "placed by the playoff", with no lot drawn.
func TestATitleLevelAfterEveryTieBreakIsPlayedFor(t *testing.T) {
	t.Parallel()
	c := formatOf(RoundRobin, 4, 2)
	recs := playOut(t, c, levelPair(func(g Game) string {
		if g.White == 1 {
			return transcript.WinnerWhite // bot 1 wins with White, draws with Black
		}
		return transcript.WinnerDraw
	}))
	po := playoffsOf(recs)
	if len(po) != 2 {
		t.Fatalf("%d playoff games, want a side-swapped pair: %+v", len(po), po)
	}
	last := 0
	for _, r := range recs {
		if r.Playoff == 0 {
			last = max(last, r.Round)
		}
	}
	a, b := po[0], po[1]
	if a.Playoff != 1 || b.Playoff != 1 || a.Seed != b.Seed || a.White != b.Black || a.Black != b.White || a.Pair != b.Pair || a.Round != last ||
		min(a.White, a.Black) != 0 || max(a.White, a.Black) != 1 {
		t.Errorf("the playoff is %+v and %+v; want bots 0 and 1, sides swapped, one seed and pair, in round %d", a.Game, b.Game, last)
	}
	rows := c.Standings(recs, recs)
	if got := placesOf(rows); got != "1:1 2:0 3:2 4:3" {
		t.Errorf("places %s, want bot 1 first", got)
	}
	if rows[0].DecidedBy != PlayoffTieBreak || rows[0].ByLot || rows[1].ByLot {
		t.Errorf("first place is decided by %q, by lot %v/%v; want the playoff, no lot", rows[0].DecidedBy, rows[0].ByLot, rows[1].ByLot)
	}
	if rows[1].DecidedBy != "" {
		t.Errorf("second place, above a bot with fewer points, is said placed by %q", rows[1].DecidedBy)
	}
	if rows[0].Points != rows[1].Points || rows[0].Games != 6 {
		t.Errorf("the playoff counted in points or games: %+v", rows[:2])
	}
}

// A playoff drawn throughout ends: the pair, then four single deciders,
// sides alternating, then the lot (which says so). Asked for none, the
// lot decides at once.
func TestAPlayoffDrawnThroughoutEndsInTheLot(t *testing.T) {
	t.Parallel()
	c := formatOf(RoundRobin, 4, 2)
	recs := playOut(t, c, levelPair(func(Game) string { return transcript.WinnerDraw }))
	po := playoffsOf(recs)
	if len(po) != 2+maxDeciders {
		t.Fatalf("%d playoff games, want the pair and %d deciders", len(po), maxDeciders)
	}
	for i, r := range po[2:] {
		if r.Playoff != i+2 || i > 0 && r.White == po[i+1].White {
			t.Errorf("decider %d: %+v after %+v; want round %d, sides swapped", i+1, r.Game, po[i+1].Game, i+2)
		}
	}
	rows := c.Standings(recs, recs)
	if rows[0].DecidedBy != RandomDraw || !rows[0].ByLot {
		t.Errorf("first place: decided by %q, by lot %v; want the lot, said", rows[0].DecidedBy, rows[0].ByLot)
	}

	c.Playoff = NoPlayoff
	recs = playOut(t, c, levelPair(func(Game) string { t.Fatal("a playoff game was paired"); return "" }))
	if rows := c.Standings(recs, recs); len(recs) != 12 || !rows[0].ByLot {
		t.Errorf("with no playoff: %d games, first by lot %v; want 12 and the lot", len(recs), rows[0].ByLot)
	}
}

// A stages tournament whose cut is level (every qualifier game drawn)
// plays for it before its second stage is seeded: the bots that win the
// playoff go on; the standings of those left out follow the playoff too.
func TestAStagesCutLevelIsPlayedForBeforeTheSecondStage(t *testing.T) {
	t.Parallel()
	c := formatOf(Stages, 6, 2)
	c.Advance, c.Then, c.Rounds, c.TieBreaks = 3, RoundRobin, 2, SwissTieBreaks()
	q := c.SwissRounds()
	recs := playOut(t, c, func(g Game) string {
		if g.Round <= q && g.Playoff == 0 {
			return transcript.WinnerDraw
		}
		return winner(g, min(g.White, g.Black)) // the lower-numbered bot wins
	})
	po := playoffsOf(recs)
	if len(po) != 30 {
		t.Fatalf("%d playoff games, want a side-swapped pair for each of the 15 pairs of the six level bots", len(po))
	}
	for _, r := range po {
		if r.Round != q || r.Playoff != 1 {
			t.Errorf("a playoff game in round %d (playoff %d), want round %d, playoff 1", r.Round, r.Playoff, q)
		}
	}
	_, seeds, _ := c.secondStage(recs)
	if len(seeds) != 3 || seeds[0] != 0 || seeds[1] != 1 || seeds[2] != 2 {
		t.Errorf("the second stage seeds %v, want the playoff's top three 0, 1, 2", seeds)
	}
	for _, r := range recs {
		if r.Round > q && (r.White > 2 || r.Black > 2) {
			t.Errorf("a bot not through the cut plays the second stage: %+v", r.Game)
		}
	}
	rows := c.Standings(recs, recs)
	if got := placesOf(rows); got != "1:0 2:1 3:2 4:3 5:4 6:5" {
		t.Errorf("places %s", got)
	}
	for _, r := range rows {
		if r.ByLot {
			t.Errorf("%s is placed by lot", r.Name)
		}
	}
	if rows[2].DecidedBy != PlayoffTieBreak || rows[3].DecidedBy != PlayoffTieBreak || rows[5].DecidedBy != "" {
		t.Errorf("the cut (third place) is placed by %q, fourth by %q, the last by %q; want the playoff, the playoff, nothing", rows[2].DecidedBy, rows[3].DecidedBy, rows[5].DecidedBy)
	}
	// Before the playoff is played, no second stage is seeded.
	var qualifier []Record
	for _, r := range recs {
		if r.Round <= q && r.Playoff == 0 {
			qualifier = append(qualifier, r)
		}
	}
	if _, seeds, _ := c.secondStage(qualifier); seeds != nil {
		t.Errorf("the second stage is seeded (%v) before the cut's playoff", seeds)
	}
	// Once the cut is played off, the games still to pair are the second
	// stage's: a playoff's games take none of the format's planned ones.
	var cut []Record
	for _, r := range recs {
		if r.Round <= q {
			cut = append(cut, r)
		}
	}
	if got, want := c.unpaired(cut), 3*2/2*2; got != want {
		t.Errorf("after the cut's playoff, %d games are still to pair; want the second stage's %d", got, want)
	}
}

// A Swiss bye stays a bye when a playoff follows its round: the bot that
// sat the last round out (alone first, every game drawn) keeps its
// points while the two level on second place, a place the organizer
// named, play for it.
func TestASwissByeSurvivesThePlayoffAfterIt(t *testing.T) {
	t.Parallel()
	c := formatOf(Swiss, 3, 2)
	c.TieBreaks, c.Playoff = []string{RandomDraw}, []int{2}
	var before []Row
	recs := playOut(t, c, func(g Game) string {
		return transcript.WinnerDraw
	})
	var own []Record
	for _, r := range recs {
		if r.Playoff == 0 {
			own = append(own, r)
		}
	}
	before = c.Standings(own, own)
	if len(playoffsOf(recs)) == 0 {
		t.Fatal("no playoff was played for a place two bots drew level on")
	}
	after := c.Standings(recs, recs)
	points := map[int]float64{}
	for _, r := range before {
		points[r.Bot] = r.Points
	}
	for _, r := range after {
		if r.Points != points[r.Bot] || r.Byes == 0 {
			t.Errorf("%s: %g points and %d byes after the playoff, %g before", r.Name, r.Points, r.Byes, points[r.Bot])
		}
	}
	// The bot that sat out the last round plays a playoff game after it:
	// still a bye in that round.
	last := own[len(own)-1]
	sat := 3 - last.White - last.Black
	recs = append(recs, Record{Game: Game{ID: len(recs) + 1, Round: last.Round, White: sat, Black: last.White, Playoff: 1}, Status: Done, Winner: transcript.WinnerDraw})
	for _, r := range c.Standings(recs, recs) {
		if r.Bot == sat && r.Points != points[sat] {
			t.Errorf("%s, out of round %d, has %g points once it plays a playoff game after it, %g before", r.Name, last.Round, r.Points, points[sat])
		}
	}
}
