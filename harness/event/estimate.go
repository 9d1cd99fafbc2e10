package event

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/words"
)

// Estimate is what the final would play for this event and how long it
// would take: for each format its games (games per pair, the shape's
// choices applied) and the time from the mean duration of the ladder's and
// the final's games played here so far (every game's, before any), at so
// many at once.
type Estimate struct {
	// Teams are the teams the final would play (the ladder's top, when
	// the shape says so).
	Teams        int `json:"teams"`
	GamesPerPair int `json:"gamesPerPair"`
	// MeanGame is the mean duration of the last games played here (Sample
	// of them); 0 before any.
	MeanGame time.Duration `json:"meanGameMs"`
	// Spread is the sampled games' standard deviation: how far one game
	// may be from the mean.
	Spread time.Duration `json:"spreadMs"`
	Sample int           `json:"sample"`
	// SampleOf says which games the mean is of: "ladder and final games"
	// (what the final plays), or "games" (every kind, validations too)
	// while the event has played none of them.
	SampleOf string `json:"sampleOf"`
	AtOnce   int    `json:"atOnce"`
	// Formats are the final's formats, in FinalFormats' order, the one the
	// shape names Chosen.
	Formats []FormatEstimate `json:"formats"`
}

// FormatEstimate is one format's games and time.
type FormatEstimate struct {
	Format string `json:"format"`
	// Words say the format as the final's start does ("swiss, 11 rounds").
	Words string `json:"words"`
	Games int    `json:"games"`
	// Bound says how Games bounds what is played: "" exactly, "at least"
	// (a bracket's level matches add deciders), "at most" (a rating final
	// stops once its ranks are told apart).
	Bound string `json:"bound,omitempty"`
	// Duration is the format's batches (tournament.Config.Batches), one
	// after another, each a game's mean time for every AtOnce of its games
	// (a batch of fewer games than AtOnce still takes a game's time): 0
	// while no game says how long one takes.
	Duration time.Duration `json:"durationMs"`
	Chosen   bool          `json:"chosen,omitempty"`
}

// estimateSample is how many of the last games the mean is taken over.
const estimateSample = 1000

// RoundRobinGames is how many games a round robin of teams plays, each
// pair perPair times.
func RoundRobinGames(teams, perPair int) int {
	return teams * (teams - 1) / 2 * perPair
}

// FinalEstimate estimates the final of shape for teams teams (before the
// ladder's top is taken), atOnce at a time, from the games played here.
func (s *Store) FinalEstimate(ctx context.Context, shape Shape, teams, atOnce int) (Estimate, error) {
	shape.GamesPerPair = max(shape.GamesPerPair, 1)
	if shape.Top > 0 {
		teams = min(teams, shape.Top)
	}
	e := Estimate{Teams: teams, GamesPerPair: shape.GamesPerPair, AtOnce: max(atOnce, 1)}
	var mean, square float64
	// The last games recorded of the kinds the final plays, those of
	// them that say how long they took: never more than estimateSample
	// rows of each kind read, each by its index, however many games lack
	// a duration (recorded before durations were). A validation's games
	// against the built-in random bot are shorter than two teams' and
	// are not taken, nor scrimmages, which may be against it; an event
	// that played neither kind yet takes every game it played.
	err := s.readRow(ctx, `SELECT COALESCE(AVG(d), 0), COALESCE(AVG(d*d), 0), COUNT(*) FROM (SELECT d FROM
		(SELECT id, duration_ms AS d FROM games WHERE kind = ?2 ORDER BY id DESC LIMIT ?1)
		UNION ALL SELECT d FROM (SELECT id, duration_ms AS d FROM games WHERE kind = ?3 ORDER BY id DESC LIMIT ?1)) WHERE d > 0`,
		estimateSample, LadderGame, FinalGame).Scan(&mean, &square, &e.Sample)
	if err != nil {
		return e, err
	}
	e.SampleOf = "ladder and final games"
	if e.Sample == 0 {
		e.SampleOf = "games"
		err := s.readRow(ctx, `SELECT COALESCE(AVG(d), 0), COALESCE(AVG(d*d), 0), COUNT(*) FROM
			(SELECT duration_ms AS d FROM games ORDER BY id DESC LIMIT ?) WHERE d > 0`, estimateSample).Scan(&mean, &square, &e.Sample)
		if err != nil {
			return e, err
		}
	}
	// Whole milliseconds, as the page shows them.
	e.MeanGame = time.Duration(math.Round(mean)) * time.Millisecond
	e.Spread = time.Duration(math.Round(math.Sqrt(max(square-mean*mean, 0)))) * time.Millisecond
	chosen := cmp.Or(shape.Format, tournament.RoundRobin)
	for _, f := range FinalFormats() {
		sh := shape
		sh.Format = f
		c := sh.Config(teams)
		fe := FormatEstimate{Format: f, Words: c.Describe(), Games: c.Planned(), Chosen: f == chosen}
		switch f {
		case tournament.RoundRobin:
			fe.Games = RoundRobinGames(teams, shape.GamesPerPair)
		case tournament.Knockout, tournament.DoubleElimination, tournament.Stages:
			fe.Bound = "at least"
			if f == tournament.Stages && c.Then == tournament.RoundRobin {
				fe.Bound = ""
			}
		case tournament.Rating:
			fe.Words, fe.Bound = "rating, where the ranks are least sure", "at most"
		}
		fe.Games = max(fe.Games, 0) // a bracket of no team plays none, not -2
		if teams >= 2 {
			fe.Duration = e.Of(c.Batches())
		}
		e.Formats = append(e.Formats, fe)
	}
	return e, nil
}

// Intro says what the estimate is for: "For 300 teams, 2 games a pair, 1
// at once, at about 1.7 s a game (the mean of the last 1000 played
// here)".
func (e Estimate) Intro() string {
	out := fmt.Sprintf("For %d teams, %s a pair, %d at once", e.Teams, words.Plural(e.GamesPerPair, "game"), e.AtOnce)
	if e.MeanGame <= 0 {
		return out + " (no game played here yet says how long one takes)"
	}
	out += fmt.Sprintf(", at %s a game (the mean of the last %d %s played here", About(e.MeanGame), e.Sample, e.SampleOf)
	if e.Sample > 1 && e.Spread > 0 {
		out += fmt.Sprintf("; one game may take %s more or less", strings.TrimPrefix(About(e.Spread), "about "))
	}
	return out + ")"
}

// String says one format's estimate: "swiss, 11 rounds: 3,300 games, about
// 94 min".
func (f FormatEstimate) String() string {
	out := f.Words + ": "
	if f.Bound != "" {
		out += f.Bound + " "
	}
	out += words.Thousands(f.Games) + " games"
	if f.Duration > 0 {
		out += ", " + About(f.Duration)
	}
	return out
}

// Chosen is the estimate of the format the shape names.
func (e Estimate) Chosen() FormatEstimate {
	for _, f := range e.Formats {
		if f.Chosen {
			return f
		}
	}
	return FormatEstimate{}
}

// Of is how long batches of games take, one after another, at the
// estimate's pace: every AtOnce games of a batch (or fewer, its last) a
// mean game's time (0: unknown).
func (e Estimate) Of(batches []int) time.Duration {
	if e.MeanGame <= 0 {
		return 0
	}
	at, slots := max(e.AtOnce, 1), 0
	for _, b := range batches {
		slots += (b + at - 1) / at
	}
	return time.Duration(slots) * e.MeanGame
}

// Left is how long games more take at the estimate's pace (0: unknown).
func (e Estimate) Left(games int) time.Duration {
	if e.MeanGame <= 0 {
		return 0
	}
	return time.Duration(games) * e.MeanGame / time.Duration(max(e.AtOnce, 1))
}

// About says a duration as a person plans with it: "about 43 h", "about 12
// min", "about 40 s".
func About(d time.Duration) string {
	switch {
	case d <= 0:
		return "unknown"
	case d >= 2*time.Hour:
		return "about " + trimFloat(d.Hours()) + " h"
	case d >= 2*time.Minute:
		return "about " + trimFloat(d.Minutes()) + " min"
	}
	return "about " + trimFloat(d.Seconds()) + " s"
}

func trimFloat(f float64) string {
	if f >= 9.95 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}
