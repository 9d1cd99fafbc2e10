package services

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/verify"
)

// BenchmarkVerify300TeamSwissFinal plays a Swiss final of 300 teams (the
// greedy and the random example 150 times each, 11 rounds, two games a
// pair: 3,300 games and the playoff's), publishes it and checks the
// bundle as arena verify does, and reports the check's time, how far its
// heap grew above where it started (sampled every 5 ms) and the bundle's
// size. Playing the final takes minutes: it is
// not one of the tests.
func BenchmarkVerify300TeamSwissFinal(b *testing.B) {
	var pkgs []string
	for range 150 {
		pkgs = append(pkgs, "./examples/greedy", "./examples/random")
	}
	e := newEventOf(b, pkgs...)
	ctx := context.Background()
	f := Final{Settings: e.settings, Backend: e.backend, Builder: e.builder, Intake: e.cfg.Intake(),
		Shape: event.Shape{Format: tournament.Swiss, GamesPerPair: 2}, Seed: 11, Concurrency: 2, MaxAttempts: 1, ArenaVersion: "bench", Signer: e.signer}
	plan, err := PrepareFinal(ctx, e.store, f)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	sum, err := plan.Play(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("the final: %d games in %v", sum.Done, time.Since(start))
	bundle := filepath.Join(b.TempDir(), "bundle")
	size, err := e.store.PublishFinal(ctx, bundle)
	if err != nil {
		b.Fatal(err)
	}
	_, key, err := e.store.LogKeys()
	if err != nil {
		b.Fatal(err)
	}
	var bytes int64
	if err := filepath.Walk(bundle, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			bytes += fi.Size()
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := before.HeapAlloc
		done, watched := make(chan struct{}), make(chan struct{})
		go func() { // the heap's high mark while the check runs
			defer close(watched)
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					peak = max(peak, m.HeapAlloc)
				}
			}
		}()
		start := time.Now()
		r, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key})
		took := time.Since(start)
		close(done)
		<-watched
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(took.Seconds(), "verify-s")
		b.ReportMetric(float64(peak-before.HeapAlloc)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(bytes)/(1<<20), "bundle-MiB")
		b.ReportMetric(float64(r.Games), "games")
		b.ReportMetric(float64(size), "entries")
	}
}
