// Package ranks says how sure a tournament's ranks are. It fits a
// Bradley-Terry model to every game by maximum likelihood (a draw counts
// half a win; a weak prior of drawn games against a reference player keeps
// a perfect score finite), and gives each player a confidence set of ranks:
// the ranks its strength may hold given simultaneous confidence intervals
// of its differences with every other player (Bonferroni over the n-1
// comparisons), as in Mogstad, Romano, Shaikh and Wilhelm, "Inference for
// ranks" (Review of Economic Studies). A player surely stronger than k
// others and surely weaker than m others holds a rank between m+1 and n-k.
//
// It is arithmetic alone: it must never read a store, a clock or a random
// source, so that the same games always give the same sets.
package ranks

import "math"

// Game is one game between players A and B: ScoreA is 1 when A won, 0.5 for
// a draw, 0 when B won.
type Game struct {
	A, B   int
	ScoreA float64
}

// Fit is a Bradley-Terry model fitted to a tournament's games.
type Fit struct {
	// Strength is each player's log-strength (their geometric mean 0): the
	// model's expected score of i against j is 1/(1+exp(Strength[j]-Strength[i])).
	Strength []float64
	// Info is each strength's own Fisher information (the diagonal).
	Info []float64
	// info is the whole Fisher information, which Sets inverts.
	info [][]float64
}

// Set is a confidence set of ranks, 1 the best: Low to High.
type Set struct {
	Low  int `json:"low"`
	High int `json:"high"`
}

// Level is the confidence of the sets standings give.
const Level = 0.95

// Prior is the weight of the prior: each player's games count as many
// drawn games against a reference player of strength 0.
const Prior = 1

// Estimate fits the model to n players' games with prior drawn games each
// against the reference (a prior of 0 leaves a player that never scored
// at a strength near minus infinity).
func Estimate(n int, games []Game, prior float64) *Fit {
	score := make([][]float64, n)
	count := make([][]float64, n)
	for i := range score {
		score[i], count[i] = make([]float64, n), make([]float64, n)
	}
	for _, g := range games {
		if g.A == g.B || g.A < 0 || g.B < 0 || g.A >= n || g.B >= n {
			continue
		}
		count[g.A][g.B]++
		count[g.B][g.A]++
		score[g.A][g.B] += g.ScoreA
		score[g.B][g.A] += 1 - g.ScoreA
	}
	gamma := make([]float64, n)
	for i := range gamma {
		gamma[i] = 1
	}
	// Minorization-maximization (Hunter 2004), the prior as games against
	// a player of strength 1.
	// Each player's opponents, with the games and points against each:
	// a large field's players meet a few of the others, so the
	// iterations go over these lists, not every pair.
	type opp struct {
		j            int
		count, score float64
	}
	opps := make([][]opp, n)
	wins := make([]float64, n)
	for i := range n {
		for j := range n {
			if count[i][j] > 0 {
				opps[i] = append(opps[i], opp{j, count[i][j], score[i][j]})
				wins[i] += score[i][j]
			}
		}
	}
	for iter := 0; iter < 10000; iter++ {
		next := make([]float64, n)
		for i := range n {
			num, den := prior*0.5+wins[i], prior/(gamma[i]+1)
			for _, o := range opps[i] {
				den += o.count / (gamma[i] + gamma[o.j])
			}
			switch {
			case num == 0 && den > 0:
				next[i] = 1e-9
			case den == 0 || num == 0:
				next[i] = gamma[i]
			default:
				next[i] = num / den
			}
		}
		logMean := 0.0
		for _, g := range next {
			logMean += math.Log(g)
		}
		logMean /= float64(max(n, 1))
		step := 0.0
		for i := range next {
			next[i] /= math.Exp(logMean)
			step = max(step, math.Abs(math.Log(next[i])-math.Log(gamma[i])))
		}
		gamma = next
		if step < 1e-10 {
			break
		}
	}
	f := &Fit{Strength: make([]float64, n), Info: make([]float64, n)}
	info := make([][]float64, n)
	for i := range n {
		f.Strength[i] = math.Log(gamma[i])
		info[i] = make([]float64, n)
		info[i][i] = prior * gamma[i] / ((gamma[i] + 1) * (gamma[i] + 1))
		for j := range n {
			if j == i || count[i][j] == 0 {
				continue
			}
			p := gamma[i] / (gamma[i] + gamma[j])
			v := count[i][j] * p * (1 - p)
			info[i][i] += v
			info[i][j] -= v
		}
		f.Info[i] = info[i][i]
	}
	f.info = info
	return f
}

// Sets are each player's confidence set of ranks at level (0.95: 95%),
// by the player's index.
func (f *Fit) Sets(level float64) []Set {
	n := len(f.Strength)
	out := make([]Set, n)
	cov := invert(f.info) // the covariance of the strengths' estimates
	if cov == nil {       // no information to tell anyone apart
		for i := range out {
			out[i] = Set{Low: 1, High: n}
		}
		return out
	}
	// Two-sided, Bonferroni over a player's n-1 comparisons.
	z := 0.0
	if n > 1 {
		z = math.Sqrt2 * math.Erfinv(1-(1-level)/float64(n-1))
	}
	for i := range n {
		better, worse := 0, 0
		for j := range n {
			if j == i {
				continue
			}
			d := f.Strength[j] - f.Strength[i]
			v := cov[i][i] + cov[j][j] - 2*cov[i][j]
			if math.IsNaN(v) || v < 0 {
				continue
			}
			se := math.Sqrt(v)
			switch {
			case d-z*se > 0:
				better++
			case d+z*se < 0:
				worse++
			}
		}
		out[i] = Set{Low: better + 1, High: n - worse}
	}
	return out
}

// invert is the inverse of a symmetric positive definite matrix (by
// Cholesky), or nil when it has none.
func invert(a [][]float64) [][]float64 {
	n := len(a)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, n)
	}
	for j := range n {
		s := a[j][j]
		for k := range j {
			s -= l[j][k] * l[j][k]
		}
		if s <= 0 || math.IsNaN(s) {
			return nil
		}
		l[j][j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := a[i][j]
			for k := range j {
				s -= l[i][k] * l[j][k]
			}
			l[i][j] = s / l[j][j]
		}
	}
	// inv = L^-T L^-1 = M^T M with M = L^-1 (lower triangular). Row c of
	// mt is column c of M, found by forward substitution from row c down;
	// inv[a][b] is then the dot product of rows a and b of mt.
	mt := make([][]float64, n)
	for c := range n {
		y := make([]float64, n)
		for i := c; i < n; i++ {
			s := 0.0
			if i == c {
				s = 1
			}
			row := l[i]
			for k := c; k < i; k++ {
				s -= row[k] * y[k]
			}
			y[i] = s / row[i]
		}
		mt[c] = y
	}
	inv := make([][]float64, n)
	for i := range inv {
		inv[i] = make([]float64, n)
	}
	for a := range n {
		ra := mt[a]
		for b := a; b < n; b++ {
			rb := mt[b]
			s := 0.0
			for i := b; i < n; i++ { // both are zero above the larger index
				s += ra[i] * rb[i]
			}
			inv[a][b], inv[b][a] = s, s
		}
	}
	return inv
}
