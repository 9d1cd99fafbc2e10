package match_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/live"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// BenchmarkMatch plays whole matches of up to 60 play plies (plus the 18 setup
// turns) between two bots that answer at once and never capture, in
// Docker, containers included. It reports the wall time per match and the share
// of it spent outside the bots' own processes.
func BenchmarkMatch(b *testing.B) { benchMatch(b, nil) }

// BenchmarkMatchWatched is BenchmarkMatch with each match followed live, as
// the event server follows its games, by 0 or 1,000 watchers reading every
// step as it is recorded (the live pages' streams, without their HTTP): a
// bot's turns are no slower for being watched.
func BenchmarkMatchWatched(b *testing.B) {
	for _, watchers := range []int{0, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			hub := live.NewHub()
			benchMatch(b, func() match.Observer {
				g := hub.Start(live.Meta{Kind: "ladder"})
				for range watchers {
					go watch(g)
				}
				return g
			})
		})
	}
}

// watch reads g's steps as they come until it ends.
func watch(g *live.Game) {
	for from := 0; ; {
		_, steps, ended, _, wake := g.Read(from, live.Everyone)
		from += len(steps)
		if ended {
			return
		}
		<-wake
	}
}

func benchMatch(b *testing.B, observe func() match.Observer) {
	cli, image := dockertest.Engine(b)
	white, black := fixture(b, "shuffle"), fixture(b, "shuffle")
	var total, inBots time.Duration
	turns := 0
	seed := uint64(0)
	for b.Loop() {
		dir := b.TempDir()
		cfg := match.Config{
			Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "60"}, Seed: seed,
			White: white, Black: black, Backend: docker.New(cli, image), Limits: sandbox.DefaultLimits(), Dir: dir,
		}
		if observe != nil {
			cfg.Observer = observe()
		}
		t0 := time.Now()
		res, err := match.Run(context.Background(), cfg)
		total += time.Since(t0)
		if err != nil || res.Reason == transcript.ReasonAborted {
			b.Fatalf("%v %+v", err, res)
		}
		turns += res.Turns
		f, _ := os.Open(filepath.Join(dir, transcript.FileName))
		lines, _ := transcript.Read(f)
		f.Close()
		for _, l := range lines {
			var t transcript.Turn
			if l.Type == transcript.TypeTurn && l.Decode(&t) == nil {
				inBots += time.Duration(t.WallMs * float64(time.Millisecond))
			}
		}
		seed++
	}
	n := float64(b.N)
	b.ReportMetric(float64(total.Milliseconds())/n, "ms/match")
	b.ReportMetric(float64(turns)/n, "turns/match")
	b.ReportMetric(100*(1-float64(inBots)/float64(total)), "%outside-bots")
}

// BenchmarkTilesMatch plays whole 210-turn tiles matches between two Go bots
// that answer at once, in Docker. "cold" opens and removes both containers
// for every match; "pooled" reuses them through a sandbox.Pool, reset between
// matches, as a tournament does. It reports the wall time per match and the
// harness's time per turn beyond the bot's own (from the question to the
// answer, measured next to the bot): the lines' delivery, the agent round
// trip and the referee.
func BenchmarkTilesMatch(b *testing.B) {
	cli, image := dockertest.Engine(b)
	white, black := lineBot(b, "tiles.legal"), lineBot(b, "tiles.legal")
	for _, pooled := range []bool{false, true} {
		name := map[bool]string{false: "cold", true: "pooled"}[pooled]
		b.Run(name, func(b *testing.B) {
			var backend sandbox.Backend = docker.New(cli, image)
			if pooled {
				pool := sandbox.NewPool(backend)
				defer pool.Close(context.Background())
				backend = pool
				playTiles(b, backend, white, black, 99) // warms the pool
			}
			var total, overhead time.Duration
			turns := 0
			seed := uint64(0)
			for b.Loop() {
				t0 := time.Now()
				o, n := playTiles(b, backend, white, black, seed)
				total += time.Since(t0)
				overhead += o
				turns += n
				seed++
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/match")
			b.ReportMetric(float64(turns)/float64(b.N), "turns/match")
			b.ReportMetric(float64(overhead.Microseconds())/float64(turns), "µs-harness/turn")
		})
	}
}

// playTiles plays one tiles match and returns the harness's time beyond the
// bots' own over its turns, and the number of turns.
func playTiles(b *testing.B, backend sandbox.Backend, white, black *submission.Bot, seed uint64) (time.Duration, int) {
	dir := b.TempDir()
	res, err := match.Run(context.Background(), match.Config{
		Game: tiles.Game{}, Seed: seed, White: white, Black: black,
		Backend: backend, Limits: sandbox.DefaultLimits(), Dir: dir,
	})
	if err != nil || res.Reason != "points" {
		b.Fatalf("%v %+v", err, res)
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		b.Fatal(err)
	}
	var overhead time.Duration
	for _, l := range lines {
		var t transcript.Turn
		if l.Type == transcript.TypeTurn && l.Decode(&t) == nil {
			overhead += time.Duration((t.HarnessMs - t.WallMs) * float64(time.Millisecond))
		}
	}
	return overhead, res.Turns
}
