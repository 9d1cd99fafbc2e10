package runner

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/sandbox/local"
)

// stopAfter stops a run once it has seen n games finish.
type stopAfter struct {
	n      int32
	seen   atomic.Int32
	cancel context.CancelFunc
}

func (s *stopAfter) Start(int, int) {}

func (s *stopAfter) Finish() {}

func (s *stopAfter) GameDone(tournament.Record, string, string, string) {
	if s.seen.Add(1) == s.n {
		s.cancel()
	}
}

// fiveBots makes the options of a tournament of five bots, the legal and
// the shuffling fixture in turn, named by name (a format of the fixture's
// mode and the bot's number), in a directory of its own.
func fiveBots(t *testing.T, name string) func(dir string) Options {
	legal, shuffle := fixtureBot(t, "legal"), fixtureBot(t, "shuffle")
	return func(dir string) Options {
		o := options(t, dir, nil, &local.Backend{Dir: t.TempDir()}, "local")
		for i, mode := range []string{"legal", "shuffle", "legal", "shuffle", "legal"} {
			b := *legal
			if mode == "shuffle" {
				b = *shuffle
			}
			b.Name = fmt.Sprintf(name, mode, i)
			o.Bots = append(o.Bots, &b)
			o.Config.Bots = append(o.Config.Bots, tournament.BotEntry{Name: b.Name, SHA256: b.SHA256, Source: b.Source})
		}
		return o
	}
}

// playedAndResumed runs the tournament build makes twice: once through,
// and once stopped after each of stops games (one game at a time) then
// resumed to its end. It returns each run's last summary and its state.
func playedAndResumed(t *testing.T, build func(dir string) Options, stops ...int32) (whole, resumed *tournament.Summary, a, b *tournament.State) {
	t.Helper()
	wholeDir, dir := t.TempDir(), t.TempDir()
	whole, err := Run(context.Background(), build(wholeDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, stop := range stops {
		ctx, cancel := context.WithCancel(context.Background())
		o := build(dir)
		o.Concurrency, o.Progress = 1, &stopAfter{n: stop, cancel: cancel}
		if _, err := Run(ctx, o); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if resumed, err = Run(context.Background(), build(dir)); err != nil {
		t.Fatal(err)
	}
	if a, err = tournament.Load(context.Background(), wholeDir); err != nil {
		t.Fatal(err)
	}
	if b, err = tournament.Load(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return whole, resumed, a, b
}

// A Swiss tournament stopped in the middle of a round, and again later,
// then resumed, pairs every round exactly as one played through does, and
// ends with the same standings: the pairing is a pure function of the
// seed and the results.
func TestASwissTournamentResumesAsItWasPaired(t *testing.T) {
	t.Parallel()
	field := fiveBots(t, "%s-%d")
	build := func(dir string) Options {
		o := field(dir)
		o.Config.Format, o.Config.TieBreaks, o.Config.Rounds = tournament.Swiss, tournament.SwissTieBreaks(), 4
		return o
	}
	whole, resumed, a, b := playedAndResumed(t, build, 3, 7)
	if whole.Total != 4*2*2 || resumed.Total != whole.Total || resumed.Done != whole.Done {
		t.Fatalf("games: whole %d of %d, resumed %d of %d", whole.Done, whole.Total, resumed.Done, resumed.Total)
	}
	for i := range a.Games {
		x, y := a.Games[i].Game, b.Games[i].Game
		if x != y {
			t.Errorf("game %d: %+v played through, %+v resumed", i+1, x, y)
		}
	}
	if tournament.String(a.Summary.Standings, tournament.SwissTieBreaks()) != tournament.String(b.Summary.Standings, tournament.SwissTieBreaks()) {
		t.Errorf("standings differ:\n%s\n%s", tournament.String(a.Summary.Standings, tournament.SwissTieBreaks()), tournament.String(b.Summary.Standings, tournament.SwissTieBreaks()))
	}
	byes := 0
	for _, r := range a.Summary.Standings {
		byes += r.Byes
	}
	if byes != 4 {
		t.Errorf("%d byes in 4 rounds of 5 bots", byes)
	}
}

// A knockout stopped midway and resumed is paired game for game as one
// played through; its report draws the bracket, names as text.
func TestAKnockoutResumesAsItWasPaired(t *testing.T) {
	t.Parallel()
	field := fiveBots(t, "%s<%d>")
	build := func(dir string) Options {
		o := field(dir)
		o.Config.Format = tournament.Knockout
		return o
	}
	_, _, a, b := playedAndResumed(t, build, 3)
	if len(a.Games) != len(b.Games) || len(a.Games) < 4*2 {
		t.Fatalf("%d games played through, %d resumed", len(a.Games), len(b.Games))
	}
	for i := range a.Games {
		if a.Games[i].Game != b.Games[i].Game {
			t.Errorf("game %d: %+v played through, %+v resumed", i+1, a.Games[i].Game, b.Games[i].Game)
		}
	}
	if a.Summary.Standings[0].Rank != 1 || a.Summary.Standings[1].Rank != 2 {
		t.Errorf("the places: %+v", a.Summary.Standings)
	}
	svg := a.BracketSVG()
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "legal&lt;0&gt;") || strings.Contains(svg, "legal<0>") || strings.Count(svg, `class="m"`) != 4+2+1 {
		t.Errorf("the bracket drawn: %.400s", svg)
	}
	if html := string(a.HTML()); !strings.Contains(html, "<h2>Bracket</h2>") {
		t.Error("the report draws no bracket")
	}
}

// Double elimination, stages and rating tournaments stopped twice and
// resumed are paired game for game as ones played through, with the same
// standings.
func TestTheAdaptiveFormatsResumeAsTheyWerePaired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*tournament.Config)
	}{
		{tournament.DoubleElimination, func(c *tournament.Config) { c.Format, c.GamesPerPair = tournament.DoubleElimination, 1 }},
		{tournament.Stages, func(c *tournament.Config) {
			c.Format, c.Rounds, c.Advance, c.Then, c.GamesPerPair = tournament.Stages, 2, 3, tournament.DoubleElimination, 1
		}},
		{tournament.Rating, func(c *tournament.Config) { c.Format, c.Budget = tournament.Rating, 16 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			field := fiveBots(t, "%s-%d")
			build := func(dir string) Options {
				o := field(dir)
				tc.edit(&o.Config)
				return o
			}
			_, _, a, b := playedAndResumed(t, build, 3, 5)
			if len(a.Games) != len(b.Games) || len(a.Games) < 7 {
				t.Fatalf("%d games played through, %d resumed", len(a.Games), len(b.Games))
			}
			for i := range a.Games {
				if a.Games[i].Game != b.Games[i].Game {
					t.Errorf("game %d: %+v played through, %+v resumed", i+1, a.Games[i].Game, b.Games[i].Game)
				}
			}
			if tournament.String(a.Summary.Standings, tournament.SwissTieBreaks()) != tournament.String(b.Summary.Standings, tournament.SwissTieBreaks()) {
				t.Errorf("standings differ:\n%s\n%s", tournament.String(a.Summary.Standings, tournament.SwissTieBreaks()), tournament.String(b.Summary.Standings, tournament.SwissTieBreaks()))
			}
		})
	}
}
