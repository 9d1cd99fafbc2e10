package rating

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The worked example of Glickman's paper: a player at 1500/200/0.06 beats
// 1400/30, loses to 1550/100 and to 1700/300, with τ = 0.5.
func TestThePapersWorkedExample(t *testing.T) {
	got := System{Tau: 0.5}.Update(Rating{1500, 200, 0.06}, []Result{
		{Rating{1400, 30, 0.06}, 1}, {Rating{1550, 100, 0.06}, 0}, {Rating{1700, 300, 0.06}, 0}})
	if math.Abs(got.Rating-1464.06) > 0.01 || math.Abs(got.Deviation-151.52) > 0.01 || math.Abs(got.Volatility-0.05999) > 0.00001 {
		t.Errorf("got %.2f/%.2f/%.5f, want 1464.06/151.52/0.05999", got.Rating, got.Deviation, got.Volatility)
	}
}

func TestADrawBetweenEqualsMovesNoRating(t *testing.T) {
	a, b := Start(), Start()
	na := Default.Update(a, []Result{{b, 0.5}})
	nb := Default.Update(b, []Result{{a, 0.5}})
	if math.Abs(na.Rating-1500) > 1e-9 || math.Abs(nb.Rating-1500) > 1e-9 || na.Deviation >= a.Deviation {
		t.Errorf("a draw of equals: %+v %+v", na, nb)
	}
	// A draw against a stronger player raises the rating; a loss lowers it.
	strong := Rating{1800, 50, 0.06}
	if d := Default.Update(a, []Result{{strong, 0.5}}); d.Rating <= 1500 {
		t.Errorf("a draw against a stronger player: %+v", d)
	}
	if l := Default.Update(a, []Result{{strong, 0}}); l.Rating >= 1500 {
		t.Errorf("a loss: %+v", l)
	}
}

func TestTimeAwayWidensTheDeviation(t *testing.T) {
	r := Rating{1600, 60, 0.06}
	prev := r
	for range 10 {
		next := Default.Update(prev, nil)
		if next.Deviation <= prev.Deviation || next.Rating != r.Rating {
			t.Fatalf("an idle period: %+v after %+v", next, prev)
		}
		prev = next
	}
	if reset := prev.Reset(); reset.Deviation != 350 || reset.Rating != 1600 {
		t.Errorf("reset: %+v", reset)
	}
}

// Over random streams of games ratings stay finite and a player's deviation
// shrinks while it plays.
func TestRandomStreamsStayFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for stream := range 200 {
		players := make([]Rating, 8)
		for i := range players {
			players[i] = Start()
		}
		for range 100 {
			i, j := rng.IntN(8), rng.IntN(8)
			if i == j {
				continue
			}
			s := []float64{0, 0.5, 1}[rng.IntN(3)]
			ni := Default.Update(players[i], []Result{{players[j], s}})
			nj := Default.Update(players[j], []Result{{players[i], 1 - s}})
			for _, r := range []Rating{ni, nj} {
				if math.IsNaN(r.Rating) || math.IsInf(r.Rating, 0) || math.IsNaN(r.Deviation) || r.Deviation <= 0 || r.Volatility <= 0 {
					t.Fatalf("stream %d: %+v", stream, r)
				}
			}
			if ni.Deviation > players[i].Deviation+1e-9 && players[i].Deviation < 300 {
				t.Fatalf("stream %d: a game widened the deviation %.2f -> %.2f", stream, players[i].Deviation, ni.Deviation)
			}
			players[i], players[j] = ni, nj
		}
	}
}

// BenchmarkUpdate is one game's update of one player.
func BenchmarkUpdate(b *testing.B) {
	r, o := Rating{1620, 80, 0.06}, Rating{1580, 120, 0.06}
	for b.Loop() {
		r = Default.Update(Rating{1620, 80, 0.06}, []Result{{o, 1}})
	}
	_ = r
}
