package tournament

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/arenabots/arena/internal/words"
)

// ConfigError is a configuration that cannot be played.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return e.msg }

func ConfigErrorf(format string, a ...any) error { return &ConfigError{fmt.Sprintf(format, a...)} }

// Validate checks a configuration before its first game: at least two bots
// with distinct names, a known format (a gauntlet with a challenger among
// the bots), games per pair, scoring and tie-breaks that make sense.
func (c Config) Validate() error {
	if len(c.Bots) < 2 {
		return ConfigErrorf("a tournament needs at least 2 bots, got %d", len(c.Bots))
	}
	seen := map[string]bool{}
	for _, b := range c.Bots {
		if seen[b.Name] {
			return ConfigErrorf("two bots are named %q; rename one", b.Name)
		}
		seen[b.Name] = true
	}
	switch c.Format {
	case Gauntlet:
		if c.Challenger == "" {
			return ConfigErrorf("the %s format needs a challenger", Gauntlet)
		}
		if !seen[c.Challenger] {
			return ConfigErrorf("the challenger %q is not one of the bots", c.Challenger)
		}
	case RoundRobin, Swiss, Knockout, DoubleElimination, Stages, Rating:
		if c.Challenger != "" {
			return ConfigErrorf("a challenger is for the %s format, not %s", Gauntlet, c.Format)
		}
	default:
		return ConfigErrorf("format: want %s, got %q", words.Or(Formats()), c.Format)
	}
	if c.Rounds < 0 || c.Rounds > 0 && c.Format != Swiss && c.Format != Stages {
		return ConfigErrorf("rounds: for the %s and %s formats only, 1 or more (0: the default), got %d", Swiss, Stages, c.Rounds)
	}
	if c.Format == Stages {
		if c.Advance < 2 || c.Advance > len(c.Bots) {
			return ConfigErrorf("advance: the %s format's qualifier sends 2 to %d bots (all of them) to its second stage, got %d", Stages, len(c.Bots), c.Advance)
		}
		if !slices.Contains(SecondStages(), c.Then) {
			return ConfigErrorf("then: the second stage is %s, got %q", words.Or(SecondStages()), c.Then)
		}
	} else if c.Advance != 0 || c.Then != "" {
		return ConfigErrorf("advance and then: for the %s format only", Stages)
	}
	if c.Budget < 0 || c.Budget > 0 && c.Format != Rating {
		return ConfigErrorf("budget: for the %s format only, 1 or more games (0: the default), got %d", Rating, c.Budget)
	}
	if c.GamesPerPair < 1 {
		return ConfigErrorf("games per pair: want 1 or more, got %d", c.GamesPerPair)
	}
	for _, p := range []float64{c.Scoring.Win, c.Scoring.Draw, c.Scoring.Loss} {
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return ConfigErrorf("points: want finite numbers, got %g,%g,%g", c.Scoring.Win, c.Scoring.Draw, c.Scoring.Loss)
		}
	}
	for _, p := range c.Playoff {
		if p < 0 || p >= len(c.Bots) || p == 0 && len(c.Playoff) > 1 {
			return ConfigErrorf("playoff: places 1 to %d (a place is decided between its bot and the next), or none; got %v", len(c.Bots)-1, c.Playoff)
		}
	}
	if err := CheckTieBreaks(c.TieBreaks); err != nil {
		return &ConfigError{"tie-breaks: " + err.Error()}
	}
	return nil
}

// SwissRounds is the rounds a Swiss tournament (or a stages tournament's
// qualifier) of this configuration plays.
func (c Config) SwissRounds() int {
	if c.Rounds > 0 {
		return c.Rounds
	}
	return SwissRounds(len(c.Bots))
}

// ParseScoring reads points as WIN,DRAW,LOSS (such as 3,1,0).
func ParseScoring(s string) (Scoring, error) {
	var sc Scoring
	if _, err := fmt.Sscanf(strings.ReplaceAll(s, " ", ""), "%g,%g,%g", &sc.Win, &sc.Draw, &sc.Loss); err != nil {
		return sc, fmt.Errorf("want WIN,DRAW,LOSS such as 3,1,0, got %q", s)
	}
	return sc, nil
}
