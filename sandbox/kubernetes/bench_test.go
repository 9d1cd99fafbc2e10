package kubernetes_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

func report(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
}

// backends are the cluster's and, beside it, the Docker engine's.
func backends(b *testing.B) map[string]sandbox.Backend {
	cli, image := dockertest.Engine(b)
	return map[string]sandbox.Backend{"kubernetes": clustertest.Backend(b), "docker": docker.New(cli, image)}
}

// BenchmarkOpen is a box's start: a Pod created, scheduled, running, its
// agent attached, its program sent (a container created, checked, filled,
// started on Docker), and its close.
func BenchmarkOpen(b *testing.B) {
	prog, lim := sandboxtest.Hostile(b), sandboxtest.Limits()
	for name, be := range backends(b) {
		b.Run(name, func(b *testing.B) {
			var open, closing []time.Duration
			for b.Loop() {
				t := time.Now()
				bx, err := be.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim})
				if err != nil {
					b.Fatal(err)
				}
				open = append(open, time.Since(t))
				t = time.Now()
				if err := bx.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				closing = append(closing, time.Since(t))
			}
			report(b, open)
			slices.Sort(closing)
			b.ReportMetric(float64(closing[len(closing)/2].Microseconds())/1000, "close-p50-ms")
		})
	}
}

// BenchmarkTurn is a no-op bot's turn (a fresh process that writes
// move.json) through the attach stream of an open box; BenchmarkAsk a
// line's round trip to a bot that lives for the game.
func BenchmarkTurn(b *testing.B) {
	prog, lim := sandboxtest.Hostile(b), sandboxtest.Limits()
	turn := sandbox.Turn{Remove: []string{"move.json"}, Put: []sandbox.File{{Name: "state.json", Data: []byte("ok")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10}
	for name, be := range backends(b) {
		b.Run(name, func(b *testing.B) {
			bx, err := be.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim})
			if err != nil {
				b.Fatal(err)
			}
			defer bx.Close(context.Background())
			var d []time.Duration
			for b.Loop() {
				t := time.Now()
				r, err := bx.Run(context.Background(), turn)
				if err != nil || string(r.Answer.Data) != "ok" {
					b.Fatalf("%q %v", r.Answer.Data, err)
				}
				d = append(d, time.Since(t))
			}
			report(b, d)
		})
	}
}

func BenchmarkAsk(b *testing.B) {
	prog, lim := sandboxtest.Hostile(b), sandboxtest.Limits()
	for name, be := range backends(b) {
		b.Run(name, func(b *testing.B) {
			bx, err := be.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim})
			if err != nil {
				b.Fatal(err)
			}
			defer bx.Close(context.Background())
			s, err := bx.(sandbox.SessionBox).StartSession(context.Background(), []string{"session:echo"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Stop(context.Background())
			var d []time.Duration
			for b.Loop() {
				t := time.Now()
				ex, err := s.Ask(context.Background(), "ask ping", 5*time.Second)
				if err != nil || ex.Line != "re ping" {
					b.Fatalf("%+v %v", ex, err)
				}
				d = append(d, time.Since(t))
			}
			report(b, d)
		})
	}
}

// BenchmarkWarmHandOut is an Open served by a warm pool of one Pod: the
// program sent to a Pod already running, attached and greeted (beside it,
// BenchmarkOpen's docker row is a container's whole start).
func BenchmarkWarmHandOut(b *testing.B) {
	prog, lim := sandboxtest.Hostile(b), sandboxtest.Limits()
	be := clustertest.Backend(b)
	be.Warm = 1
	ctx := context.Background()
	bx, err := be.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
	if err != nil {
		b.Fatal(err)
	}
	bx.Close(ctx)
	var d []time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := k8s.WaitWarm(be, ctx, lim); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t := time.Now()
		bx, err := be.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
		if err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t))
		b.StopTimer()
		bx.Close(ctx)
		b.StartTimer()
	}
	report(b, d)
}
