// Package rating is Glicko-2 (Glickman, "Example of the Glicko-2 system",
// 2013): a rating with its deviation and volatility per player, updated once
// per rating period from the games of that period.
//
// It is pure arithmetic: it must never read a clock, a database or a game;
// callers say what a period is and which games count (a game the host
// aborted never does).
package rating

import "math"

// scale converts between the Glicko scale (1500, 350) and Glicko-2's.
const scale = 173.7178

// Rating is one player's rating on the Glicko scale.
type Rating struct {
	Rating     float64 `json:"rating"`
	Deviation  float64 `json:"deviation"`
	Volatility float64 `json:"volatility"`
}

// Start is a new player's rating.
func Start() Rating { return Rating{Rating: 1500, Deviation: 350, Volatility: 0.06} }

// Reset is r with its deviation back to a new player's: what a player is
// known to be is kept, how sure we are of it is not (a new version of a
// bot).
func (r Rating) Reset() Rating {
	r.Deviation = Start().Deviation
	return r
}

// Result is one game of a rating period from the player's side.
type Result struct {
	Opponent Rating
	// Score is 1 for a win, 0.5 for a draw, 0 for a loss.
	Score float64
}

// System is Glicko-2 with its constant.
type System struct {
	// Tau constrains how fast volatility changes: 0.3 to 1.2, smaller is
	// steadier. The paper's example uses 0.5.
	Tau float64
}

// Default is the system with τ = 0.5.
var Default = System{Tau: 0.5}

// epsilon is the convergence tolerance of the volatility's iteration.
const epsilon = 0.000001

func g(phi float64) float64 { return 1 / math.Sqrt(1+3*phi*phi/(math.Pi*math.Pi)) }

func expected(mu, muj, phij float64) float64 { return 1 / (1 + math.Exp(-g(phij)*(mu-muj))) }

// Update is r after one rating period with these results. A period without
// games only widens the deviation.
func (s System) Update(r Rating, results []Result) Rating {
	mu := (r.Rating - 1500) / scale
	phi := r.Deviation / scale
	sigma := r.Volatility
	if len(results) == 0 {
		return Rating{Rating: r.Rating, Deviation: math.Sqrt(phi*phi+sigma*sigma) * scale, Volatility: sigma}
	}
	var vInv, sum float64
	for _, res := range results {
		muj := (res.Opponent.Rating - 1500) / scale
		phij := res.Opponent.Deviation / scale
		gj := g(phij)
		e := expected(mu, muj, phij)
		vInv += gj * gj * e * (1 - e)
		sum += gj * (res.Score - e)
	}
	v := 1 / vInv
	delta := v * sum
	sigma = s.volatility(phi, sigma, v, delta)
	phiStar := math.Sqrt(phi*phi + sigma*sigma)
	phiNew := 1 / math.Sqrt(1/(phiStar*phiStar)+1/v)
	muNew := mu + phiNew*phiNew*sum
	return Rating{Rating: muNew*scale + 1500, Deviation: phiNew * scale, Volatility: sigma}
}

// volatility is step 5 of the paper: the new volatility by the Illinois
// algorithm.
func (s System) volatility(phi, sigma, v, delta float64) float64 {
	tau := s.Tau
	a := math.Log(sigma * sigma)
	f := func(x float64) float64 {
		ex := math.Exp(x)
		d := phi*phi + v + ex
		return ex*(delta*delta-phi*phi-v-ex)/(2*d*d) - (x-a)/(tau*tau)
	}
	A := a
	var B float64
	if delta*delta > phi*phi+v {
		B = math.Log(delta*delta - phi*phi - v)
	} else {
		k := 1.0
		for f(a-k*tau) < 0 {
			k++
		}
		B = a - k*tau
	}
	fA, fB := f(A), f(B)
	for math.Abs(B-A) > epsilon {
		C := A + (A-B)*fA/(fB-fA)
		fC := f(C)
		if fC*fB <= 0 {
			A, fA = B, fB
		} else {
			fA /= 2
		}
		B, fB = C, fC
	}
	return math.Exp(A / 2)
}
