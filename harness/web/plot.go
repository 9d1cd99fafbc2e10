package web

import (
	"fmt"
	"math"
	"strings"

	"github.com/arenabots/arena/harness/event"
)

// ratingPlot is a team's rating after each of its ladder pairs, laid out
// for the page to draw as SVG (no script, nothing from elsewhere): the
// rating's line, a band of one deviation either side, and a mark where a
// new submission took over.
type ratingPlot struct {
	W, H       float64
	Left, Top  float64 // the plot area's corner
	PW, PH     float64 // the plot area's size
	Line, Band string  // SVG points
	// Ticks are the rating axis' labels and their heights.
	Ticks []plotTick
	// Versions are the x of each pair where the submission changed.
	Versions []float64
	Last     event.RatingPoint
	Pairs    int
	// XLabel and YLabel name the axes; XLabelAt and YLabelAt are where
	// they are written (the x axis' centre under the plot, the y axis'
	// centre left of its ticks, turned upright).
	XLabel, YLabel string
	XLabelAt       [2]float64
	YLabelAt       [2]float64
}

type plotTick struct {
	Y     float64
	Label string
}

// newRatingPlot lays out points (oldest first); nil for none.
func newRatingPlot(points []event.RatingPoint) *ratingPlot {
	if len(points) == 0 {
		return nil
	}
	p := &ratingPlot{W: 640, H: 220, Left: 62, Top: 10, Last: points[len(points)-1], Pairs: len(points)}
	p.PW, p.PH = p.W-p.Left-10, p.H-p.Top-24
	p.YLabel = "Rating (± one deviation)"
	p.XLabel = fmt.Sprintf("Rated pairs, oldest first (1 to %d)", len(points))
	if len(points) == 1 {
		p.XLabel = "The first rated pair"
	}
	p.XLabelAt = [2]float64{p.Left + p.PW/2, p.H - 6}
	p.YLabelAt = [2]float64{12, p.Top + p.PH/2}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		lo, hi = math.Min(lo, pt.Rating-pt.Deviation), math.Max(hi, pt.Rating+pt.Deviation)
	}
	// Round the axis out to hundreds.
	lo, hi = math.Floor(lo/100)*100, math.Ceil(hi/100)*100
	if hi-lo < 100 {
		hi = lo + 100
	}
	x := func(i int) float64 {
		if len(points) == 1 {
			return p.Left + p.PW/2
		}
		return p.Left + p.PW*float64(i)/float64(len(points)-1)
	}
	y := func(v float64) float64 { return p.Top + p.PH*(hi-v)/(hi-lo) }
	var line, upper, lower []string
	for i, pt := range points {
		line = append(line, fmt.Sprintf("%.1f,%.1f", x(i), y(pt.Rating)))
		upper = append(upper, fmt.Sprintf("%.1f,%.1f", x(i), y(pt.Rating+pt.Deviation)))
		lower = append(lower, fmt.Sprintf("%.1f,%.1f", x(len(points)-1-i), y(points[len(points)-1-i].Rating-points[len(points)-1-i].Deviation)))
		if i > 0 && pt.Submission != points[i-1].Submission {
			p.Versions = append(p.Versions, x(i))
		}
	}
	p.Line = strings.Join(line, " ")
	p.Band = strings.Join(append(upper, lower...), " ")
	step := 100.0
	for (hi-lo)/step > 5 {
		step *= 2
	}
	for v := lo; v <= hi; v += step {
		p.Ticks = append(p.Ticks, plotTick{Y: y(v), Label: fmt.Sprintf("%.0f", v)})
	}
	return p
}
