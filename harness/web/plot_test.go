package web

import (
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
	if len(p.Versions) != 1 || p.Versions[0] != line[2][0] {
		t.Errorf("version marks at %v, want one at the third pair (%v)", p.Versions, line[2][0])
	}
	if len(p.Ticks) < 2 || p.Ticks[0].Label != "1100" {
		t.Errorf("ticks %+v, want the axis from 1100 (1500-350 rounded down)", p.Ticks)
	}
}
