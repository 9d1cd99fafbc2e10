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
	pts := []event.RatingPoint{{Submission: 1, Rating: 1500, Deviation: 350}, {Submission: 1, Rating: 1620, Deviation: 250},
		{Submission: 2, Rating: 1700, Deviation: 200}, {Submission: 2, Rating: 1650, Deviation: 120}}
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
