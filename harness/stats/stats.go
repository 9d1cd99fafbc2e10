// Package stats is what a match between two bots says about their
// difference in strength: Elo with its 95% interval, normalized Elo, the
// likelihood of superiority and the draw ratio, from game counts (W/D/L, the
// trinomial model) or from side-swapped pairs of games (the pentanomial
// model, which cutechess-cli and fastchess use because a pair played from
// both sides of one opening cancels most of the opening's bias), and the
// generalized sequential probability ratio test that stops a match once
// "B is stronger than A by at least elo1" or "by at most elo0" is decided.
//
// It is pure arithmetic: it must never read a clock, a database or a game.
package stats

import (
	"fmt"
	"math"
	"sort"
)

// z95 is the two-sided 95% quantile of the normal distribution.
const z95 = 1.959963984540054

// WDL counts games from one bot's side: its wins, draws and losses.
type WDL struct{ W, D, L int }

// Games is W+D+L.
func (c WDL) Games() int { return c.W + c.D + c.L }

// Add counts one game scored s (1, 0.5 or 0) for the bot.
func (c *WDL) Add(s float64) {
	switch s {
	case 1:
		c.W++
	case 0:
		c.L++
	default:
		c.D++
	}
}

// Penta counts side-swapped pairs of games by the bot's points in the pair:
// Penta[k] pairs scored k/2 points (0: lost both, 1: a loss and a draw, 2:
// a win and a loss or two draws, 3: a win and a draw, 4: won both).
type Penta [5]int

// Pairs is the number of pairs counted.
func (p Penta) Pairs() int { return p[0] + p[1] + p[2] + p[3] + p[4] }

// Add counts a pair whose two games the bot scored a and b (1, 0.5 or 0).
func (p *Penta) Add(a, b float64) {
	k := int(math.Round(2 * (a + b)))
	p[max(0, min(4, k))]++
}

// String prints the counts as fastchess does: [LL, LD, WL+DD, WD, WW].
func (p Penta) String() string {
	return fmt.Sprintf("[%d, %d, %d, %d, %d]", p[0], p[1], p[2], p[3], p[4])
}

// Estimate is what a set of games says about the difference between two
// bots, from the first bot's side. Its fields are NaN or infinite where
// the games cannot say (no game; a bot that won or lost everything has an
// Elo of ±Inf).
type Estimate struct {
	Score float64 // mean points per game, 0..1
	// Elo is the logistic Elo difference that score means; Lower and Upper
	// bound its 95% interval.
	Elo, Lower, Upper float64
	// NElo is normalized Elo: the score's distance from 0.5 in units of
	// its standard deviation per game (per pair in the pentanomial model,
	// scaled by sqrt 2), times 800/ln 10, so that it does not depend on
	// the draw ratio.
	NElo, NEloMargin float64
	// LOS is the likelihood of superiority: the probability that the first
	// bot is the stronger.
	LOS float64
	// DrawRatio is the share of drawn games.
	DrawRatio float64
	N         int // the samples: games, or pairs
}

// Margin is half the 95% interval, the ± of "Elo ± margin".
func (e Estimate) Margin() float64 { return (e.Upper - e.Lower) / 2 }

// String prints the estimate as a chess engine tester would read it.
func (e Estimate) String() string {
	return fmt.Sprintf("Elo %s, nElo %s, LOS %.1f%%, draw ratio %.1f%%",
		pm(e.Elo, e.Margin()), pm(e.NElo, e.NEloMargin), 100*e.LOS, 100*e.DrawRatio)
}

func pm(v, m float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.2f ± %.2f", v+0, m) // +0: no "-0.00"
}

// EloOf is the logistic Elo difference whose expected score is s.
func EloOf(s float64) float64 { return -400 * math.Log10(1/s-1) }

// ScoreOf is the expected score of a bot rated elo above its opponent.
func ScoreOf(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }

// nEloScale turns a score's distance from 0.5, in standard deviations,
// into normalized Elo.
const nEloScale = 800 / math.Ln10

// Trinomial estimates from game counts, each game a sample.
func Trinomial(c WDL) Estimate {
	n := float64(c.Games())
	draws := float64(c.D) / n
	e := estimate([]float64{1, 0.5, 0}, []float64{float64(c.W) / n, draws, float64(c.L) / n}, n, 1, draws, c.Games())
	// cutechess-cli's and fastchess's: the draws say nothing of who is
	// stronger.
	e.LOS = 0.5 + 0.5*math.Erf(float64(c.W-c.L)/math.Sqrt(2*float64(c.W+c.L)))
	return e
}

// Pentanomial estimates from side-swapped pairs, each pair a sample.
// draws is the number of drawn games in those pairs (the counts cannot
// tell two draws from a win and a loss).
func Pentanomial(p Penta, draws int) Estimate {
	n := float64(p.Pairs())
	probs := make([]float64, 5)
	for k := range p {
		probs[k] = float64(p[k]) / n
	}
	return estimate([]float64{0, 0.25, 0.5, 0.75, 1}, probs, n, 2, float64(draws)/(2*n), p.Pairs())
}

// estimate is the score's mean and variance over outcomes scored x with
// frequencies p in n samples of k games each.
func estimate(x, p []float64, n, k, draws float64, samples int) Estimate {
	mu, v := meanVar(x, p)
	se := math.Sqrt(v / n)
	e := Estimate{Score: mu, Elo: EloOf(mu), Lower: EloOf(mu - z95*se), Upper: EloOf(mu + z95*se),
		DrawRatio: draws, N: samples}
	sd := math.Sqrt(k * v) // per game
	e.NElo = (mu - 0.5) / sd * nEloScale
	e.NEloMargin = z95 * se / sd * nEloScale
	e.LOS = LOS(mu-0.5, se)
	if v == 0 { // every sample scored the same
		e.NEloMargin = 0
		switch {
		case mu > 0.5:
			e.LOS, e.NElo = 1, math.Inf(1)
		case mu < 0.5:
			e.LOS, e.NElo = 0, math.Inf(-1)
		default:
			e.LOS, e.NElo = 0.5, 0
		}
	}
	return e
}

// meanVar is the mean and the variance of outcomes x with frequencies p.
func meanVar(x, p []float64) (mu, v float64) {
	for i := range x {
		mu += p[i] * x[i]
	}
	for i := range x {
		v += p[i] * (x[i] - mu) * (x[i] - mu)
	}
	return mu, v
}

// LOS is the likelihood of superiority of a difference diff measured with
// standard error se: the chance that the true difference is above zero.
func LOS(diff, se float64) float64 { return phi(diff / se) }

// phi is the standard normal distribution function.
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// Median of xs (0 for none); xs are left as they were.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
