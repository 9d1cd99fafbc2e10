package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Models of the SPRT: what elo0 and elo1 mean.
const (
	// Normalized: elo0 and elo1 are normalized Elo (see Estimate.NElo), the
	// default of fastchess and fishtest: the same bounds mean the same
	// effort whatever the draw ratio.
	Normalized = "normalized"
	// Logistic: plain logistic Elo.
	Logistic = "logistic"
	// Bayesian: BayesElo, with the draw Elo estimated from the games; it
	// uses game counts (W/D/L), not pairs.
	Bayesian = "bayesian"
)

// SPRT is a generalized sequential probability ratio test of H0: the second
// bot is stronger by elo0, against H1: by elo1 (elo0 < elo1); Alpha is the
// chance of accepting H1 when H0 holds, Beta of accepting H0 when H1 does.
type SPRT struct {
	Elo0, Elo1  float64
	Alpha, Beta float64
	Model       string
}

// Decision is where a test stands.
type Decision int

// Decisions.
const (
	Continue Decision = iota
	AcceptH0
	AcceptH1
)

func (d Decision) String() string {
	return [...]string{"continue", "H0 accepted", "H1 accepted"}[d]
}

// DefaultSPRT is the test a duel runs when only some of its parameters are
// given: elo0=0, elo1=5, alpha=beta=0.05, normalized.
func DefaultSPRT() SPRT { return SPRT{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05, Model: Normalized} }

// ParseSPRT reads "elo0=0,elo1=5,alpha=0.05,beta=0.05[,model=normalized]";
// a parameter left out keeps DefaultSPRT's value.
func ParseSPRT(s string) (SPRT, error) {
	t := DefaultSPRT()
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return t, fmt.Errorf("sprt: want NAME=VALUE, got %q (elo0=0,elo1=5,alpha=0.05,beta=0.05,model=normalized)", kv)
		}
		if k == "model" {
			t.Model = v
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return t, fmt.Errorf("sprt: %s: want a number, got %q", k, v)
		}
		switch k {
		case "elo0":
			t.Elo0 = f
		case "elo1":
			t.Elo1 = f
		case "alpha":
			t.Alpha = f
		case "beta":
			t.Beta = f
		default:
			return t, fmt.Errorf("sprt: unknown parameter %q (want elo0, elo1, alpha, beta or model)", k)
		}
	}
	return t, t.Validate()
}

// Validate says what is wrong with the test's parameters.
func (t SPRT) Validate() error {
	switch {
	case t.Elo0 >= t.Elo1:
		return fmt.Errorf("sprt: elo0 (%g) must be less than elo1 (%g)", t.Elo0, t.Elo1)
	case t.Alpha <= 0 || t.Alpha >= 1 || t.Beta <= 0 || t.Beta >= 1:
		return fmt.Errorf("sprt: alpha and beta must be between 0 and 1, got %g and %g", t.Alpha, t.Beta)
	case t.Alpha+t.Beta >= 1:
		return fmt.Errorf("sprt: alpha+beta must be less than 1, got %g", t.Alpha+t.Beta)
	}
	switch t.Model {
	case Normalized:
		// A normalized Elo of 200 is a score two standard deviations from
		// even in every pair: bounds beyond it test no close difference.
		if math.Abs(t.Elo0) > maxNElo || math.Abs(t.Elo1) > maxNElo {
			return fmt.Errorf("sprt: normalized elo0 and elo1 must be within ±%d, got %g and %g (model=logistic for larger differences)", maxNElo, t.Elo0, t.Elo1)
		}
		return nil
	case Logistic, Bayesian:
		return nil
	}
	return fmt.Errorf("sprt: model: want %s, %s or %s, got %q", Normalized, Logistic, Bayesian, t.Model)
}

// maxNElo bounds the normalized model's elo0 and elo1.
const maxNElo = 200

// Bounds are the LLR's bounds: at or below lower H0 is accepted, at or
// above upper H1 (Wald's).
func (t SPRT) Bounds() (lower, upper float64) {
	return math.Log(t.Beta / (1 - t.Alpha)), math.Log((1 - t.Beta) / t.Alpha)
}

// Decide is the test's decision at llr.
func (t SPRT) Decide(llr float64) Decision {
	lo, hi := t.Bounds()
	switch {
	case llr >= hi:
		return AcceptH1
	case llr <= lo:
		return AcceptH0
	}
	return Continue
}

// LLR is the log-likelihood ratio of H1 against H0 given the pairs (the
// pentanomial model), or, for the Bayesian model, the games they hold.
//
// It is the generalized LLR of Van den Bergh ("Comments on the
// normalized SPRT", and "Computing the LLR of a multinomial
// distribution", the notes behind fishtest's and fastchess's SPRT): for
// each hypothesis the outcome frequencies closest to the observed ones (by
// maximum likelihood) among those whose expected score (logistic) or
// normalized score (normalized) the hypothesis fixes, then
// N * sum(p̂ log(p1/p0)). As in fastchess, a count of zero is taken as
// 0.001, so that a test whose every pair ended alike still moves.
func (t SPRT) LLR(p Penta, games WDL) float64 {
	if t.Model == Bayesian {
		return t.llrBayesian(games)
	}
	if p.Pairs() == 0 {
		return 0
	}
	scores := []float64{0, 0.25, 0.5, 0.75, 1}
	probs, n := frequencies(p[:])
	if t.Model == Logistic {
		return n * llrLogistic(scores, probs, ScoreOf(t.Elo0), ScoreOf(t.Elo1))
	}
	// A pair's normalized score is sqrt 2 times a game's.
	t0, t1 := math.Sqrt2*t.Elo0/nEloScale, math.Sqrt2*t.Elo1/nEloScale
	return n * llrNormalized(scores, probs, t0, t1)
}

// llrBayesian is the LLR of game counts under BayesElo, the draw Elo
// estimated from them.
func (t SPRT) llrBayesian(c WDL) float64 {
	if c.W == 0 || c.L == 0 {
		return 0
	}
	probs, n := frequencies([]int{c.L, c.D, c.W})
	w, l := probs[2], probs[0]
	drawElo := 200 * math.Log10((1-l)/l*(1-w)/w)
	return n * llrLogistic([]float64{0, 0.5, 1}, probs, bayesScore(t.Elo0, drawElo), bayesScore(t.Elo1, drawElo))
}

// bayesScore is the expected score of a bot elo BayesElo above its
// opponent when drawElo is the draw Elo.
func bayesScore(elo, drawElo float64) float64 {
	win := 1 / (1 + math.Pow(10, (drawElo-elo)/400))
	loss := 1 / (1 + math.Pow(10, (drawElo+elo)/400))
	return win + (1-win-loss)/2
}

// frequencies are the counts' shares, a zero count taken as 0.001, and
// their regularized total.
func frequencies(counts []int) ([]float64, float64) {
	probs := make([]float64, len(counts))
	n := 0.0
	for i, c := range counts {
		probs[i] = float64(c)
		if c == 0 {
			probs[i] = 1e-3
		}
		n += probs[i]
	}
	for i := range probs {
		probs[i] /= n
	}
	return probs, n
}

// llrLogistic is the LLR per sample of expected score s1 against s0.
func llrLogistic(scores, probs []float64, s0, s1 float64) float64 {
	return meanLog(probs, mleScore(scores, probs, s1), mleScore(scores, probs, s0))
}

// llrNormalized is the LLR per sample of normalized score t1 against t0.
func llrNormalized(scores, probs []float64, t0, t1 float64) float64 {
	return meanLog(probs, mleNormalized(scores, probs, t1), mleNormalized(scores, probs, t0))
}

// meanLog is sum(probs * log(p1/p0)).
func meanLog(probs, p1, p0 []float64) float64 {
	s := 0.0
	for i := range probs {
		s += probs[i] * (math.Log(p1[i]) - math.Log(p0[i]))
	}
	return s
}

// mleScore are the frequencies of greatest likelihood for the observed
// ones among those of mean score s: p_i = p̂_i / (1 + θ(a_i - s)), θ the
// root of sum(p̂_i (a_i - s) / (1 + θ(a_i - s))).
func mleScore(scores, probs []float64, s float64) []float64 {
	phi := make([]float64, len(scores))
	for i, a := range scores {
		phi[i] = a - s
	}
	return reweight(probs, phi)
}

// mleNormalized are the frequencies of greatest likelihood for the observed
// ones among those whose normalized score (mu - 1/2) / sigma is t: the
// fixed point of reweighting by phi_i = a_i - 1/2 - t*sigma*(1 +
// ((a_i-mu)/sigma)^2)/2 at the current mu and sigma (Van den Bergh, section
// 4.1 of the normalized SPRT's notes).
func mleNormalized(scores, probs []float64, t float64) []float64 {
	n := len(scores)
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	phi := make([]float64, n)
	for iter := 0; iter < 100; iter++ {
		mu, v := meanVar(scores, p)
		sigma := math.Sqrt(v)
		for i, a := range scores {
			z := (a - mu) / sigma
			phi[i] = a - 0.5 - 0.5*t*sigma*(1+z*z)
		}
		next := reweight(probs, phi)
		step := 0.0
		for i := range p {
			step = max(step, math.Abs(next[i]-p[i]))
		}
		p = next
		if step < 1e-15 {
			break
		}
	}
	return p
}

// reweight is p̂_i / (1 + θ phi_i) for the θ at which these sum to one:
// the root of f(θ) = sum(p̂_i phi_i / (1 + θ phi_i)), which falls as θ
// grows on the interval where every weight stays positive; found by
// Newton's method kept inside a bracket (bisecting when a step leaves it)
// until a step no longer moves θ.
func reweight(probs, phi []float64) []float64 {
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, f := range phi {
		switch {
		case f > 0:
			lo = max(lo, -1/f)
		case f < 0:
			hi = min(hi, -1/f)
		}
	}
	theta := 0.0
	if !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
		for iter := 0; iter < 200; iter++ {
			f, df := 0.0, 0.0
			for i := range probs {
				d := 1 + theta*phi[i]
				f += probs[i] * phi[i] / d
				df -= probs[i] * phi[i] * phi[i] / (d * d)
			}
			if f == 0 {
				break
			}
			if f > 0 {
				lo = theta
			} else {
				hi = theta
			}
			next := theta - f/df
			if !(next > lo && next < hi) {
				next = lo + (hi-lo)/2
			}
			if next == theta {
				break
			}
			theta = next
		}
	}
	out := make([]float64, len(probs))
	for i := range probs {
		out[i] = probs[i] / (1 + theta*phi[i])
	}
	return out
}
