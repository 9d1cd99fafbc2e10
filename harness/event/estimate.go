package event

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/rating"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
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
	MeanGame time.Duration `json:"meanGame"`
	// Spread is the sampled games' standard deviation: how far one game
	// may be from the mean.
	Spread time.Duration `json:"spread"`
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
	// Played is the games it plays when it is played out as the games
	// here say the final's go (FinalEstimate): Games, and a playoff's or
	// a bracket's deciders, or fewer where a rating final stops early.
	Played int `json:"played"`
	// Duration is the mean time of those play-outs, Low and High the
	// range of all but the shortest and the longest tenth of them: 0
	// while no game says how long one takes.
	Duration time.Duration `json:"duration"`
	Low      time.Duration `json:"low"`
	High     time.Duration `json:"high"`
	Chosen   bool          `json:"chosen,omitempty"`
}

// estimateSample is how many of the last games the mean is taken over.
const estimateSample = 1000

// pace is a game's time as the estimate takes it: how long it held its
// place among the games played at once (its sandboxes set up, its
// evidence read back and its result stored, as well as its match), or,
// where that was not recorded (a worker's game, one recorded before it
// was), its match's duration.
const pace = `CASE WHEN slot_ms > 0 THEN slot_ms ELSE duration_ms END`

// RoundRobinGames is how many games a round robin of teams plays, each
// pair perPair times.
func RoundRobinGames(teams, perPair int) int {
	return teams * (teams - 1) / 2 * perPair
}

// FinalEstimate estimates the final of shape for teams teams (before the
// ladder's top is taken), atOnce at a time, from the games played here:
// each format is played out simRuns times by its own pairing (the ladder's
// teams in their order, as the final seeds them), every game's result
// and time drawn from the games here (model), so that what a format
// plays only once its results are known (a bracket's deciders, a
// playoff, a rating final that stops early) and the time a round waits
// for its last game are in the estimate.
func (s *Store) FinalEstimate(ctx context.Context, shape Shape, teams, atOnce int) (Estimate, error) {
	shape.GamesPerPair = max(shape.GamesPerPair, 1)
	if shape.Top > 0 {
		teams = min(teams, shape.Top)
	}
	e := Estimate{Teams: teams, GamesPerPair: shape.GamesPerPair, AtOnce: max(atOnce, 1)}
	m, err := s.estimateModel(ctx, teams)
	if err != nil {
		return e, err
	}
	e.Sample, e.SampleOf = len(m.paces), m.of
	if len(m.paces) > 0 {
		mean, square := m.mean(), 0.0
		for _, d := range m.paces {
			square += (d - mean) * (d - mean) / float64(len(m.paces))
		}
		// Whole milliseconds, as the page shows them.
		e.MeanGame = time.Duration(math.Round(mean)) * time.Millisecond
		e.Spread = time.Duration(math.Round(math.Sqrt(square))) * time.Millisecond
	}
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
			if err := fe.simulate(c, e.AtOnce, m); err != nil {
				return e, err
			}
		}
		e.Formats = append(e.Formats, fe)
	}
	return e, nil
}

// simulate plays c out (tournament.Config.Simulate) as m draws its games
// and sets the games it plays and the time they take: the runs' mean and
// the range of all but the shortest and the longest tenth; nothing while
// no game says how long one takes. A format of more than simMax games is
// not played out (its pairing would cost seconds of the page, and its
// playoff or deciders are few beside its games): its batches
// (tournament.Config.Batches) take a mean game's time for every AtOnce
// of their games.
func (fe *FormatEstimate) simulate(c tournament.Config, atOnce int, m *model) error {
	fe.Played = fe.Games
	if len(m.paces) == 0 {
		return nil // no time to tell
	}
	if fe.Games > simMax {
		slots := 0
		for _, b := range c.Batches() {
			slots += (b + atOnce - 1) / atOnce
		}
		fe.Duration = round(time.Duration(slots) * time.Duration(m.mean()*float64(time.Millisecond)))
		return nil
	}
	m.reset()
	runs, err := c.Simulate(max(1, min(20, simGames/max(fe.Games, 1))), atOnce, m.play)
	if err != nil {
		return err
	}
	walls := make([]time.Duration, len(runs))
	var games int
	var wall time.Duration
	for i, r := range runs {
		games += r.Games
		wall += r.Wall
		walls[i] = r.Wall
	}
	fe.Played = int(math.Round(float64(games) / float64(len(runs))))
	slices.Sort(walls)
	fe.Duration = round(wall / time.Duration(len(runs)))
	fe.Low, fe.High = round(walls[len(walls)/10]), round(walls[len(walls)-1-len(walls)/10])
	return nil
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

const (
	// simMax is the most games a format may plan and be played out.
	simMax = 2_000
	// simGames is how many games the play-outs of a format draw in all:
	// 20 runs of a format of 200 games or fewer, 2 of one of 2,000.
	simGames = 4_000
)

// model draws a final's game as the games played here say it goes: its
// winner from the games between the two sides' submissions when there are
// (those with the same sides first: a game may favour a side), each
// counting four times the ratings' word (priorWeight); else from their
// ladder ratings with the sample's share of draws; its time one of those
// games' (or, when there are none, of the sample's) at random. A final's
// seeds are the ladder's teams in its order; a seed past them is an
// unrated team. It draws the same games for the same games played here.
type model struct {
	of      string
	paces   []float64 // ms, the sample's
	draws   float64   // the sample's share of drawn games
	rating  []float64 // by seed
	subs    []int64   // by seed, 0: not known
	between map[[2]int64]*pairGames
	rng     *rand.Rand
}

// priorWeight is how many games the ratings' word counts as beside the
// games two submissions played: a deterministic pair's one game says
// most of what the next will be.
const priorWeight = 0.1

// pairGames are the sample's games of one submission as white against
// another as black: white's wins, black's, the draws (and games without a
// winner) and the games' times.
type pairGames struct {
	white, black, draws int
	paces               []float64
}

// reset makes the model draw as it did at first.
func (m *model) reset() { m.rng = rand.New(rand.NewPCG(1, 2)) }

func (m *model) play(g tournament.Game) (string, time.Duration) {
	win := stats.ScoreOf(m.ratingOf(g.White) - m.ratingOf(g.Black))
	pw, pl := max(win-m.draws/2, 0), max(1-win-m.draws/2, 0)
	paces := m.paces
	a, b := m.subOf(g.White), m.subOf(g.Black)
	if a != 0 && b != 0 {
		p, swapped := m.between[[2]int64{a, b}], false
		if p == nil {
			p, swapped = m.between[[2]int64{b, a}], true
		}
		if p != nil {
			w, l := float64(p.white), float64(p.black)
			if swapped {
				w, l = l, w
			}
			n := float64(p.white+p.black+p.draws) + priorWeight
			pw, pl = (w+priorWeight*pw)/n, (l+priorWeight*pl)/n
			paces = p.paces
		}
	}
	var took time.Duration
	if len(paces) > 0 {
		took = time.Duration(paces[m.rng.IntN(len(paces))] * float64(time.Millisecond))
	}
	switch u := m.rng.Float64(); {
	case u < pw:
		return transcript.WinnerWhite, took
	case u < pw+pl:
		return transcript.WinnerBlack, took
	}
	return transcript.WinnerDraw, took
}

// mean is the sample's mean time of a game, in ms.
func (m *model) mean() float64 {
	var sum float64
	for _, d := range m.paces {
		sum += d
	}
	return sum / float64(max(len(m.paces), 1))
}

func (m *model) ratingOf(seed int) float64 {
	if seed < len(m.rating) {
		return m.rating[seed]
	}
	return rating.Start().Rating
}

func (m *model) subOf(seed int) int64 {
	if seed < len(m.subs) {
		return m.subs[seed]
	}
	return 0
}

// estimateModel reads what the estimate draws its games from: the last
// games recorded of the kinds the final plays, those of them that say how
// long they took (never more than estimateSample rows of each kind read,
// each by its index, however many games lack a duration: recorded before
// durations were), and the ladder's first teams teams. A validation's
// games against the built-in random bot are shorter than two teams' and
// are not taken, nor scrimmages, which may be against it; an event that
// played neither kind yet takes every game it played.
func (s *Store) estimateModel(ctx context.Context, teams int) (*model, error) {
	m := &model{of: "ladder and final games", between: map[[2]int64]*pairGames{}}
	const cols = `COALESCE(white_submission, 0), COALESCE(black_submission, 0), winner, ` + pace
	sample := func(query string, args ...any) error {
		rows, err := s.read(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var drawn int
		for rows.Next() {
			var a, b int64
			var winner string
			var ms float64
			if err := rows.Scan(&a, &b, &winner, &ms); err != nil {
				return err
			}
			m.paces = append(m.paces, ms)
			if winner == transcript.WinnerDraw {
				drawn++
			}
			if a == 0 || b == 0 || a == b {
				continue
			}
			p := m.between[[2]int64{a, b}]
			if p == nil {
				p = &pairGames{}
				m.between[[2]int64{a, b}] = p
			}
			p.paces = append(p.paces, ms)
			switch winner {
			case transcript.WinnerWhite:
				p.white++
			case transcript.WinnerBlack:
				p.black++
			default:
				p.draws++ // drawn, or no winner: neither's
			}
		}
		if len(m.paces) > 0 {
			m.draws = float64(drawn) / float64(len(m.paces))
		}
		return rows.Err()
	}
	err := sample(`SELECT `+cols+` FROM (SELECT * FROM
		(SELECT * FROM games WHERE kind = ?2 ORDER BY id DESC LIMIT ?1)
		UNION ALL SELECT * FROM (SELECT * FROM games WHERE kind = ?3 ORDER BY id DESC LIMIT ?1)) WHERE `+pace+` > 0`,
		estimateSample, LadderGame, FinalGame)
	if err != nil {
		return nil, err
	}
	if len(m.paces) == 0 {
		m.of = "games"
		if err := sample(`SELECT `+cols+` FROM (SELECT * FROM games ORDER BY id DESC LIMIT ?) WHERE `+pace+` > 0`, estimateSample); err != nil {
			return nil, err
		}
	}
	ladder, err := s.Ladder(ctx)
	if err != nil {
		return nil, err
	}
	for _, st := range ladder[:min(teams, len(ladder))] {
		m.rating = append(m.rating, st.Rating.Rating)
		m.subs = append(m.subs, st.Submission)
	}
	return m, nil
}

// Intro says what the estimate is for: "For 300 teams, 2 games a pair, 1
// at once, at about 1.7 s a game (the mean of the last 1000 ladder and
// final games played here; ...), each format played out by its own
// pairing as those games go".
func (e Estimate) Intro() string {
	out := fmt.Sprintf("For %d teams, %s a pair, %d at once", e.Teams, words.Plural(e.GamesPerPair, "game"), e.AtOnce)
	if e.MeanGame <= 0 {
		return out + " (no game played here yet says how long one takes)"
	}
	out += fmt.Sprintf(", at %s a game (the mean of the last %d %s played here", About(e.MeanGame), e.Sample, e.SampleOf)
	if e.Sample > 1 && e.Spread > 0 {
		out += fmt.Sprintf("; one game may take %s more or less", strings.TrimPrefix(About(e.Spread), "about "))
	}
	return out + "), each format played out by its own pairing as those games go"
}

// String says one format's estimate: "knockout: at least 62 games, about
// 66 as the games here go, about 94 min (88 to 101 min)".
func (f FormatEstimate) String() string {
	out := f.Words + ": "
	if f.Bound != "" {
		out += f.Bound + " "
	}
	out += words.Thousands(f.Games) + " games"
	if f.Played > 0 && f.Played != f.Games {
		out += ", about " + words.Thousands(f.Played) + " as the games here go"
	}
	if f.Duration > 0 {
		out += ", " + About(f.Duration)
		if span := Span(f.Low, f.High); span != "" {
			out += " (" + span + ")"
		}
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

// Left is how long games more take at the estimate's pace (0: unknown).
func (e Estimate) Left(games int) time.Duration {
	if e.MeanGame <= 0 {
		return 0
	}
	return time.Duration(games) * e.MeanGame / time.Duration(max(e.AtOnce, 1))
}

// About says a duration as a person plans with it: "about 43 h", "about 12
// min", "about 40 s", "about 30 ms".
func About(d time.Duration) string {
	switch {
	case d <= 0:
		return "unknown"
	case d < 100*time.Millisecond:
		return fmt.Sprintf("about %d ms", max(d.Round(time.Millisecond).Milliseconds(), 1))
	case d >= 2*time.Hour:
		return "about " + trimFloat(d.Hours()) + " h"
	case d >= 2*time.Minute:
		return "about " + trimFloat(d.Minutes()) + " min"
	}
	return "about " + trimFloat(d.Seconds()) + " s"
}

// Span says a range of durations in the unit About says its longer in:
// "88 to 101 min"; "" when both say the same.
func Span(lo, hi time.Duration) string {
	unit, name := time.Second, " s"
	switch {
	case hi < 100*time.Millisecond:
		unit, name = time.Millisecond, " ms"
	case hi >= 2*time.Hour:
		unit, name = time.Hour, " h"
	case hi >= 2*time.Minute:
		unit, name = time.Minute, " min"
	}
	l, h := trimFloat(float64(lo)/float64(unit)), trimFloat(float64(hi)/float64(unit))
	if l == h {
		return ""
	}
	return l + " to " + h + name
}

func trimFloat(f float64) string {
	if f >= 9.95 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}
