package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The LLR the SPRT uses is fastchess's (app/src/matchmaking/sprt in
// github.com/Disservin/fastchess, itself fishtest's,
// server/fishtest/stats/LLRcalc.py in official-stockfish/fishtest), from
// Michel Van den Bergh's notes "Comments on the normalized SPRT" and
// "Computing the LLR of a multinomial distribution":
//
//	counts of outcomes scored a_i (pairs: 0, 1/4, 1/2, 3/4, 1), a zero count
//	taken as 0.001, N their total, p̂_i = count_i / N;
//	for each hypothesis H_j the frequencies p^j of greatest likelihood
//	sum(p̂_i log p_i) among those where
//	  logistic:   sum(p_i a_i) = 1/(1 + 10^(-elo_j/400))
//	  normalized: (mu - 1/2) / sigma = sqrt(2) elo_j / (800/ln 10)
//	              (mu, sigma the mean and deviation of a under p);
//	LLR = N * sum(p̂_i log(p^1_i / p^0_i)).
//
// fastchess finds p^j numerically to about 1e-4; the code finds it to the
// last bits. These tests check the result against the definition itself:
// the frequencies it finds satisfy the constraint and are the maximum (the
// Lagrange conditions hold), and the logistic case against a separate
// solution by bisection.

var pentaCases = []Penta{
	{10, 50, 300, 50, 10},     // even, many draws
	{20, 80, 310, 120, 30},    // a small edge
	{0, 3, 40, 9, 0},          // zero counts
	{5, 1, 2, 30, 60},         // a large edge
	{1, 0, 0, 0, 0},           // one pair
	{3, 12, 40, 30, 15},       //
	{100, 100, 100, 100, 100}, // flat
}

// lagrange checks that p maximizes sum(p̂ log p) subject to sum(p) = 1 and
// the normalized constraint at t: p̂_i/p_i = lambda + theta*d_i for the
// constraint's gradient d_i = a_i - t (a_i - mu)^2 / (2 sigma) (up to a
// constant), fitted by least squares over the outcomes.
func lagrange(t *testing.T, a, ph, p []float64, tt float64) {
	t.Helper()
	sum := 0.0
	for _, x := range p {
		sum += x
	}
	mu, v := meanVar(a, p)
	sigma := math.Sqrt(v)
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("the frequencies sum to %.15g", sum)
	}
	if c := (mu-0.5)/sigma - tt; math.Abs(c) > 1e-11 {
		t.Errorf("normalized score off by %g", c)
	}
	n := float64(len(a))
	d, y := make([]float64, len(a)), make([]float64, len(a))
	var md, my float64
	for i := range a {
		d[i] = a[i] - tt*(a[i]-mu)*(a[i]-mu)/(2*sigma)
		y[i] = ph[i] / p[i]
		md += d[i] / n
		my += y[i] / n
	}
	var sxy, sxx float64
	for i := range a {
		sxy += (d[i] - md) * (y[i] - my)
		sxx += (d[i] - md) * (d[i] - md)
	}
	theta := sxy / sxx
	lambda := my - theta*md
	for i := range a {
		if r := y[i] - lambda - theta*d[i]; math.Abs(r) > 1e-9*math.Max(1, math.Abs(y[i])) {
			t.Errorf("outcome %d: the Lagrange condition is off by %g", i, r)
		}
	}
}

func TestNormalizedLLRIsTheConstrainedMaximumLikelihood(t *testing.T) {
	a := []float64{0, 0.25, 0.5, 0.75, 1}
	for _, c := range pentaCases {
		ph, _ := frequencies(c[:])
		for _, elo := range []float64{0, 5, -3, 20, 200, -200} {
			tt := math.Sqrt2 * elo / nEloScale
			lagrange(t, a, ph, mleNormalized(a, ph, tt), tt)
		}
	}
}

// bisectScore is the logistic constraint's maximum found another way: the
// multiplier θ by plain bisection on (-1/(1-s), 1/s).
func bisectScore(a, ph []float64, s float64) []float64 {
	lo, hi := -1/(a[len(a)-1]-s), -1/(a[0]-s)
	for i := 0; i < 2000 && lo < hi; i++ {
		mid := (lo + hi) / 2
		f := 0.0
		for j := range a {
			f += ph[j] * (a[j] - s) / (1 + mid*(a[j]-s))
		}
		if f > 0 {
			lo = mid
		} else {
			hi = mid
		}
		if mid == lo && mid == hi {
			break
		}
	}
	p := make([]float64, len(a))
	for j := range a {
		p[j] = ph[j] / (1 + lo*(a[j]-s))
	}
	return p
}

func TestLLROfFixedCountsIsTheDefinition(t *testing.T) {
	a := []float64{0, 0.25, 0.5, 0.75, 1}
	for _, c := range pentaCases {
		ph, n := frequencies(c[:])
		// Logistic: against bisection.
		sp := SPRT{Elo0: 0, Elo1: 10, Alpha: 0.05, Beta: 0.05, Model: Logistic}
		want := 0.0
		p1, p0 := bisectScore(a, ph, ScoreOf(10)), bisectScore(a, ph, ScoreOf(0))
		for i := range a {
			want += n * ph[i] * math.Log(p1[i]/p0[i])
		}
		near(t, "logistic LLR of "+c.String(), sp.LLR(c, WDL{}), want, 1e-9)

		// Normalized: the definition from frequencies whose optimality
		// the test above checks; and the LLR's sign says which hypothesis
		// the counts favour.
		sp.Model = Normalized
		sp.Elo1 = 5
		q1, q0 := mleNormalized(a, ph, math.Sqrt2*5/nEloScale), mleNormalized(a, ph, 0)
		want = 0
		for i := range a {
			want += n * ph[i] * math.Log(q1[i]/q0[i])
		}
		got := sp.LLR(c, WDL{})
		near(t, "normalized LLR of "+c.String(), got, want, 1e-9)
		e := Pentanomial(c, 0)
		if mid := 2.5; (e.NElo > mid+1) && got <= 0 || (e.NElo < mid-1) && got >= 0 {
			t.Errorf("%s: nElo %.2f but LLR %.4f", c, e.NElo, got)
		}
	}
	// Near the hypotheses the LLR is what fastchess's earlier closed form
	// gives, 0.5 N log(v0/v1) with v_j the variance of a around the score
	// H_j implies; far from them that form is an approximation only.
	c := Penta{100, 420, 1010, 440, 110}
	ph, n := frequencies(c[:])
	_, v := meanVar(a, ph)
	sp := SPRT{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05, Model: Normalized}
	s0, s1 := 0.5, 0.5+5*math.Sqrt(2*v)/nEloScale
	var v0, v1 float64
	for i := range a {
		v0 += ph[i] * (a[i] - s0) * (a[i] - s0)
		v1 += ph[i] * (a[i] - s1) * (a[i] - s1)
	}
	closed := 0.5 * n * math.Log(v0/v1)
	if got := sp.LLR(c, WDL{}); math.Abs(got-closed) > 0.02*math.Abs(closed)+1e-3 {
		t.Errorf("LLR %.6f, the closed form %.6f", got, closed)
	}
}

func TestSPRTBoundsAndDecisions(t *testing.T) {
	sp := DefaultSPRT()
	lo, hi := sp.Bounds()
	near(t, "lower", lo, -math.Log(19), 1e-12)
	near(t, "upper", hi, math.Log(19), 1e-12)
	if sp.Decide(2.95) != AcceptH1 || sp.Decide(-2.95) != AcceptH0 || sp.Decide(0) != Continue {
		t.Error("decisions")
	}
	if sp.LLR(Penta{}, WDL{}) != 0 {
		t.Error("no pair, no evidence")
	}
	// A bot that wins every pair moves towards H1 (zero counts taken as
	// 0.001), rather than standing still: elo1 = 5 normalized Elo is
	// decided after 147 such pairs.
	prev := 0.0
	for n := 10; n <= 200; n += 10 {
		llr := sp.LLR(Penta{0, 0, 0, 0, n}, WDL{W: 2 * n})
		if llr <= prev {
			t.Errorf("%d pairs won: LLR %.3f, after %d it was %.3f", n, llr, n-10, prev)
		}
		prev = llr
	}
	if sp.Decide(prev) != AcceptH1 || sp.Decide(sp.LLR(Penta{0, 0, 0, 0, 140}, WDL{W: 280})) != Continue {
		t.Errorf("200 pairs won: LLR %.3f", prev)
	}
	// Bayesian uses the games.
	b := SPRT{Elo0: 0, Elo1: 10, Alpha: 0.05, Beta: 0.05, Model: Bayesian}
	if b.LLR(Penta{}, WDL{W: 600, D: 300, L: 400}) <= hi || b.LLR(Penta{}, WDL{W: 10}) != 0 {
		t.Error("bayesian")
	}
}

func TestParseSPRT(t *testing.T) {
	sp, err := ParseSPRT("elo0=0,elo1=5,alpha=0.05,beta=0.1")
	if err != nil || sp != (SPRT{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.1, Model: Normalized}) {
		t.Errorf("%+v %v", sp, err)
	}
	if sp, err := ParseSPRT("elo1=10, model=logistic"); err != nil || sp.Elo1 != 10 || sp.Model != Logistic {
		t.Errorf("%+v %v", sp, err)
	}
	for s, want := range map[string]string{
		"elo0=5,elo1=5":       "less than",
		"alpha=1":             "between 0 and 1",
		"alpha=0.6,beta=0.5":  "less than 1",
		"model=bradley-terry": "model",
		"elo2=3":              "unknown parameter",
		"elo1":                "NAME=VALUE",
		"elo1=NaN":            "a number",
		"elo1=300":            "within ±200",
	} {
		if _, err := ParseSPRT(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
}

// game draws one game's points for a bot with a true logistic Elo edge of
// elo and draw probability draw (draws take equally from wins and losses).
func game(r *rand.Rand, elo, draw float64) float64 {
	s := ScoreOf(elo)
	win := s - draw/2
	switch u := r.Float64(); {
	case u < win:
		return 1
	case u < win+draw:
		return 0.5
	}
	return 0
}

// run plays pairs until the test decides (or max pairs) and says what it
// decided.
func run(r *rand.Rand, sp SPRT, elo, draw float64, max int) Decision {
	var p Penta
	var c WDL
	for i := 0; i < max; i++ {
		a, b := game(r, elo, draw), game(r, elo, draw)
		p.Add(a, b)
		c.Add(a)
		c.Add(b)
		if d := sp.Decide(sp.LLR(p, c)); d != Continue {
			return d
		}
	}
	return Continue
}

// A simulated stream of pairs from a known Elo difference: at elo0 the test
// accepts H1 at most about alpha of the time, at elo1 at least about 1-beta
// (Wald's bounds hold up to the overshoot, which makes errors rarer). 3
// standard errors of the estimated rate are allowed.
func TestSimulatedMatchesErrAtTheRatesAllowed(t *testing.T) {
	runs := 1500
	if testing.Short() {
		runs = 300
	}
	r := rand.New(rand.NewPCG(25, 1))
	slack := func(p float64) float64 { return 3 * math.Sqrt(p*(1-p)/float64(runs)) }
	for _, model := range []string{Logistic, Normalized} {
		sp := SPRT{Elo0: 0, Elo1: 40, Alpha: 0.05, Beta: 0.05, Model: model}
		const draw, edge = 0.3, 40.0
		if model == Normalized {
			// The normalized Elo of pairs of games of a 40 Elo edge at
			// this draw ratio: the hypothesis the simulation makes true.
			var x, p []float64
			s := ScoreOf(edge)
			g := []float64{s - draw/2, draw, 1 - s - draw/2} // win, draw, loss
			pts := []float64{1, 0.5, 0}
			for i := range g {
				for j := range g {
					x = append(x, (pts[i]+pts[j])/2)
					p = append(p, g[i]*g[j])
				}
			}
			mu, v := meanVar(x, p)
			sp.Elo1 = (mu - 0.5) / math.Sqrt(2*v) * nEloScale
		}
		falseH1, trueH1, undecided := 0, 0, 0
		for i := 0; i < runs; i++ {
			if run(r, sp, 0, draw, 20000) == AcceptH1 {
				falseH1++
			}
			switch run(r, sp, edge, draw, 20000) {
			case AcceptH1:
				trueH1++
			case Continue:
				undecided++
			}
		}
		fp, power := float64(falseH1)/float64(runs), float64(trueH1)/float64(runs)
		t.Logf("%s (elo1 %.2f): H1 accepted at elo0 %.3f, at elo1 %.3f, undecided %d", model, sp.Elo1, fp, power, undecided)
		if fp > sp.Alpha+slack(sp.Alpha) {
			t.Errorf("%s: H1 accepted %.3f of the time at elo0, alpha is %.2f", model, fp, sp.Alpha)
		}
		if power < 1-sp.Beta-slack(sp.Beta) {
			t.Errorf("%s: H1 accepted %.3f of the time at elo1, 1-beta is %.2f", model, power, 1-sp.Beta)
		}
	}
}
