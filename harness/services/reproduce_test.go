package services

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/reproduce"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/verify"
)

// A published final plays again from its submissions: every game of a
// final of four teams (the greedy and the random example twice each, both
// deterministic) is the same, turn by turn. A player whose program is not
// among the submissions is named and its games are not played; one whose
// upload is there but builds to another program is named as such.
func TestAPublishedFinalPlaysAgainFromItsSubmissions(t *testing.T) {
	t.Parallel()
	e, bundle, r, bots, _ := publishedFinal(t, 1)
	ctx := context.Background()
	played := 0
	rep, err := reproduce.Final(ctx, verify.Dir(bundle), r, reproduce.Options{Backend: e.backend, Bots: bots, Dir: t.TempDir(), Concurrency: 2,
		Played: func(reproduce.Game) { played++ }})
	if err != nil {
		t.Fatal(err)
	}
	same, differ, notPlayed := rep.Same()
	if same != 6 || differ != 0 || notPlayed != 0 || played != 6 || len(rep.Missing) != 0 {
		t.Fatalf("the final played again: %d the same, %d differ, %d not played, %d told; %+v", same, differ, notPlayed, played, rep)
	}
	for _, g := range rep.Games {
		if g.Turns == 0 || g.White == "" || g.Dir == "" {
			t.Errorf("game %d played again says too little: %+v", g.ID, g)
		}
	}

	// The random bot's program is not there: the five games of its two
	// teams are not played, and each is named. Another build of its
	// upload is named as such.
	rebuilt := *bots[1]
	rebuilt.SHA256 = strings.Repeat("0", 64)
	rep, err = reproduce.Final(ctx, verify.Dir(bundle), r, reproduce.Options{Backend: e.backend, Bots: []*submission.Bot{bots[0], &rebuilt}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	same, differ, notPlayed = rep.Same()
	if same != 1 || differ != 0 || notPlayed != 5 || len(rep.Missing) != 2 || !strings.Contains(rep.Missing[1], "is its upload") || !strings.Contains(rep.Missing[1], "the build is not the same") {
		t.Errorf("a program missing, its upload building to another: %d the same, %d differ, %d not played; %q", same, differ, notPlayed, rep.Missing)
	}
	rep, err = reproduce.Final(ctx, verify.Dir(bundle), r, reproduce.Options{Backend: e.backend, Bots: []*submission.Bot{bots[0]}, Dir: t.TempDir()})
	if err != nil || len(rep.Missing) != 2 || !strings.Contains(rep.Missing[0], "no submission here is its program") {
		t.Errorf("a program and its upload missing: %q %v", rep.Missing, err)
	}
	// A game that cannot be played again (its published transcript gone
	// since the check) is said so, and counted with those not played,
	// never with the same.
	if err := os.Remove(filepath.Join(bundle, filepath.FromSlash(r.Records[0].Dir), "transcript.jsonl")); err != nil {
		t.Fatal(err)
	}
	rep, err = reproduce.Final(ctx, verify.Dir(bundle), r, reproduce.Options{Backend: e.backend, Bots: bots, Dir: t.TempDir()})
	same, _, notPlayed = rep.Same()
	if err == nil || same != 5 || notPlayed != 1 || !strings.HasPrefix(rep.Games[0].NotPlayed, "it could not be played again: ") {
		t.Errorf("a game that cannot be played again: %v, %d the same, %d not played, %+v", err, same, notPlayed, rep.Games[0])
	}
}

// publishedFinal plays a round robin final of four teams (the greedy and
// the random example twice each), perPair games a pair, two at once, on
// the local sandbox, publishes it and checks the bundle; it returns the
// event, the bundle, what the check found, the four submissions loaded and
// how long the final played.
func publishedFinal(t testing.TB, perPair int) (*throughputEvent, string, *verify.Result, []*submission.Bot, time.Duration) {
	t.Helper()
	e := newEventOf(t, "./examples/greedy", "./examples/random", "./examples/greedy", "./examples/random")
	ctx := context.Background()
	f := Final{Settings: e.settings, Backend: e.backend, Builder: e.builder, Intake: e.cfg.Intake(),
		Shape: event.Shape{GamesPerPair: perPair}, Seed: 9, Concurrency: 2, MaxAttempts: 1, ArenaVersion: "test", Signer: e.signer}
	plan, err := PrepareFinal(ctx, e.store, f)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := plan.Play(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	bundle := filepath.Join(t.TempDir(), "bundle")
	if _, err := e.store.PublishFinal(ctx, bundle); err != nil {
		t.Fatal(err)
	}
	_, key, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	r, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var bots []*submission.Bot
	for _, sub := range e.subs {
		b, err := LoadBot(ctx, e.store, sub.ID, e.settings.Game, e.builder, e.cfg.Intake(), nil)
		if err != nil {
			t.Fatal(err)
		}
		bots = append(bots, b)
	}
	return e, bundle, r, bots, took
}

// BenchmarkReplayFinal plays a published final of four teams (12 games,
// two a pair, and its playoff's) again from its submissions, two at once, on the local
// sandbox, and reports how long that takes beside the final's own time
// ("replay/final"; 1 is as long).
func BenchmarkReplayFinal(b *testing.B) {
	for b.Loop() {
		e, bundle, r, bots, final := publishedFinal(b, 2)
		start := time.Now()
		rep, err := reproduce.Final(context.Background(), verify.Dir(bundle), r, reproduce.Options{Backend: e.backend, Bots: bots, Dir: b.TempDir(), Concurrency: 2})
		if err != nil {
			b.Fatal(err)
		}
		if same, _, _ := rep.Same(); same != len(rep.Games) || same < 12 {
			b.Fatalf("%d of %d games played again the same", same, len(rep.Games))
		}
		again := time.Since(start)
		b.ReportMetric(again.Seconds()/final.Seconds(), "replay/final")
		b.ReportMetric(again.Seconds(), "replay-s")
		b.ReportMetric(final.Seconds(), "final-s")
	}
}
