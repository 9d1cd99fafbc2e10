package event

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/arenabots/arena/harness/tournament"
)

// Estimate is what the final would play for this event and how long it
// would take: its games (a round robin of the teams that play, or a Swiss
// final of its default rounds, games per pair), and the time from the mean
// duration of the games played here so far (the ladder's, scrimmages' and
// validations'), at so many at once.
type Estimate struct {
	Teams        int `json:"teams"`
	GamesPerPair int `json:"gamesPerPair"`
	Games        int `json:"games"`
	// SwissRounds and SwissGames are a Swiss final's default rounds for
	// these teams and the games it plays.
	SwissRounds int `json:"swissRounds"`
	SwissGames  int `json:"swissGames"`
	// MeanGame is the mean duration of the last games played here (Sample
	// of them); 0 before any.
	MeanGame time.Duration `json:"meanGameMs"`
	Sample   int           `json:"sample"`
	AtOnce   int           `json:"atOnce"`
	// Duration is Games × MeanGame / AtOnce, SwissDuration the same of
	// SwissGames: 0 while no game says how long one takes.
	Duration      time.Duration `json:"durationMs"`
	SwissDuration time.Duration `json:"swissDurationMs"`
}

// estimateSample is how many of the last games the mean is taken over.
const estimateSample = 1000

// RoundRobinGames is how many games a round robin of teams plays, each
// pair perPair times.
func RoundRobinGames(teams, perPair int) int {
	return teams * (teams - 1) / 2 * perPair
}

// FinalEstimate estimates a round robin of teams, perPair games a pair, atOnce
// at a time, from the games played here.
func (s *Store) FinalEstimate(ctx context.Context, teams, perPair, atOnce int) (Estimate, error) {
	e := Estimate{Teams: teams, GamesPerPair: max(perPair, 1), AtOnce: max(atOnce, 1)}
	e.Games = RoundRobinGames(teams, e.GamesPerPair)
	e.SwissRounds = tournament.SwissRounds(teams)
	e.SwissGames = e.SwissRounds * (teams / 2) * e.GamesPerPair
	var mean float64
	err := s.readRow(ctx, `SELECT COALESCE(AVG(duration_ms), 0), COUNT(*) FROM
		(SELECT duration_ms FROM games WHERE duration_ms > 0 ORDER BY id DESC LIMIT ?)`, estimateSample).Scan(&mean, &e.Sample)
	if err != nil {
		return e, err
	}
	// Whole milliseconds: the page's script reckons from the same number.
	e.MeanGame = time.Duration(math.Round(mean)) * time.Millisecond
	e.Duration, e.SwissDuration = e.Left(e.Games), e.Left(e.SwissGames)
	return e, nil
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
