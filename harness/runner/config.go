package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/sandbox"
)

// NewConfig describes a tournament of bots played under resolved match
// settings on a backend; the schedule's fields (format, games per pair,
// seed, scoring, tie-breaks, evidence) are the caller's to set.
func NewConfig(bots []*submission.Bot, s settings.Resolved, backend sandbox.Backend, image string) tournament.Config {
	cfg := tournament.Config{Format: tournament.RoundRobin, GamesPerPair: 2, Game: s.Game.Name(), Rules: s.Rules, Limits: s.Limits,
		OnFault: string(s.OnFault), Sandbox: backend.Name(), Scoring: tournament.DefaultScoring(), TieBreaks: tournament.DefaultTieBreaks()}
	if backend.Name() == "docker" {
		cfg.Image = image
	}
	cfg.Bots = Entries(bots)
	return cfg
}

// Entries are the bots as a configuration lists them: ready (built) bots,
// so that a changed build is another tournament.
func Entries(bots []*submission.Bot) []tournament.BotEntry {
	var out []tournament.BotEntry
	for _, b := range bots {
		out = append(out, tournament.BotEntry{Name: b.Name, SHA256: b.SHA256, Source: b.Source})
	}
	return out
}

// SeedFor is the seed of the tournament in dir: the one given, else the one
// it was started with (a resume), else a new random one.
func SeedFor(ctx context.Context, dir string, given *uint64) (uint64, error) {
	if given != nil {
		return *given, nil
	}
	if _, err := os.Stat(filepath.Join(dir, tournament.DBFile)); errors.Is(err, fs.ErrNotExist) {
		return match.RandomSeed(), nil
	}
	prev, err := tournament.Load(ctx, dir)
	if err != nil {
		return 0, fmt.Errorf("resume the tournament in %s: %w", dir, err)
	}
	return prev.Config.Seed, nil
}
