package match_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// BenchmarkMatch plays whole matches of up to 60 play plies (plus the 18 setup
// turns) between two bots that answer at once and never capture, in
// Docker, containers included. It reports the wall time per match and the share
// of it spent outside the bots' own processes.
func BenchmarkMatch(b *testing.B) {
	cli, image := dockertest.Engine(b)
	white, black := fixture(b, "shuffle"), fixture(b, "shuffle")
	var total, inBots time.Duration
	turns := 0
	seed := uint64(0)
	for b.Loop() {
		dir := b.TempDir()
		t0 := time.Now()
		res, err := match.Run(context.Background(), match.Config{
			Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "60"}, Seed: seed,
			White: white, Black: black, Backend: docker.New(cli, image), Limits: sandbox.DefaultLimits(), Dir: dir,
		})
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
