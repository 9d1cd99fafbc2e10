package runner

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/tournament"
)

// A configuration that cannot be played is refused before its first game,
// saying why; one that can is not.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	good := tournament.Config{Format: tournament.RoundRobin, GamesPerPair: 2, Scoring: tournament.DefaultScoring(), TieBreaks: tournament.DefaultTieBreaks(),
		Bots: []tournament.BotEntry{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	if err := good.Validate(); err != nil {
		t.Fatalf("a good configuration: %v", err)
	}
	gauntlet := good
	gauntlet.Format, gauntlet.Challenger = tournament.Gauntlet, "b"
	if err := gauntlet.Validate(); err != nil {
		t.Fatalf("a gauntlet: %v", err)
	}
	swiss := good
	swiss.Format, swiss.Rounds = tournament.Swiss, 3
	if err := swiss.Validate(); err != nil {
		t.Fatalf("a Swiss tournament: %v", err)
	}
	stages := good
	stages.Format, stages.Advance, stages.Then = tournament.Stages, 2, tournament.DoubleElimination
	if err := stages.Validate(); err != nil {
		t.Fatalf("a stages tournament: %v", err)
	}
	for _, c := range []struct {
		edit func(*tournament.Config)
		want string
	}{
		{func(c *tournament.Config) { c.Bots = c.Bots[:1] }, "at least 2 bots, got 1"},
		{func(c *tournament.Config) { c.Bots[1].Name = "a" }, `two bots are named "a"`},
		{func(c *tournament.Config) { c.Format = "ladder" }, `want round-robin, gauntlet, swiss, knockout, double-elimination, stages or rating, got "ladder"`},
		{func(c *tournament.Config) { c.Format, c.Challenger = tournament.Knockout, "a" }, "a challenger is for the gauntlet format, not knockout"},
		{func(c *tournament.Config) { c.Rounds = 3 }, "rounds: for the swiss and stages formats only"},
		{func(c *tournament.Config) { c.Format, c.Rounds = tournament.Swiss, -1 }, "rounds: for the swiss and stages formats only, 1 or more"},
		{func(c *tournament.Config) { c.Format, c.Advance, c.Then = tournament.Stages, 1, tournament.RoundRobin }, "advance: the stages format's qualifier sends 2 to 3 bots"},
		{func(c *tournament.Config) { c.Format, c.Advance, c.Then = tournament.Stages, 4, tournament.RoundRobin }, "got 4"},
		{func(c *tournament.Config) { c.Format, c.Advance, c.Then = tournament.Stages, 2, tournament.Swiss }, `then: the second stage is round-robin or double-elimination, got "swiss"`},
		{func(c *tournament.Config) { c.Advance = 2 }, "advance and then: for the stages format only"},
		{func(c *tournament.Config) { c.Budget = 10 }, "budget: for the rating format only"},
		{func(c *tournament.Config) { c.Format, c.Budget = tournament.Rating, -1 }, "budget: for the rating format only, 1 or more games"},
		{func(c *tournament.Config) { c.Format, c.Challenger = tournament.Swiss, "a" }, "a challenger is for the gauntlet format, not swiss"},
		{func(c *tournament.Config) { c.Format = tournament.Gauntlet }, "needs a challenger"},
		{func(c *tournament.Config) { c.Format, c.Challenger = tournament.Gauntlet, "z" }, `the challenger "z" is not one of the bots`},
		{func(c *tournament.Config) { c.Challenger = "a" }, "a challenger is for the gauntlet format"},
		{func(c *tournament.Config) { c.GamesPerPair = 0 }, "games per pair: want 1 or more"},
		{func(c *tournament.Config) { c.Scoring.Draw = math.NaN() }, "points: want finite numbers"},
		{func(c *tournament.Config) { c.TieBreaks = []string{"coin"} }, `unknown tie-break "coin"`},
	} {
		cfg := good
		cfg.Bots = append([]tournament.BotEntry(nil), good.Bots...)
		c.edit(&cfg)
		err := cfg.Validate()
		var bad *tournament.ConfigError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a ConfigError saying %q", err, c.want)
		}
	}
}

func TestParseScoring(t *testing.T) {
	t.Parallel()
	if sc, err := tournament.ParseScoring("2, 1, 0.5"); err != nil || sc != (tournament.Scoring{Win: 2, Draw: 1, Loss: 0.5}) {
		t.Fatalf("%+v %v", sc, err)
	}
	if _, err := tournament.ParseScoring("3-1-0"); err == nil || !strings.Contains(err.Error(), "WIN,DRAW,LOSS") {
		t.Fatalf("a bad scoring: %v", err)
	}
}

// A new tournament takes the seed given or a random one; a resumed one
// keeps the seed it was started with unless another is given.
func TestSeedForAResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seven := uint64(7)
	if s, err := SeedFor(context.Background(), dir, &seven); err != nil || s != 7 {
		t.Fatalf("given: %d %v", s, err)
	}
	st, err := tournament.OpenStore(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := tournament.Config{Format: tournament.RoundRobin, GamesPerPair: 1, Seed: 42, Scoring: tournament.DefaultScoring(), Bots: []tournament.BotEntry{{Name: "a"}, {Name: "b"}}}
	games, err := tournament.Schedule(tournament.RoundRobin, 2, -1, 1, 42, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Init(context.Background(), cfg, games); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := SeedFor(context.Background(), dir, nil); err != nil || s != 42 {
		t.Fatalf("resumed: %d %v, want the stored 42", s, err)
	}
	if _, err := SeedFor(context.Background(), filepath.Join(dir, "new"), nil); err != nil {
		t.Fatalf("a new directory: %v", err)
	}
}

// A tournament's workers are reached one way, with settings that go
// together.
func TestRemoteCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    Remote
		want string
	}{
		{Remote{Listen: "127.0.0.1:0", URL: "nats://x"}, "choose one"},
		{Remote{Listen: "127.0.0.1:0", Cert: "c.pem"}, "go together"},
		{Remote{Listen: "localhost"}, "want HOST:PORT"},
		{Remote{Listen: "127.0.0.1:99999"}, `bad port "99999"`},
	} {
		if err := c.r.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
	if err := (Remote{Listen: "127.0.0.1:0"}).Check(); err != nil {
		t.Fatal(err)
	}
}
