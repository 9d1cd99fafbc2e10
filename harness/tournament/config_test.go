package tournament

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// A configuration that cannot be played is refused before its first game,
// saying why; one that can is not.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	good := Config{Format: RoundRobin, GamesPerPair: 2, Scoring: DefaultScoring(), TieBreaks: DefaultTieBreaks(),
		Bots: []BotEntry{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	if err := good.Validate(); err != nil {
		t.Fatalf("a good configuration: %v", err)
	}
	gauntlet := good
	gauntlet.Format, gauntlet.Challenger = Gauntlet, "b"
	if err := gauntlet.Validate(); err != nil {
		t.Fatalf("a gauntlet: %v", err)
	}
	swiss := good
	swiss.Format, swiss.Rounds = Swiss, 3
	if err := swiss.Validate(); err != nil {
		t.Fatalf("a Swiss tournament: %v", err)
	}
	stages := good
	stages.Format, stages.Advance, stages.Then = Stages, 2, DoubleElimination
	if err := stages.Validate(); err != nil {
		t.Fatalf("a stages tournament: %v", err)
	}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Bots = c.Bots[:1] }, "at least 2 bots, got 1"},
		{func(c *Config) { c.Bots[1].Name = "a" }, `two bots are named "a"`},
		{func(c *Config) { c.Format = "ladder" }, `want round-robin, gauntlet, swiss, knockout, double-elimination, stages or rating, got "ladder"`},
		{func(c *Config) { c.Format, c.Challenger = Knockout, "a" }, "a challenger is for the gauntlet format, not knockout"},
		{func(c *Config) { c.Rounds = 3 }, "rounds: for the swiss and stages formats only"},
		{func(c *Config) { c.Format, c.Rounds = Swiss, -1 }, "rounds: for the swiss and stages formats only, 1 or more"},
		{func(c *Config) { c.Format, c.Advance, c.Then = Stages, 1, RoundRobin }, "advance: the stages format's qualifier sends 2 to 3 bots"},
		{func(c *Config) { c.Format, c.Advance, c.Then = Stages, 4, RoundRobin }, "got 4"},
		{func(c *Config) { c.Format, c.Advance, c.Then = Stages, 2, Swiss }, `then: the second stage is round-robin or double-elimination, got "swiss"`},
		{func(c *Config) { c.Advance = 2 }, "advance and then: for the stages format only"},
		{func(c *Config) { c.Budget = 10 }, "budget: for the rating format only"},
		{func(c *Config) { c.Format, c.Budget = Rating, -1 }, "budget: for the rating format only, 1 or more games"},
		{func(c *Config) { c.Format, c.Challenger = Swiss, "a" }, "a challenger is for the gauntlet format, not swiss"},
		{func(c *Config) { c.Format = Gauntlet }, "needs a challenger"},
		{func(c *Config) { c.Format, c.Challenger = Gauntlet, "z" }, `the challenger "z" is not one of the bots`},
		{func(c *Config) { c.Challenger = "a" }, "a challenger is for the gauntlet format"},
		{func(c *Config) { c.GamesPerPair = 0 }, "games per pair: want 1 or more"},
		{func(c *Config) { c.Scoring.Draw = math.NaN() }, "points: want finite numbers"},
		{func(c *Config) { c.TieBreaks = []string{"coin"} }, `unknown tie-break "coin"`},
	} {
		cfg := good
		cfg.Bots = append([]BotEntry(nil), good.Bots...)
		c.edit(&cfg)
		err := cfg.Validate()
		var bad *ConfigError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want a ConfigError saying %q", err, c.want)
		}
	}
}

func TestParseScoring(t *testing.T) {
	t.Parallel()
	if sc, err := ParseScoring("2, 1, 0.5"); err != nil || sc != (Scoring{Win: 2, Draw: 1, Loss: 0.5}) {
		t.Fatalf("%+v %v", sc, err)
	}
	if _, err := ParseScoring("3-1-0"); err == nil || !strings.Contains(err.Error(), "WIN,DRAW,LOSS") {
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
	st, err := OpenStore(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Format: RoundRobin, GamesPerPair: 1, Seed: 42, Scoring: DefaultScoring(), Bots: []BotEntry{{Name: "a"}, {Name: "b"}}}
	games, err := Schedule(RoundRobin, 2, -1, 1, 42, 0)
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
