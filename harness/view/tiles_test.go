package view

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
)

// tilesMap is the terrain of the test match: terminators and amplifiers
// spread over a 6x6 board.
const tilesMap = `0,1,2,3,4,5
E,E,T,E,E,E
E,T,E,A,T,E
E,E,E,E,E,E
T,E,A,E,T,E
E,E,E,T,E,E
E,A,E,E,E,T
`

// tilesMatch plays a match of tiles on tilesMap through the referee, both
// sides answering with the scripted policy, and writes its transcript as a
// match does. It returns the match directory, the true state at each step
// (the start, then after each turn) and the records of the turns.
func tilesMatch(t *testing.T) (string, []*tiles.State, []transcript.Turn) {
	t.Helper()
	opts := map[string]string{"map": tilesMap, "turns": "64", "k": "10"}
	names := [2]string{"scripted-w", "scripted-b"}
	ref, err := referee.New(referee.Config{Game: tiles.Game{}, Rules: opts, Seed: 11,
		White: transcript.BotRef{Name: names[0], SHA256: "00"}, Black: transcript.BotRef{Name: names[1], SHA256: "01"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	os.MkdirAll(dir, 0o755)
	w, err := transcript.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := transcript.Header{Format: transcript.Format, Game: "tiles", Rules: opts, Seed: 11,
		White: transcript.Bot{Name: names[0], SHA256: "00"}, Black: transcript.Bot{Name: names[1], SHA256: "01"},
		OnFault: string(referee.Forfeit), Protocol: "lines", TimeControl: ref.TimeControl(), Opening: transcript.LinesOf(ref.Opening())}
	if err := w.Append(transcript.TypeHeader, h); err != nil {
		t.Fatal(err)
	}
	states := []*tiles.State{ref.State().Clone().(*tiles.State)}
	var recs []transcript.Turn
	rng := rand.New(rand.NewPCG(5, 5))
	for !ref.Over() {
		a, err := ref.Next()
		if err != nil {
			t.Fatal(err)
		}
		line := scripted(rng, ref.State().(*tiles.State))
		step, err := ref.Settle(a, referee.Facts{Exchange: sandbox.Exchange{Line: line, Wall: time.Duration(1+rng.IntN(900)) * time.Microsecond}})
		if err != nil {
			t.Fatal(err)
		}
		if step.Record.Verdict != string(rules.OK) {
			t.Fatalf("ply %d: %q judged %s: %s", a.Ply, line, step.Record.Verdict, step.Record.Reason)
		}
		if err := w.Append(transcript.TypeTurn, step.Record); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, step.Record)
		states = append(states, ref.State().Clone().(*tiles.State))
	}
	if err := w.Append(transcript.TypeFooter, transcript.Footer{Result: ref.Result(), FinishedAt: "2025-01-01T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, states, recs
}

// scripted picks a legal line, seeing the whole board: DESTROY on an
// opponent's tail, now and then INFO on another opponent tile, else mostly a
// step and a LAY.
func scripted(rng *rand.Rand, st *tiles.State) string {
	me := st.ToMove()
	r, c := st.Pos(me)
	onTail := false
	for _, cells := range st.Chains(me.Other()) {
		onTail = onTail || cells[0] == [2]int{r, c}
	}
	var lay, destroy, info, other []rules.Move
	for _, m := range st.LegalMoves() {
		s := string(st.EncodeMove(m))
		switch {
		case s == "DESTROY":
			destroy = append(destroy, m)
		case s == "INFO":
			info = append(info, m)
		case strings.HasPrefix(s, "MOVE") && strings.HasSuffix(s, "LAY"):
			lay = append(lay, m)
		default:
			other = append(other, m)
		}
	}
	pick := func(ms []rules.Move) string { return string(st.EncodeMove(ms[rng.IntN(len(ms))])) }
	switch x := rng.IntN(10); {
	case len(destroy) > 0 && onTail:
		return pick(destroy)
	case len(info) > 0 && x < 2:
		return pick(info)
	case len(lay) > 0 && x < 9:
		return pick(lay)
	case len(other) > 0:
		return pick(other)
	}
	return pick(lay)
}

// tileFacts is what a test expects of one square of a tiles frame, from the
// state's accessors alone.
type tileFacts struct {
	owner   int // -1 none
	chain   int
	index   int // 1-based in its chain
	chainOf [][2]int
}

func tileGrid(s *tiles.State) [][]tileFacts {
	n := s.N()
	g := make([][]tileFacts, n)
	for r := range g {
		g[r] = make([]tileFacts, n)
		for c := range g[r] {
			g[r][c].owner = -1
		}
	}
	for _, side := range rules.Sides {
		for k, cells := range s.Chains(side) {
			for j, rc := range cells {
				g[rc[0]-1][rc[1]-1] = tileFacts{owner: int(side), chain: k, index: j + 1, chainOf: cells}
			}
		}
	}
	return g
}

// expectedDetail is each square as the page's self-test reports it
// (piece|owner|label|ground|ring|links|players) for the viewer: the truth
// (NoSide), or what that side knows.
func expectedDetail(s *tiles.State, viewer rules.Side) [][]string {
	n := s.N()
	g := tileGrid(s)
	m := s.Map()
	out := make([][]string, n)
	for r := range n {
		out[r] = make([]string, n)
		for c := range n {
			x := g[r][c]
			seen := x.owner >= 0 && (viewer == rules.NoSide || x.owner == int(viewer) || s.Knows(viewer, r+1, c+1))
			readable := seen && (viewer == rules.NoSide || x.owner == int(viewer))
			piece, owner, label, ground, ring, links, players := "", "-1", "", "", "", "", ""
			if seen {
				piece, owner = map[int]string{0: "W", 1: "b"}[x.owner], strconv.Itoa(x.owner)
			}
			orig, now := m.At(r+1, c+1), s.Terrain(r+1, c+1)
			switch {
			case now == tiles.Amplifier:
				ground = "A"
			case now == tiles.Terminator && viewer == rules.NoSide:
				ground = "T"
			case orig == tiles.Terminator && now == tiles.Empty && (viewer == rules.NoSide || (seen && x.owner == int(viewer))):
				ground = "t"
			}
			if !seen && (ground == "A" || ground == "T") {
				piece = ground
			}
			if readable {
				label = strconv.Itoa(x.index)
				if x.index == 1 {
					ring = "R"
				}
				var dirs []string
				for _, j := range []int{x.index - 2, x.index} { // the tiles before and after
					if j < 0 || j >= len(x.chainOf) {
						continue
					}
					q := x.chainOf[j]
					switch [2]int{q[0] - 1 - r, q[1] - 1 - c} {
					case [2]int{0, 1}:
						dirs = append(dirs, "r")
					case [2]int{0, -1}:
						dirs = append(dirs, "l")
					case [2]int{1, 0}:
						dirs = append(dirs, "d")
					case [2]int{-1, 0}:
						dirs = append(dirs, "u")
					}
				}
				slices.Sort(dirs)
				links = strings.Join(dirs, "")
			}
			for _, side := range rules.Sides {
				if pr, pc := s.Pos(side); pr == r+1 && pc == c+1 && (viewer == rules.NoSide || viewer == side) {
					players += side.String()[:1]
				}
			}
			out[r][c] = strings.Join([]string{piece, owner, label, ground, ring, links, players}, "|")
		}
	}
	return out
}

func TestBuildOfATilesMatch(t *testing.T) {
	t.Parallel()
	dir, states, recs := tilesMatch(t)
	d, err := Build(dir)
	if err != nil || !d.Consistent {
		t.Fatalf("%v %s", err, d.Problem)
	}
	if len(d.Steps) != len(states) || !d.Lines || d.Opening == nil || d.Opening.White[0] != "START" || d.Opening.Black[1] != "SIZE 6" {
		t.Fatalf("%d steps for %d states, lines %v, opening %+v", len(d.Steps), len(states), d.Lines, d.Opening)
	}
	for i, st := range states {
		f := d.Steps[i].Frames
		if p := st.Points(); d.Steps[i].Points == nil || *d.Steps[i].Points != p {
			t.Fatalf("step %d: points %v, the state's %v", i, d.Steps[i].Points, p)
		}
		if f["true"].Base != 1 {
			t.Fatalf("step %d: the true frame counts from %d", i, f["true"].Base)
		}
		if i == 0 {
			continue
		}
		s, r := d.Steps[i], recs[i-1]
		if s.Question != "TURN" || s.Answer == nil || *s.Answer != *r.Answer || !sameLines(s.After, r.After) || !sameLines(s.Before, r.Before) {
			t.Fatalf("step %d: lines %q %v %+v %+v, recorded %+v", i, s.Question, s.Answer, s.Before, s.After, r)
		}
	}
	// A legend is given where it changes only, and the first step has each.
	for _, m := range []string{"true", "white", "black"} {
		if len(d.Steps[0].Frames[m].Legend) == 0 || d.Steps[1].Frames[m].Legend != nil {
			t.Fatalf("%s's legend: first %v, then %v", m, d.Steps[0].Frames[m].Legend, d.Steps[1].Frames[m].Legend)
		}
	}
	// The games keeping no points and speaking no lines carry none of it.
	cc, err := Build(greedyMatch(t))
	if err != nil {
		t.Fatal(err)
	}
	if cc.Lines || cc.Opening != nil || cc.Steps[1].Question != "" || cc.Steps[1].Points != nil || cc.Steps[1].Frames["true"].Owners != nil {
		t.Fatalf("Code Clash steps carry tiles' data: %+v", cc.Steps[1])
	}
}

func sameLines(a, b *transcript.Lines) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// pageReport is what the page's self-test reports.
type pageReport struct {
	Steps  int
	Shown  map[string][][]string
	Detail map[string][][]string
	Legend map[string][]string
	Lines  map[string][]string
	Points map[string]*string
	Chart  map[string]struct {
		Cursor float64
		Key    string
		Lines  []string
	}
	AfterKeys      int
	Changed        bool
	ModeAfterClick string
	Result         string
	// The list of turns: as the page opened, the steps at which stepping
	// through the match left the current row out of sight, at the last step
	// and back at the start.
	Opened, End, Home turnList
	OutOfSight        []int
}

// turnList is where the list of turns stands: the current step, the row
// marked current, whether that row is wholly in sight, how far the list is
// scrolled.
type turnList struct {
	Step, Marked int
	InSight      bool
	ScrollTop    float64
}

func selfTest(t *testing.T, browser, file, fragment string) pageReport {
	t.Helper()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	dom, err := exec.Command(browser, append(args, "--dump-dom", "file://"+file+"#"+fragment)...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<pre id="selftest">([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil || len(m[1]) == 0 {
		t.Fatalf("the page did not report its self-test; DOM:\n%.2000s", dom)
	}
	var got pageReport
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTilesViewerInARealBrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	dir, states, recs := tilesMatch(t)
	d, err := Build(dir)
	if err != nil || !d.Consistent {
		t.Fatalf("%v %s", err, d.Problem)
	}
	page, _ := HTML(d)
	file := filepath.Join(t.TempDir(), "match.html")
	os.WriteFile(file, page, 0o644)

	// The steps worth a look: the first where a terminator was used up, where
	// a bot was told of the opponent's tiles, where one met an unknown tile,
	// where a chain was destroyed; and every ninth.
	want := map[string]int{}
	for i, r := range recs {
		all := strings.Join(append(append(r.Before.Sides()[0], r.Before.Sides()[1]...), append(r.After.Sides()[0], r.After.Sides()[1]...)...), "\n")
		for _, ev := range []string{"UPDATE TILE", "TERMINATED", "TILE\nTERMINATED", "DESTROYED", "HINT"} {
			if _, ok := want[ev]; !ok && strings.Contains(all, ev) {
				want[ev] = i + 1
			}
		}
	}
	for _, ev := range []string{"UPDATE TILE", "TERMINATED", "DESTROYED"} {
		if _, ok := want[ev]; !ok {
			t.Fatalf("the scripted match has no %s: change its seed or policy", ev)
		}
	}
	var extra []string
	for _, i := range want {
		extra = append(extra, strconv.Itoa(i))
	}
	for i := 9; i < len(states); i += 9 {
		extra = append(extra, strconv.Itoa(i))
	}
	// The page is opened at a ply late in the match, as a #ply=N link does.
	late := len(states) - 3
	got := selfTest(t, browser, file, "ply="+itoa(late)+"&selftest&steps="+strings.Join(extra, ","))
	if got.Steps != len(d.Steps) || got.AfterKeys != 2 || !got.Changed || got.ModeAfterClick != "black" {
		t.Fatalf("stepping and toggling do not work: %+v", got)
	}
	// The list of turns is scrolled to that ply's row, and follows the
	// current step when stepping through the match.
	if o := got.Opened; o.Step != late || o.Marked != late || !o.InSight || o.ScrollTop <= 0 {
		t.Errorf("opened at #ply=%d, the list of turns stands at %+v: want that ply's row marked, in sight, the list scrolled", late, o)
	}
	// #ply=last opens at the game's end (the event's game page links so).
	if last := selfTest(t, browser, file, "ply=last&selftest"); last.Opened.Step != len(states)-1 || last.Opened.Marked != len(states)-1 {
		t.Errorf("opened at #ply=last, the page stands at %+v, want step %d", last.Opened, len(states)-1)
	}
	if e, h := got.End, got.Home; len(got.OutOfSight) > 0 || e.Step != len(states)-1 || !e.InSight || h.Step != 0 || !h.InSight || h.ScrollTop != 0 {
		t.Errorf("stepping: the current row was out of sight at steps %v; at the end %+v, back at the start %+v", got.OutOfSight, e, h)
	}

	// Every square of every board shown is what the state says the viewer
	// knows: owners, indexes, tails, chains' links, terrain, positions.
	checked := 0
	differs := 0
	for key, rows := range got.Detail {
		var step int
		var mode string
		fmtSscanf(key, &step, &mode)
		viewer := map[string]rules.Side{"true": rules.NoSide, "white": rules.White, "black": rules.Black}[mode]
		exp := expectedDetail(states[step], viewer)
		if !equal(rows, exp) {
			t.Errorf("step %d, %s: the page shows\n%s\nthe state says\n%s", step, mode, grid(rows), grid(exp))
		}
		if mode != "true" && !equal(rows, got.Detail[itoa(step)+":true"]) {
			differs++
		}
		checked++
	}
	if len(got.Points) < 10 || checked != 3*len(got.Points) || differs == 0 {
		t.Fatalf("%d steps shown, %d boards compared, %d differ from the true board", len(got.Points), checked, differs)
	}

	// Concrete content: a terminator on the true board that no bot sees, a
	// used one, an amplifier, ringed tails labelled 1, a chain of three, a
	// known opponent tile shown without its index, an unknown one not shown.
	has := func(pred func(cell []string, key string) bool) bool {
		for key, rows := range got.Detail {
			for _, row := range rows {
				for _, c := range row {
					if pred(strings.Split(c, "|"), key) {
						return true
					}
				}
			}
		}
		return false
	}
	if !has(func(x []string, k string) bool { return strings.HasSuffix(k, ":true") && x[0] == "T" && x[3] == "T" }) {
		t.Error("no terminator T on the true board")
	}
	if has(func(x []string, k string) bool { return !strings.HasSuffix(k, ":true") && x[3] == "T" }) {
		t.Error("a bot's view shows a terminator it has not hit")
	}
	if !has(func(x []string, k string) bool { return x[3] == "t" && x[1] != "-1" }) {
		t.Error("no used terminator under a tile")
	}
	if !has(func(x []string, k string) bool { return x[0] == "A" && x[3] == "A" }) || !has(func(x []string, k string) bool { return x[3] == "A" && x[1] != "-1" }) {
		t.Error("no amplifier, or none under a tile")
	}
	if !has(func(x []string, k string) bool { return x[2] == "1" && x[4] == "R" }) || has(func(x []string, k string) bool { return x[2] != "1" && x[4] == "R" }) {
		t.Error("tails are not the ringed tiles of index 1")
	}
	if !has(func(x []string, k string) bool { return x[2] == "3" && len(x[5]) >= 1 }) {
		t.Error("no chain of three tiles linked")
	}
	if !has(func(x []string, k string) bool { return strings.HasSuffix(k, ":white") && x[1] == "1" && x[2] == "" }) {
		t.Error("white's view shows no black tile it knows of")
	}
	for _, side := range []string{"w", "b"} {
		if !has(func(x []string, k string) bool { return strings.HasSuffix(k, ":true") && strings.Contains(x[6], side) }) {
			t.Errorf("the true board does not show where %s stands", side)
		}
	}
	if has(func(x []string, k string) bool {
		return (strings.HasSuffix(k, ":white") && strings.Contains(x[6], "b")) || (strings.HasSuffix(k, ":black") && strings.Contains(x[6], "w"))
	}) {
		t.Error("a bot's view shows where its opponent stands")
	}

	// The lines of each step shown: the opening, then per turn what the
	// transcript recorded, in order, the answer from the mover.
	for key, lines := range got.Lines {
		step, _ := strconv.Atoi(key)
		var exp []string
		add := func(dir, side string, l []string) {
			for _, x := range l {
				exp = append(exp, dir+" "+side+": "+x)
			}
		}
		sent := func(l *transcript.Lines, first string) {
			s := l.Sides()
			if first == "black" {
				add("to", "black", s[1])
				add("to", "white", s[0])
				return
			}
			add("to", "white", s[0])
			add("to", "black", s[1])
		}
		if step == 0 {
			sent(d.Opening, "white")
		} else {
			r := recs[step-1]
			sent(r.Before, r.Side)
			add("to", r.Side, []string{"TURN"})
			add("from", r.Side, []string{*r.Answer})
			sent(r.After, r.Side)
		}
		if !slices.Equal(lines, exp) {
			t.Errorf("step %d: the page lists the lines\n%s\nthe transcript has\n%s", step, strings.Join(lines, "\n"), strings.Join(exp, "\n"))
		}
	}
	if l := got.Lines[itoa(want["UPDATE TILE"])]; !slices.ContainsFunc(l, func(s string) bool { return strings.HasPrefix(s, "to ") && strings.Contains(s, ": UPDATE TILE ") }) {
		t.Errorf("step %d: no UPDATE TILE listed: %v", want["UPDATE TILE"], l)
	}
	if l := got.Lines["0"]; len(l) < 6 || l[0] != "to white: START" || l[1] != "to white: SIZE 6" {
		t.Errorf("the opening lists %v", l)
	}

	// Points: the figure of each step shown and a chart with one line per
	// side over every step, its cursor moving.
	var cursors []float64
	for key, p := range got.Points {
		step, _ := strconv.Atoi(key)
		pts := states[step].Points()
		if p == nil || *p != fmt.Sprintf("white %d, black %d", pts[0], pts[1]) {
			t.Errorf("step %d: points shown %v, the state's %v", step, p, pts)
		}
		c, ok := got.Chart[key]
		if !ok || !slices.Equal(c.Lines, []string{"white:" + itoa(len(states)), "black:" + itoa(len(states))}) ||
			!strings.Contains(c.Key, fmt.Sprintf("white %d", pts[0])) || !strings.Contains(c.Key, fmt.Sprintf("black %d", pts[1])) {
			t.Errorf("step %d: chart %+v", step, c)
		}
		cursors = append(cursors, c.Cursor)
	}
	slices.Sort(cursors)
	if len(slices.Compact(cursors)) < 5 {
		t.Errorf("the chart's cursor does not follow the steps: %v", cursors)
	}
	if final := states[len(states)-1].Points(); final == [2]int{} || !strings.HasSuffix(got.Result, fmt.Sprintf("wins: points \u00b7 white %d, black %d points", final[0], final[1])) {
		t.Errorf("final points %v, the page's result %q", final, got.Result)
	}
	if !strings.Contains(strings.Join(got.Legend["0:true"], "\n"), "terminator") || !slices.Equal(got.Legend["0:true"], got.Legend[itoa(len(states)-1)+":true"]) {
		t.Errorf("the legend is not carried over the steps: %v / %v", got.Legend["0:true"], got.Legend[itoa(len(states)-1)+":true"])
	}

	// A screenshot of the true board late in the match, the list of turns
	// scrolled to it, as a test artifact.
	shot := filepath.Join(artifacts(t), "viewer-tiles.png")
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	out, err := exec.Command(browser, append(args, "--window-size=1280,1400", "--screenshot="+shot,
		"file://"+file+"#ply="+itoa(len(states)-2)+"&view=true")...).CombinedOutput()
	if err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
}

func grid(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "  ") + "\n")
	}
	return b.String()
}
