package duel

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// BenchmarkBookkeeping is what a duel costs per game beyond playing it:
// claiming the game and storing its result in SQLite (synchronous, as in a
// real duel), then counting it into the pairs, the estimate and the SPRT.
// Compare with BenchmarkDuelOfInstantBots' time per game.
func BenchmarkBookkeeping(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := tournament.OpenStore(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	games, _ := tournament.Schedule(tournament.RoundRobin, 2, -1, b.N+1, 1, 0)
	if err := st.Init(ctx, tournament.Config{Format: tournament.RoundRobin, GamesPerPair: b.N + 1}, games); err != nil {
		b.Fatal(err)
	}
	sprt := stats.DefaultSPRT()
	tl := &tally{o: &Options{Pairs: b.N, SPRT: &sprt}, partial: map[int]float64{}, lost: map[int]bool{}, b: 1, live: true}
	r := rand.New(rand.NewPCG(1, 2))
	winners := []string{transcript.WinnerWhite, transcript.WinnerDraw, transcript.WinnerBlack}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, ok, err := st.Claim(ctx, func(tournament.Record) string { return "games/g" })
		if err != nil || !ok {
			b.Fatal(err)
		}
		res := transcript.Result{Winner: winners[r.IntN(3)], Reason: "bench", Plies: 40}
		if err := st.Finish(ctx, g.ID, res, "games/g", tournament.Times{}, ""); err != nil {
			b.Fatal(err)
		}
		g.Status, g.Winner = tournament.Done, res.Winner
		tl.settled(g)
	}
}

// BenchmarkDuelOfInstantBots is the wall time per game of a duel of two
// bots that answer at once (the random Code Clash bot against itself, short
// games) on the local sandbox, two games at a time.
func BenchmarkDuelOfInstantBots(b *testing.B) {
	a := submissiontest.Fixture(b, "./examples/random", "random")
	c := submissiontest.Fixture(b, "./examples/random", "random-copy")
	pairs := max(1, b.N/2)
	o := options(b, a, c, stats.DefaultSPRT(), pairs, "12")
	o.SPRT = nil // every pair is played
	b.ResetTimer()
	start := time.Now()
	st, err := Run(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(2*st.Pairs.Pairs()), "µs/game")
}
