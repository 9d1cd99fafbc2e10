package web

import (
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
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

// A history of 1,000 pairs, thinned by the store to one point in five,
// is drawn as those points, each where its pair stands, with a mark at
// each change of version and the last pair's rating.
func TestARatingPlotOfManyPairsDrawsThePointsItIsGiven(t *testing.T) {
	var pts []event.RatingPoint
	for pair := 1; pair <= 1000; pair += 5 {
		sub := int64(1 + pair/300) // versions change at pairs 301, 601 and 901
		pts = append(pts, event.RatingPoint{Pair: pair, Submission: sub, Rating: 1000 + float64(pair), Deviation: 50})
	}
	pts = append(pts, event.RatingPoint{Pair: 1000, Submission: 4, Rating: 2000, Deviation: 50})
	p := newRatingPlot(pts)
	if n := len(strings.Fields(p.Line)); n != len(pts) || len(p.Versions) != 3 || p.Pairs != 1000 || p.Last.Rating != 2000 {
		t.Errorf("the plot of 1,000 pairs: %d points of %d, %d version marks, %d pairs, last %v", n, len(pts), len(p.Versions), p.Pairs, p.Last.Rating)
	}
}

// The plot is drawn as well-formed SVG holding its line, its band, a mark
// per version, a label per tick and its axes' labels, escaped.
func TestARatingPlotIsDrawnAsSVG(t *testing.T) {
	p := newRatingPlot([]event.RatingPoint{{Pair: 1, Submission: 1, Rating: 1500, Deviation: 350}, {Pair: 2, Submission: 2, Rating: 1620, Deviation: 250}})
	p.XLabel = `pairs <&> "quoted"`
	svg := plotSVG(t, p)
	count := map[string]int{}
	var texts []string
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			count[tok.Name.Local]++
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
				if a.Name.Local == "points" && a.Value != p.Line && a.Value != p.Band {
					t.Errorf("points %q are neither the line nor the band", a.Value)
				}
			}
			// A version's mark ends at the axis, clear of the axis' label.
			if y2, err := strconv.ParseFloat(attrs["y2"], 64); attrs["stroke-dasharray"] != "" && (err != nil || y2 > p.Top+p.PH+0.05) {
				t.Errorf("a version's mark down to y %q, past the axis at %v", attrs["y2"], p.Top+p.PH)
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	if count["svg"] != 1 || count["polyline"] != 1 || count["polygon"] != 1 || count["line"] != len(p.Ticks)+len(p.Versions) || count["text"] != len(p.Ticks)+2 || count["circle"] != 1 {
		t.Errorf("drawn as %v, want one line per tick (%d) and version (%d)", count, len(p.Ticks), len(p.Versions))
	}
	if !slices.Contains(texts, p.XLabel) || !slices.Contains(texts, p.YLabel) || !slices.Contains(texts, p.Ticks[0].Label) {
		t.Errorf("texts %q lack the axes' labels or the ticks'", texts)
	}
}

// A plot of one rated pair draws its point and its deviation: a line of
// one point and a band of no width would show nothing.
func TestARatingPlotOfOnePairDrawsItsPoint(t *testing.T) {
	p := newRatingPlot([]event.RatingPoint{{Pair: 1, Submission: 1, Rating: 1580, Deviation: 290}})
	svg := plotSVG(t, p)
	dot := regexp.MustCompile(`<circle class="last" cx="([0-9.]+)" cy="([0-9.]+)"`).FindStringSubmatch(svg)
	bar := regexp.MustCompile(`<line class="deviation" x1="[0-9.]+" x2="[0-9.]+" y1="([0-9.]+)" y2="([0-9.]+)"`).FindStringSubmatch(svg)
	if dot == nil || bar == nil {
		t.Fatalf("the plot of one pair draws no point or no deviation:\n%s", svg)
	}
	top, _ := strconv.ParseFloat(bar[1], 64)
	bottom, _ := strconv.ParseFloat(bar[2], 64)
	cy, _ := strconv.ParseFloat(dot[2], 64)
	if !(top < cy && cy < bottom) || bottom-top < 20 {
		t.Errorf("the point at y %v, its deviation from %v to %v", cy, top, bottom)
	}
	if two := plotSVG(t, newRatingPlot([]event.RatingPoint{{Pair: 1, Rating: 1500, Deviation: 350}, {Pair: 2, Rating: 1600, Deviation: 300}})); strings.Contains(two, `class="deviation"`) {
		t.Error("a plot of two pairs draws a single point's deviation")
	}
}

// A number in a plot is written to a tenth, as strconv writes it.
func TestAppendTenthsWritesAsStrconvDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 100000 {
		v := (r.Float64() - 0.3) * 3000
		if i < 100 {
			v = float64(i-50) / 10 // tenths themselves, and zero
		}
		got, want := string(appendTenths(nil, v)), strconv.FormatFloat(v, 'f', 1, 64)
		if got != want && want != "-0.0" {
			t.Fatalf("%v written %q, want %q", v, got, want)
		}
	}
}

// plotSVG is p drawn as the team's page draws it.
func plotSVG(t *testing.T, p *ratingPlot) string {
	t.Helper()
	return drawRow(t, "team", "plot", p)
}
