package stats

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// The tables' numbers, computed by hand from the definitions:
//
//	score    mu = sum(p_i x_i), variance v = sum(p_i (x_i - mu)^2)
//	Elo      -400 log10(1/mu - 1), its 95% interval at mu ± 1.95996 sqrt(v/N)
//	nElo     (mu - 1/2) / sqrt(k v) * 800/ln 10 (k games per sample)
//	LOS      games: 1/2 + erf((W-L) / sqrt(2(W+L)))/2 (cutechess-cli);
//	         pairs: Phi((mu - 1/2) / sqrt(v/N))
func TestEloIntervalAndLOSOfFixedTables(t *testing.T) {
	// 60 wins, 20 draws, 20 losses: mu = 0.7, v = 0.6*0.09 + 0.2*0.04 +
	// 0.2*0.49 = 0.16, so sqrt(v/N) = 0.04; Elo = 400 log10(7/3) = 147.19;
	// the interval is Elo(0.7 ± 0.0784) = [86.23, 218.25]; nElo = 0.2/0.4
	// * 347.44 = 173.72; LOS = 1/2 + erf(40/sqrt(160))/2.
	e := Trinomial(WDL{W: 60, D: 20, L: 20})
	near(t, "score", e.Score, 0.7, 1e-12)
	near(t, "Elo", e.Elo, 147.19071411783776, 1e-9)
	near(t, "lower", e.Lower, 86.22501520030423, 1e-9)
	near(t, "upper", e.Upper, 218.2517776410748, 1e-9)
	near(t, "nElo", e.NElo, 173.71779276130067, 1e-9)
	near(t, "nElo margin", e.NEloMargin, 68.09612345718845, 1e-9)
	near(t, "LOS", e.LOS, 0.9999961278917845, 1e-12)
	near(t, "draw ratio", e.DrawRatio, 0.2, 1e-12)

	// 31/52/17: mu = 0.57, Elo 48.96 in [2.44, 97.31], LOS 97.83%.
	e = Trinomial(WDL{W: 31, D: 52, L: 17})
	near(t, "Elo", e.Elo, 48.96256003716197, 1e-9)
	near(t, "lower", e.Lower, 2.43590781151661, 1e-9)
	near(t, "upper", e.Upper, 97.31347079901485, 1e-9)
	near(t, "LOS", e.LOS, 0.978345928594604, 1e-12)
	near(t, "draw ratio", e.DrawRatio, 0.52, 1e-12)

	// 100 pairs [3, 12, 40, 30, 15]: mu = (12*0.25 + 40*0.5 + 30*0.75 +
	// 15)/100 = 0.605, Elo 74.06 in [39.71, 109.91], nElo 105.11 ±
	// 48.15, LOS Phi(0.105 / sqrt(v/100)).
	p := Penta{3, 12, 40, 30, 15}
	e = Pentanomial(p, 50)
	near(t, "score", e.Score, 0.605, 1e-12)
	near(t, "Elo", e.Elo, 74.06331161040345, 1e-9)
	near(t, "lower", e.Lower, 39.71085619659871, 1e-9)
	near(t, "upper", e.Upper, 109.9094248564319, 1e-9)
	near(t, "nElo", e.NElo, 105.11391097628399, 1e-9)
	near(t, "nElo margin", e.NEloMargin, 48.15123066909428, 1e-9)
	near(t, "LOS", e.LOS, 0.9999905960457521, 1e-12)
	near(t, "draw ratio", e.DrawRatio, 0.25, 1e-12)
	if p.String() != "[3, 12, 40, 30, 15]" || p.Pairs() != 100 {
		t.Errorf("%s, %d pairs", p, p.Pairs())
	}
}

func TestEveryGameWonOrLostIsAnInfiniteEloNotAPanic(t *testing.T) {
	e := Trinomial(WDL{W: 10})
	if !math.IsInf(e.Elo, 1) || e.LOS < 0.99 {
		t.Errorf("%+v", e)
	}
	e = Pentanomial(Penta{0, 0, 0, 0, 7}, 0)
	if !math.IsInf(e.Elo, 1) || e.LOS != 1 {
		t.Errorf("%+v", e)
	}
	e = Pentanomial(Penta{0, 0, 5, 0, 0}, 10)
	if e.Elo != 0 || e.LOS != 0.5 || e.DrawRatio != 1 {
		t.Errorf("%+v", e)
	}
	if e := Trinomial(WDL{}); !math.IsNaN(e.Score) {
		t.Errorf("no game: %+v", e)
	}
	_ = e.String() // printing an infinite Elo does not fail
}

func TestPairsAreCountedByTheirPoints(t *testing.T) {
	var p Penta
	var c WDL
	for _, pair := range [][2]float64{{1, 1}, {1, 0}, {0.5, 0.5}, {0, 0.5}, {1, 0.5}, {0, 0}} {
		p.Add(pair[0], pair[1])
		c.Add(pair[0])
		c.Add(pair[1])
	}
	if p != (Penta{1, 1, 2, 1, 1}) || c != (WDL{W: 4, D: 4, L: 4}) {
		t.Errorf("%v %+v", p, c)
	}
}
