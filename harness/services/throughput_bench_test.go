package services

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/sandbox/local"
)

// Sizes of the throughput benchmark, chosen so that each side runs 20-60 s
// on a 2-core machine.
const (
	// ladderPairs is how many ladder pairs (2 games each) the ladder plays.
	ladderPairs = 60
	// benchRoundRobins is how many round robins of the 4 bots (12 games
	// each: every pair twice, sides swapped) the tournament plays.
	benchRoundRobins = 10
)

// lockedBuffer is a log the player writes while the benchmark reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// cpuTime is the CPU time this process and its finished children (the
// bots' processes) have used.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var sum time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		sum += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return sum
}

// reportCPU reports the CPU time a game took (harness and bots) and how
// busy the games kept the machine's cores (100% is every core all the
// time).
func reportCPU(b *testing.B, wall, cpu time.Duration, games int) {
	b.ReportMetric(float64(cpu.Milliseconds())/float64(games), "cpu-ms/game")
	b.ReportMetric(100*cpu.Seconds()/(wall.Seconds()*float64(runtime.NumCPU())), "busy-%")
}

// throughputEvent is an event of 4 teams, each with a passed submission of
// a fast Code Clash example bot (greedy or random, two teams each), and
// what the player plays them with on the local sandbox.
type throughputEvent struct {
	store    *event.Store
	cfg      event.Config
	subs     []event.Submission
	settings settings.Resolved
	backend  *local.Backend
	builder  *build.Builder
	signer   ed25519.PrivateKey
	// evidence is what its ladder games keep (zero: the match's default).
	evidence transcript.Evidence
}

func newThroughputEvent(b *testing.B) *throughputEvent {
	b.Helper()
	return newEventOf(b, "./examples/greedy", "./examples/random", "./examples/greedy", "./examples/random")
}

// newEventOf is an event of one team per bot package, each with a passed
// submission.
func newEventOf(b testing.TB, pkgs ...string) *throughputEvent {
	b.Helper()
	dir := b.TempDir()
	cfg, err := event.ParseConfig(filepath.Join(dir, event.ConfigFile), []byte("game = \"codeclash\"\n"))
	if err != nil {
		b.Fatal(err)
	}
	st, err := event.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	e := &throughputEvent{store: st, cfg: cfg}
	ctx := context.Background()
	for i, pkg := range pkgs {
		name := fmt.Sprintf("Team %c", 'A'+i)
		if i >= 26 {
			name = fmt.Sprintf("Team %d", i+1)
		}
		team, err := st.AddTeam(ctx, name, "", "")
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(gobuild.MustStatic(b, pkg))
		if err != nil {
			b.Fatal(err)
		}
		sub, err := st.AddSubmission(ctx, cfg, team.ID, "bot", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if err := st.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
			b.Fatal(err)
		}
		e.subs = append(e.subs, sub)
	}
	if e.settings, err = cfg.Settings().Resolve(); err != nil {
		b.Fatal(err)
	}
	e.backend = &local.Backend{Dir: b.TempDir()}
	e.builder = &build.Builder{Backend: e.backend, Langs: langs.Default(), Limits: e.settings.Limits, Timeout: time.Minute}
	if _, e.signer, err = ed25519.GenerateKey(nil); err != nil {
		b.Fatal(err)
	}
	return e
}

// ladderGames counts the ladder games the store holds (each game is listed
// under both of its submissions).
func (e *throughputEvent) ladderGames(b *testing.B) int {
	b.Helper()
	n := 0
	for _, sub := range e.subs {
		games, err := e.store.GamesOfSubmission(context.Background(), sub.ID)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range games {
			if g.Kind != event.LadderGame {
				b.Fatalf("a %s game on the ladder: %+v", g.Kind, g)
			}
			n++
		}
	}
	return n / 2
}

// playLadder runs the player with the ladder on until it has played pairs
// ladder pairs, and returns how long that took, the CPU time it used and
// the games it played.
func (e *throughputEvent) playLadder(b *testing.B, pairs int) (wall, cpu time.Duration, games int) {
	b.Helper()
	var log lockedBuffer
	finished := make(chan struct{}, 2*pairs+8)
	p := &Player{Store: e.store, Settings: e.settings, Backend: e.backend, Builder: e.builder, Intake: e.cfg.Intake(),
		ArenaVersion: "bench", Signer: e.signer, Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelError})),
		Ladder: true, Open: e.cfg.Open, Seed: 7, Slots: 2, LadderEvidence: e.evidence,
		// Told each team of a pair once the pair is rated.
		Changed: func(int64) {
			select {
			case finished <- struct{}{}:
			default:
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := e.ladderGames(b)
	done := make(chan error, 1)
	start, cpu0 := time.Now(), cpuTime(b)
	go func() { done <- p.Run(ctx) }()
	for wall == 0 {
		select {
		case err := <-done:
			b.Fatalf("the player stopped after %d ladder games: %v %s", games, err, log.String())
		case <-finished:
			if games = e.ladderGames(b) - before; games >= 2*pairs {
				wall, cpu = time.Since(start), cpuTime(b)-cpu0
			}
		case <-time.After(5 * time.Minute):
			b.Fatalf("%d ladder games after 5 minutes, want %d", games, 2*pairs)
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if s := log.String(); s != "" {
		b.Fatalf("the player logged errors:\n%s", s)
	}
	return wall, cpu, games
}

// playTournament plays rounds round robins of the 4 submissions through
// runner.Run, as arena tournament does: the bots loaded as the player
// loads them, each pair twice with sides swapped, two games at a time. It
// returns how long that took, the CPU time it used and the games played.
func (e *throughputEvent) playTournament(b *testing.B, rounds int) (wall, cpu time.Duration, games int) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir() // a tournament here is new: none resumes
	start, cpu0 := time.Now(), cpuTime(b)
	for r := range rounds {
		var bots []*submission.Bot
		for _, sub := range e.subs {
			bot, err := LoadBot(ctx, e.store, sub.ID, e.settings.Game, e.builder, e.cfg.Intake(), nil)
			if err != nil {
				b.Fatal(err)
			}
			bots = append(bots, bot)
		}
		cfg := runner.NewConfig(bots, e.settings, e.backend, "")
		cfg.GamesPerPair, cfg.Seed = 2, uint64(r+1)
		sum, err := runner.Run(ctx, runner.Options{Dir: filepath.Join(dir, fmt.Sprint(r)),
			Config: cfg, Bots: bots, Game: e.settings.Game, Backend: e.backend, Concurrency: 2, MaxAttempts: 3,
			ArenaVersion: "bench", Signer: e.signer})
		if err != nil {
			b.Fatal(err)
		}
		if want := len(bots) * (len(bots) - 1); sum.Done != want || sum.Total != want {
			b.Fatalf("round robin %d: %d of %d games played, want %d", r, sum.Done, sum.Total, want)
		}
		games += sum.Done
	}
	return time.Since(start), cpuTime(b) - cpu0, games
}

// BenchmarkLadderThroughput compares the games per minute of the rated
// ladder with those of arena tournament's runner, for the same 4 bots on
// the local sandbox. ladder runs Player.Run with the ladder on until it
// has played ladderPairs pairs (2 games each, as the store counts them);
// tournament plays benchRoundRobins round robins of the 4 bots, loaded as
// the player loads them (GamesPerPair 2, Concurrency 2: as many games at
// once as the player's 2 slots). Each also reports its CPU time per game and busy-%: on a
// host whose speed drifts, the ratio of the two busy-% is the steadier
// measure of the time the ladder leaves idle. The target is the ladder
// within 10% of the tournament's games/min.
func BenchmarkLadderThroughput(b *testing.B) {
	e := newThroughputEvent(b)
	for _, c := range []struct {
		name string
		play func(b *testing.B) (wall, cpu time.Duration, games int)
	}{
		{"ladder", func(b *testing.B) (time.Duration, time.Duration, int) { return e.playLadder(b, ladderPairs) }},
		{"tournament", func(b *testing.B) (time.Duration, time.Duration, int) { return e.playTournament(b, benchRoundRobins) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var wall, cpu time.Duration
			games := 0
			for b.Loop() {
				w, cp, n := c.play(b)
				wall, cpu, games = wall+w, cpu+cp, games+n
			}
			b.ReportMetric(float64(games)/wall.Minutes(), "games/min")
			reportCPU(b, wall, cpu, games)
		})
	}
}

// diskUse is the room the files under roots take on disk (their blocks), a
// file of many links counted once.
func diskUse(b *testing.B, roots ...string) int64 {
	b.Helper()
	seen := map[[2]uint64]bool{}
	var sum int64
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			st := fi.Sys().(*syscall.Stat_t)
			id := [2]uint64{uint64(st.Dev), st.Ino}
			if !seen[id] {
				seen[id] = true
				sum += st.Blocks * 512
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
	}
	return sum
}

// BenchmarkLadderEvidenceDisk plays the ladder of 8 teams (the greedy and
// the random example 4 times each: each keeps a data file it rewrites every
// turn) until every pair has met once a side (28 pairs: the ladder pairs
// two deterministic bots no more), under each data-file retention, and
// reports the disk a ladder game takes: its transcript and result, its data
// files (in the event's shared evidence/), and its share of its pair's
// tournament database. "final" keeps each side's last version (the turns
// before it cannot be run again); "changed", the default, keeps every
// version: every turn can be.
func BenchmarkLadderEvidenceDisk(b *testing.B) {
	for _, keep := range []string{"final", "changed"} {
		b.Run(keep, func(b *testing.B) {
			for b.Loop() {
				var pkgs []string
				for range 4 {
					pkgs = append(pkgs, "./examples/greedy", "./examples/random")
				}
				e := newEventOf(b, pkgs...)
				e.evidence = e.cfg.LadderEvidence()
				e.evidence.Keep = keep
				_, _, games := e.playLadder(b, 8*7/2)
				dir := e.store.Dir
				all := diskUse(b, filepath.Join(dir, event.LadderDir), filepath.Join(dir, event.EvidenceDir))
				blobs := diskUse(b, filepath.Join(dir, event.EvidenceDir))
				b.ReportMetric(float64(all)/float64(games)/1024, "KiB/game")
				b.ReportMetric(float64(blobs)/float64(games)/1024, "evidence-KiB/game")
			}
		})
	}
}
