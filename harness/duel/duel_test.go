package duel

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// options are a duel of a against b on the local sandbox.
func options(t testing.TB, a, b *submission.Bot, sprt stats.SPRT, pairs int, maxPlies string) Options {
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 5 * time.Second
	cfg := tournament.Config{Seed: 5, Game: "codeclash", Rules: map[string]string{"maxPlies": maxPlies}, Limits: lim,
		OnFault: "forfeit", Sandbox: "local", Scoring: tournament.DefaultScoring(), TieBreaks: tournament.DefaultTieBreaks(),
		Bots: runner.Entries([]*submission.Bot{a, b})}
	return Options{Pairs: pairs, SPRT: &sprt, Tournament: runner.Options{
		Dir: t.TempDir(), Config: cfg, Bots: []*submission.Bot{a, b}, Game: codeclash.Game{},
		Backend: &local.Backend{Dir: t.TempDir()}, Concurrency: 2, ArenaVersion: "test"}}
}

// counted is what the games stored in a duel's directory come to, counted
// again from the database: complete pairs only.
func counted(t *testing.T, dir string) (stats.Penta, int) {
	t.Helper()
	st, err := tournament.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	byPair := map[int][]float64{}
	for _, r := range st.Games {
		if p, ok := r.Score(1); ok {
			byPair[r.Pair] = append(byPair[r.Pair], p)
		}
	}
	var penta stats.Penta
	for _, two := range byPair {
		if len(two) == 2 {
			penta.Add(two[0], two[1])
		}
	}
	return penta, len(st.Games)
}

// The greedy bot against the random one: the SPRT accepts H1 (B, greedy, is
// stronger) and stops; the counts are those of the stored games; every
// game replays; and a second run of the same duel plays nothing more and
// says the same.
func TestGreedyBeatsRandomBySPRT(t *testing.T) {
	t.Parallel()
	random := submissiontest.Fixture(t, "./examples/random", "random")
	greedy := submissiontest.Fixture(t, "./examples/greedy", "greedy")
	o := options(t, random, greedy, stats.SPRT{Elo0: 0, Elo1: 100, Alpha: 0.05, Beta: 0.05, Model: stats.Normalized}, 200, "20")
	var seen []Status
	o.Progress = func(s Status) { seen = append(seen, s) }
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", st)
	if st.Decision != stats.AcceptH1 || st.Pairs.Pairs() >= 200 || len(seen) != st.Pairs.Pairs() {
		t.Fatalf("%s (%d progress lines)", st, len(seen))
	}
	penta, _ := counted(t, o.Tournament.Dir)
	// Games that ended after the decision are stored but not counted.
	for k := range penta {
		if penta[k] < st.Pairs[k] {
			t.Fatalf("counted %s, stored %s", st.Pairs, penta)
		}
	}
	if lo, hi := o.SPRT.Bounds(); st.LLR < hi || st.Lower != lo || st.Estimate.LOS < 0.99 {
		t.Fatalf("%s", st)
	}
	loaded, _ := tournament.Load(context.Background(), o.Tournament.Dir)
	for _, r := range loaded.Games[:4] {
		rep, err := replay.File(filepath.Join(o.Tournament.Dir, r.Dir))
		if err != nil || !rep.Consistent || rep.Header.Job.Pair != r.Pair {
			t.Fatalf("game %d: %v %s", r.ID, err, rep.Problem())
		}
	}
	_, before := counted(t, o.Tournament.Dir)
	o.Progress = nil
	again, err := Run(context.Background(), o)
	if err != nil || again.Pairs != st.Pairs || again.Decision != st.Decision {
		t.Fatalf("the same duel again: %s, %v; first %s", again, err, st)
	}
	if _, after := counted(t, o.Tournament.Dir); after != before {
		t.Fatalf("%d games, then %d", before, after)
	}
}

// A bot against itself: H1 is never accepted, H0 is (or the pairs run out).
func TestABotAgainstItselfIsNotStronger(t *testing.T) {
	t.Parallel()
	a := submissiontest.Fixture(t, "./examples/random", "random")
	b := submissiontest.Fixture(t, "./examples/random", "random-copy")
	// Short games: what a pair of them says does not depend on their length.
	o := options(t, a, b, stats.SPRT{Elo0: 0, Elo1: 100, Alpha: 0.05, Beta: 0.05, Model: stats.Normalized}, 200, "12")
	st, err := Run(context.Background(), o)
	t.Logf("%s", st)
	if st.Decision == stats.AcceptH1 || err != nil && !errors.Is(err, ErrUndecided) {
		t.Fatalf("%s: %v", st, err)
	}
}

// Pairs are counted only when both games were played; a pair with a game
// the host could not play is left out, whichever of its games came first.
func TestOnlyCompletePairsCount(t *testing.T) {
	o := &Options{Pairs: 10}
	tl := &tally{o: o, partial: map[int]float64{}, lost: map[int]bool{}, b: 1, live: true}
	game := func(pair, white int, winner, status string) tournament.Record {
		r := tournament.Record{Status: status, Winner: winner}
		r.Pair, r.White, r.Black = pair, white, 1-white
		return r
	}
	for _, r := range []tournament.Record{
		game(1, 0, "black", tournament.Done), // B wins as Black
		game(2, 0, "draw", tournament.Done),
		game(1, 1, "white", tournament.Done), // and as White: WW
		game(3, 0, "", tournament.Unplayed),
		game(3, 1, "white", tournament.Done),
		game(4, 1, "black", tournament.Done),
		game(4, 0, "", tournament.Unplayed),
		game(2, 1, "black", tournament.Done), // a draw and a loss: LD
	} {
		if tl.settled(r) {
			t.Fatal("no SPRT, never enough")
		}
	}
	s := tl.status
	if s.Pairs != (stats.Penta{0, 1, 0, 0, 1}) || s.Games != (stats.WDL{W: 2, D: 1, L: 1}) || s.Unpaired != 2 {
		t.Fatalf("%+v", s)
	}
}
