package services

import (
	"context"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
)

// BenchmarkFinalEstimate compares the estimate the organizer's page gives
// before the final with the time the final then takes, for each format at
// the size the tests use: six teams (the greedy example and the random one
// three times each), two games a pair, two at once, on the local sandbox,
// after a short ladder (the estimate's sample). It reports the estimate
// over the real time ("estimate/real"; 1 is exact), the real time and the
// estimate in seconds, and the time before the first game starts and
// after the last one ends ("start+end-ms"), which no game's time holds.
func BenchmarkFinalEstimate(b *testing.B) {
	for _, shape := range []event.Shape{
		{Format: tournament.RoundRobin},
		{Format: tournament.Swiss},
		{Format: tournament.Knockout},
		{Format: tournament.Stages, Rounds: 3, Advance: 4, Then: tournament.RoundRobin},
	} {
		b.Run(shape.Format, func(b *testing.B) {
			shape.GamesPerPair = 2
			var ratio, real, est float64
			var ends time.Duration // from the start to the first game, and from the last to the end
			n := 0
			for b.Loop() {
				e := newEventOf(b, "./examples/greedy", "./examples/random", "./examples/greedy", "./examples/random", "./examples/greedy", "./examples/random")
				e.playLadder(b, 12)
				ctx := context.Background()
				estimate, err := e.store.FinalEstimate(ctx, shape, len(e.subs), 2)
				if err != nil {
					b.Fatal(err)
				}
				marks := &timeMarks{}
				f := Final{Settings: e.settings, Backend: e.backend, Builder: e.builder, Intake: e.cfg.Intake(),
					Shape: shape, Seed: 3, Concurrency: 2, MaxAttempts: 1, ArenaVersion: "bench", Signer: e.signer, Progress: marks}
				start := time.Now()
				plan, err := PrepareFinal(ctx, e.store, f)
				if err != nil {
					b.Fatal(err)
				}
				sum, err := plan.Play(ctx)
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				ends += marks.start.Sub(start) + start.Add(took).Sub(marks.last)
				if sum.Unplayed > 0 {
					b.Fatalf("%d games unplayed", sum.Unplayed)
				}
				d := estimate.Chosen().Duration
				after, err := e.store.FinalEstimate(ctx, shape, len(e.subs), 2)
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("%d games in %v; the estimate: %s (a game %v; the final's own %v)", sum.Done, took, estimate.Chosen(), estimate.MeanGame, after.MeanGame)
				ratio += d.Seconds() / took.Seconds()
				real += took.Seconds()
				est += d.Seconds()
				n++
			}
			b.ReportMetric(ratio/float64(n), "estimate/real")
			b.ReportMetric(real/float64(n), "real-s")
			b.ReportMetric(est/float64(n), "estimate-s")
			b.ReportMetric(float64(ends.Milliseconds())/float64(n), "start+end-ms")
		})
	}
}

// timeMarks notes when the final started to play and its last game ended.
type timeMarks struct{ start, last time.Time }

func (m *timeMarks) Start(int, int) {
	if m.start.IsZero() {
		m.start = time.Now()
	}
}
func (m *timeMarks) GameDone(tournament.Record, string, string, string) { m.last = time.Now() }
func (m *timeMarks) Finish()                                            {}
