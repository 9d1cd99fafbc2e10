package web

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
)

// TestTheRatingPlotIsLaidOutFromTheHistory: one point per pair, the band
// twice as many, higher ratings drawn higher, a mark where the submission
// changed, every point inside the plot area.
func TestTheRatingPlotIsLaidOutFromTheHistory(t *testing.T) {
	if newRatingPlot(nil) != nil {
		t.Error("a plot without a rated pair")
	}
	pts := []event.RatingPoint{{Pair: 1, Submission: 1, Rating: 1500, Deviation: 350}, {Pair: 2, Submission: 1, Rating: 1620, Deviation: 250},
		{Pair: 3, Submission: 2, Rating: 1700, Deviation: 200}, {Pair: 4, Submission: 2, Rating: 1650, Deviation: 120}}
	p := newRatingPlot(pts)
	xy := func(list string) [][2]float64 {
		var out [][2]float64
		for _, f := range strings.Fields(list) {
			a, b, _ := strings.Cut(f, ",")
			x, err1 := strconv.ParseFloat(a, 64)
			y, err2 := strconv.ParseFloat(b, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("point %q", f)
			}
			out = append(out, [2]float64{x, y})
		}
		return out
	}
	line, band := xy(p.Line), xy(p.Band)
	if len(line) != 4 || len(band) != 8 {
		t.Fatalf("%d points in the line and %d in the band, want 4 and 8", len(line), len(band))
	}
	for _, pt := range append(line, band...) {
		if pt[0] < p.Left || pt[0] > p.Left+p.PW || pt[1] < p.Top || pt[1] > p.Top+p.PH {
			t.Errorf("point %v outside the plot area", pt)
		}
	}
	if !(line[2][1] < line[1][1] && line[1][1] < line[0][1] && line[3][1] > line[2][1]) {
		t.Errorf("heights %v do not follow the ratings 1500, 1620, 1700, 1650", line)
	}
	if len(p.Versions) != 1 || math.Abs(p.Versions[0]-line[2][0]) > 0.05 { // the line's points are written to 0.1
		t.Errorf("version marks at %v, want one at the third pair (%v)", p.Versions, line[2][0])
	}
	if len(p.Ticks) < 2 || p.Ticks[0].Label != "1100" {
		t.Errorf("ticks %+v, want the axis from 1100 (1500-350 rounded down)", p.Ticks)
	}
	// Both axes say what they measure, outside the plot area and inside
	// the picture.
	if p.XLabel != "Rated pairs, oldest first (1 to 4)" || p.YLabel == "" {
		t.Errorf("axis labels %q and %q", p.XLabel, p.YLabel)
	}
	if x, y := p.XLabelAt[0], p.XLabelAt[1]; y <= p.Top+p.PH || y > p.H || x < p.Left || x > p.Left+p.PW {
		t.Errorf("the x axis' label at %v, outside the room under the plot", p.XLabelAt)
	}
	if x, y := p.YLabelAt[0], p.YLabelAt[1]; x <= 0 || x >= p.Left-30 || y < p.Top || y > p.Top+p.PH {
		t.Errorf("the y axis' label at %v, in the ticks' way or outside the picture", p.YLabelAt)
	}
}

// A thinned history is drawn where its pairs stand: the first at the left
// edge, the last at the right, one in between at its share of the way.
func TestARatingPlotPlacesEachPointByItsPair(t *testing.T) {
	p := newRatingPlot([]event.RatingPoint{{Pair: 1, Rating: 1500, Deviation: 100}, {Pair: 50, Rating: 1500, Deviation: 100}, {Pair: 100, Rating: 1500, Deviation: 100}})
	var xs []float64
	for _, f := range strings.Fields(p.Line) {
		a, _, _ := strings.Cut(f, ",")
		x, err := strconv.ParseFloat(a, 64)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	want := []float64{p.Left, p.Left + p.PW*49/99, p.Left + p.PW}
	for i := range want {
		if len(xs) != 3 || math.Abs(xs[i]-want[i]) > 0.05 {
			t.Fatalf("points at x %v, want %v", xs, want)
		}
	}
	if p.Pairs != 100 || p.XLabel != "Rated pairs, oldest first (1 to 100)" {
		t.Errorf("a history of 100 pairs drawn as %d: %q", p.Pairs, p.XLabel)
	}
}

// A team's hundreds of pairs are drawn as about 200 points spread evenly,
// the first, the last and each change of version among them, each where
// its pair stands.
func TestARatingPlotOfManyPairsIsThinnedEvenly(t *testing.T) {
	sub := func(pair int) int64 { // versions change at pairs 300, 301 and 777
		switch {
		case pair < 300:
			return 1
		case pair == 300:
			return 2
		case pair < 777:
			return 3
		}
		return 4
	}
	var pts []event.RatingPoint
	for pair := 1; pair <= 1000; pair++ {
		pts = append(pts, event.RatingPoint{Pair: pair, Submission: sub(pair), Rating: 1000 + float64(pair), Deviation: 50})
	}
	kept := thinned(pts, ratingPlotPoints)
	if len(kept) < ratingPlotPoints || len(kept) > ratingPlotPoints+5 {
		t.Errorf("%d points of 1,000 pairs, want about %d", len(kept), ratingPlotPoints)
	}
	seen := map[int]bool{}
	for i, p := range kept {
		seen[p.Pair] = true
		if p != pts[p.Pair-1] {
			t.Errorf("point %+v is not pair %d's", p, p.Pair)
		}
		if i > 0 && (p.Pair <= kept[i-1].Pair || p.Pair-kept[i-1].Pair > 5) {
			t.Errorf("pairs %d then %d: not spread evenly", kept[i-1].Pair, p.Pair)
		}
	}
	for _, pair := range []int{1, 300, 301, 777, 1000} {
		if !seen[pair] {
			t.Errorf("pair %d (first, last or a change of version) is left out", pair)
		}
	}
	p := newRatingPlot(pts)
	if n := len(strings.Fields(p.Line)); n != len(kept) || len(p.Versions) != 3 || p.Pairs != 1000 || p.Last.Rating != 2000 {
		t.Errorf("the plot of 1,000 pairs: %d points, %d version marks, %d pairs, last %v", n, len(p.Versions), p.Pairs, p.Last.Rating)
	}
	if want := p.Left + p.PW*776/999; len(p.Versions) == 3 && math.Abs(p.Versions[2]-want) > 0.01 {
		t.Errorf("the last version's mark at x %v, want pair 777's %v", p.Versions[2], want)
	}
}
