package web

import (
	"fmt"
	"math"
	"strconv"

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
	// Versions are the x of each pair where the submission changed, marked
	// across the plot area.
	Versions []float64
	Last     event.RatingPoint
	Pairs    int
	// XLabel and YLabel name the axes; XLabelAt and YLabelAt are where
	// they are written (the x axis' centre under the plot, the y axis'
	// centre left of its ticks, turned upright).
	XLabel, YLabel string
	// Dot is where the last point stands; Bar, for a plot of one point,
	// the top and bottom of its deviation (zero otherwise).
	Dot      [2]float64
	Bar      [2]float64
	XLabelAt [2]float64
	YLabelAt [2]float64
}

type plotTick struct {
	Y     float64
	Label string
}

// newRatingPlot lays out points (oldest first, the last the team's last
// pair, each numbered among all its pairs); nil for none.
func newRatingPlot(points []event.RatingPoint) *ratingPlot {
	if len(points) == 0 {
		return nil
	}
	last := points[len(points)-1]
	p := &ratingPlot{W: 640, H: 220, Left: 62, Top: 10, Last: last, Pairs: last.Pair}
	p.PW, p.PH = p.W-p.Left-10, p.H-p.Top-24
	p.YLabel = "Rating (± one deviation)"
	p.XLabel = fmt.Sprintf("Rated pairs, oldest first (1 to %d)", p.Pairs)
	if p.Pairs == 1 {
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
	// A point is drawn where its pair stands among all the team's.
	x := func(i int) float64 {
		if p.Pairs <= 1 {
			return p.Left + p.PW/2
		}
		return p.Left + p.PW*float64(points[i].Pair-1)/float64(p.Pairs-1)
	}
	y := func(v float64) float64 { return p.Top + p.PH*(hi-v)/(hi-lo) }
	// SVG points "x,y x,y ...", to a tenth of a pixel: the line, then the
	// band's upper edge left to right and its lower edge back.
	line, band := make([]byte, 0, 14*len(points)), make([]byte, 0, 28*len(points))
	point := func(b []byte, x, y float64) []byte {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = appendTenths(b, x)
		b = append(b, ',')
		return appendTenths(b, y)
	}
	for i, pt := range points {
		line = point(line, x(i), y(pt.Rating))
		band = point(band, x(i), y(pt.Rating+pt.Deviation))
		if i > 0 && pt.Submission != points[i-1].Submission {
			p.Versions = append(p.Versions, x(i))
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		band = point(band, x(i), y(points[i].Rating-points[i].Deviation))
	}
	p.Line, p.Band = string(line), string(band)
	// The last point is marked, and a single one drawn with its
	// deviation: a line of one point and a band of no width show nothing.
	n := len(points) - 1
	p.Dot = [2]float64{x(n), y(last.Rating)}
	if len(points) == 1 {
		p.Bar = [2]float64{y(last.Rating + last.Deviation), y(last.Rating - last.Deviation)}
	}
	step := 100.0
	for (hi-lo)/step > 5 {
		step *= 2
	}
	for v := lo; v <= hi; v += step {
		p.Ticks = append(p.Ticks, plotTick{Y: y(v), Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return p
}

// appendTenths appends v to a tenth, as strconv.AppendFloat(b, v, 'f', 1,
// 64) does, in a third of its time: a plot writes a thousand numbers.
func appendTenths(b []byte, v float64) []byte {
	t := int64(math.Round(v * 10))
	if t < 0 {
		b, t = append(b, '-'), -t
	}
	b = strconv.AppendInt(b, t/10, 10)
	return append(b, '.', byte('0'+t%10))
}

// Bottom is the plot area's lower edge, its x axis: where a version's
// mark ends, clear of the axis' label.
func (p *ratingPlot) Bottom() float64 { return p.Top + p.PH }

// Single says whether the plot is of one point, drawn with its deviation
// (Bar): a line of one point and a band of no width show nothing.
func (p *ratingPlot) Single() bool { return p.Bar != ([2]float64{}) }
