package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
)

// benchBackend is the sandbox a benchmark's games are played in: Docker
// (ARENA_BENCH_SANDBOX=docker, the default when an engine answers) or local.
func benchBackend(b *testing.B) (func() sandbox.Backend, string) {
	if os.Getenv("ARENA_BENCH_SANDBOX") == "local" {
		return func() sandbox.Backend { return &local.Backend{Dir: b.TempDir()} }, "local"
	}
	cli, image := dockertest.Engine(b)
	return func() sandbox.Backend { return docker.New(cli, image) }, "docker"
}

// benchTournament is a round robin of two instant Code Clash bots with
// games games, played here (workers 0) or over the queue by that many
// in-process workers, each with its own pooled backend, one game at a time.
// benchStats are what the workers measure of a run: the time spent in the
// games themselves (match runner and packing), and the gaps between the end
// of one game and the start of the next on the same worker (the result
// handed in, the game acked, the next fetched).
type benchStats struct {
	played, gaps time.Duration
	n            int // gaps
}

func benchTournament(b *testing.B, games, workers int, backend func() sandbox.Backend, sb string, checks Checks) (time.Duration, *benchStats) {
	var err error
	st := &benchStats{}
	bots := []*submission.Bot{fixtureBot(b, "legal"), fixtureBot(b, "slow-0")}
	o := options(b, b.TempDir(), bots, backend(), sb)
	o.Config.GamesPerPair = games
	o.Config.Rules = map[string]string{"maxPlies": "40"}
	o.Concurrency = 1
	o.MinFree = 0
	// Signed as an event signs its games, here and on the workers.
	if _, o.Signer, err = ed25519.GenerateKey(nil); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); wg.Wait() }()
	if workers > 0 {
		names := make([]string, workers)
		for i := range names {
			names[i] = fmt.Sprintf("w%d", i+1)
		}
		c := distribtest.Start(b, "bench", 30*time.Second, names...)
		o.Remote = Sole(c.Coordinator(b))
		o.Remote.Checks = checks
		o.WorkerKey = func(w string) (string, error) { return distrib.SigningKeyOf(c.Workers, w) }
		for _, name := range names {
			q, _ := c.Worker(b, name)
			key, err := c.Creds[name].SigningKey()
			if err != nil {
				b.Fatal(err)
			}
			pool := sandbox.NewPool(backend())
			tw := &Worker{Queue: q, Backend: pool, Scratch: b.TempDir(), Signer: key}
			var mu sync.Mutex // one worker plays one game at a time; the stats are shared
			var last time.Time
			play := func(ctx context.Context, j distrib.Job) ([]byte, error) {
				t := time.Now()
				mu.Lock()
				if !last.IsZero() {
					st.gaps += t.Sub(last)
					st.n++
				}
				mu.Unlock()
				defer func() { mu.Lock(); st.played += time.Since(t); last = time.Now(); mu.Unlock() }()
				return tw.Play(ctx, j)
			}
			w := &distrib.Worker{Queue: q, Slots: 1, Play: play, Machine: json.RawMessage(`{}`)}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer pool.Close(context.Background())
				w.Run(ctx)
			}()
		}
	}
	start := time.Now()
	sum, err := Run(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Done != games {
		b.Fatalf("%d of %d games played", sum.Done, games)
	}
	wall := time.Since(start)
	cancel()
	wg.Wait()
	return wall, st
}

// BenchmarkQueueOverhead plays games through the queue with one worker,
// one at a time. gap-ms/game is what the queue costs each game in steady
// state: from the end of one game on the worker to the start of the next
// (the archive uploaded, the result published, the game acked, the next
// fetched; the coordinator's download, replay and signature check overlap
// the next game). overhead-% is that cost over the game's own time.
// fixed-ms is the rest of the difference to the games' time, paid once per
// run (bots fetched, the first game queued, the last result judged).
// here-ms/game is the same games played without the queue.
func BenchmarkQueueOverhead(b *testing.B) {
	backend, sb := benchBackend(b)
	const games = 20
	var here, queued, played, gaps time.Duration
	n := 0
	for range b.N {
		w, _ := benchTournament(b, games, 0, backend, sb, Checks{})
		here += w
		w, st := benchTournament(b, games, 1, backend, sb, Checks{})
		queued, played, gaps, n = queued+w, played+st.played, gaps+st.gaps, n+st.n
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	perGame := func(d time.Duration) float64 { return ms(d) / float64(games*b.N) }
	gap := ms(gaps) / float64(max(n, 1))
	b.ReportMetric(perGame(here), "here-ms/game")
	b.ReportMetric(perGame(played), "game-ms/game")
	b.ReportMetric(gap, "gap-ms/game")
	b.ReportMetric(100*gap/perGame(played), "overhead-%")
	b.ReportMetric((ms(queued)-ms(played)-ms(gaps))/float64(b.N), "fixed-ms")
}

// BenchmarkWorkers is the throughput of 1, 2 and 3 worker processes' worth
// of workers (each its own pool, one game at a time) on this machine.
func BenchmarkWorkers(b *testing.B) {
	backend, sb := benchBackend(b)
	const games = 24
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			var wall time.Duration
			for range b.N {
				w, _ := benchTournament(b, games, n, backend, sb, Checks{})
				wall += w
			}
			b.ReportMetric(float64(games*b.N)/wall.Minutes(), "games/min")
		})
	}
}

// BenchmarkChecks is what checking workers' results costs a run: one
// worker plays every game while the coordinator plays again its first
// FirstChecked and then a fraction of the rest (Checks), on the same
// machine here (a real coordinator's checks use its own cores). games/min
// is the run's throughput, check-% the run's time beyond the same run
// with no check at all.
func BenchmarkChecks(b *testing.B) {
	backend, sb := benchBackend(b)
	const games = 40
	var none time.Duration
	for _, c := range []struct {
		name   string
		checks Checks
	}{
		{"none", Checks{Pick: func(string, int) bool { return false }}},
		{"fraction=0", Checks{}},
		{"fraction=0.1", Checks{Fraction: 0.1}},
		{"fraction=1", Checks{Fraction: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var wall time.Duration
			for range b.N {
				w, _ := benchTournament(b, games, 1, backend, sb, c.checks)
				wall += w
			}
			if c.name == "none" {
				none = wall / time.Duration(b.N)
			}
			b.ReportMetric(float64(games*b.N)/wall.Minutes(), "games/min")
			if none > 0 {
				b.ReportMetric(100*(float64(wall/time.Duration(b.N))/float64(none)-1), "check-%")
			}
		})
	}
}

// BenchmarkJudgeResult is the coordinator's work for each result a worker
// hands in: the archive unpacked, replayed (every verdict recomputed, the
// hash chain and the signature checked), the signer matched to the worker's
// key. It bounds how many games one coordinator can take per second.
func BenchmarkJudgeResult(b *testing.B) {
	backend, sb := benchBackend(b)
	c := distribtest.Start(b, "judge", time.Minute, "w1")
	key, err := c.Creds["w1"].SigningKey()
	if err != nil {
		b.Fatal(err)
	}
	bots := []*submission.Bot{fixtureBot(b, "legal"), fixtureBot(b, "slow-0")}
	o := options(b, b.TempDir(), bots, backend(), sb)
	o.Config.Rules = map[string]string{"maxPlies": "40"}
	o.WorkerKey = func(w string) (string, error) { return distrib.SigningKeyOf(c.Workers, w) }
	tw := &Worker{Backend: backend(), Scratch: b.TempDir(), Signer: key}
	want := o.MatchConfig(tournament.Record{Game: tournament.Game{ID: 1, White: 0, Black: 1, Seed: 3}}, "", "")
	spec, err := json.Marshal(specOf(want, "w", "b"))
	if err != nil {
		b.Fatal(err)
	}
	for name, bot := range map[string]*submission.Bot{"w": bots[0], "b": bots[1]} {
		if tw.bots == nil {
			tw.bots = map[string]*submission.Bot{}
		}
		tw.bots[name] = bot
	}
	archive, err := tw.Play(context.Background(), distrib.Job{Game: 1, Attempt: 1, Spec: spec})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		res, refused, _, err := o.received(fmt.Sprintf("%s/%d", dir, i), want, Facts{Sandbox: sb}, distrib.Result{Game: 1, Attempt: 1, Worker: "w1", Object: "x"}, bytes.NewReader(archive))
		if err != nil || refused != "" || res.Plies == 0 {
			b.Fatalf("%v %s %+v", err, refused, res)
		}
	}
	b.ReportMetric(float64(len(archive)), "archive-bytes")
}
