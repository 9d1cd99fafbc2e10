package view

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

func bot(t *testing.T, pkg string) *submission.Bot {
	t.Helper()
	b, err := submission.Load(gobuild.MustStatic(t, pkg), submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// greedyMatch plays greedy (which fogs its opponent) against random.
func greedyMatch(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "m")
	_, err := match.Run(context.Background(), match.Config{
		Game: codeclash.Game{}, Seed: 3, White: bot(t, "./examples/random"), Black: bot(t, "./examples/greedy"),
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// recordedCells reads the board of a state.json as the viewer writes cells.
func recordedCells(t *testing.T, state string) [][]string {
	var v struct {
		Board [][]*struct{ Type, Color string }
	}
	if err := json.Unmarshal([]byte(state), &v); err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(v.Board))
	for r, row := range v.Board {
		out[r] = make([]string, len(row))
		for c, cell := range row {
			switch {
			case cell == nil:
			case cell.Color == "fog":
				out[r][c] = "?"
			case cell.Color == "black":
				out[r][c] = strings.ToLower(cell.Type)
			default:
				out[r][c] = cell.Type
			}
		}
	}
	return out
}

func TestPageIsSelfContained(t *testing.T) {
	t.Parallel()
	d, err := Build(greedyMatch(t))
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTML(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://", "https://", "<link", "src=", "@import"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("the page refers to something outside itself: %q", bad)
		}
	}
	if !d.Consistent || len(d.Steps) < 20 {
		t.Fatalf("consistent %v, %d steps (%s)", d.Consistent, len(d.Steps), d.Problem)
	}
}

func chromium(t *testing.T) string {
	return dockertest.Tool(t, "the viewer in a real browser", "chromium", "chromium", "chromium-browser", "google-chrome")
}

func TestViewerInARealBrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	dir := greedyMatch(t)
	d, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := HTML(d)
	file := filepath.Join(t.TempDir(), "match.html")
	os.WriteFile(file, page, 0o644)
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + t.TempDir()}

	dom, err := exec.Command(browser, append(args, "--dump-dom", "file://"+file+"#selftest")...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<pre id="selftest">([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil || len(m[1]) == 0 {
		t.Fatalf("the page did not report its self-test; DOM:\n%.2000s", dom)
	}
	var got struct {
		Steps          int
		Shown          map[string][][]string
		FogStep        int
		AfterKeys      int
		Changed        bool
		ModeAfterClick string
		Opened         struct{ Step int }
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatal(err)
	}
	if got.Steps != len(d.Steps) || got.AfterKeys != 2 || !got.Changed || got.ModeAfterClick != "black" {
		t.Fatalf("stepping and toggling do not work: %+v", got)
	}
	// Opened without a step, the page shows the first position of play,
	// not the empty board before the setup.
	setup := 0
	for i, s := range d.Steps {
		if s.Phase == "setup" {
			setup = i
		}
	}
	if setup == 0 || got.Opened.Step != setup {
		t.Fatalf("the page opened on step %d; the setup ends at step %d", got.Opened.Step, setup)
	}
	if got.FogStep < 0 {
		t.Fatal("no fogged step in a game where greedy fogs its opponent")
	}
	// Each board the page drew as the mover's view must be the exact board of the
	// state.json the transcript says that bot was given next.
	lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	turns := map[int]transcript.Turn{}
	for _, l := range lines {
		var tr transcript.Turn
		if l.Type == transcript.TypeTurn && l.Decode(&tr) == nil {
			turns[tr.Ply] = tr
		}
	}
	checked := 0
	for key, cells := range got.Shown {
		var step int
		var mode string
		if _, err := fmtSscanf(key, &step, &mode); err != nil {
			t.Fatal(err)
		}
		next, ok := turns[step+1]
		if !ok || mode != next.Side {
			continue
		}
		want := recordedCells(t, next.State)
		if !equal(cells, want) {
			t.Errorf("step %d, %s's view: the page shows %v, the transcript gave %v", step, mode, cells, want)
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("only %d boards compared", checked)
	}
	fog, ok := got.Shown[itoa(got.FogStep)+":"+turns[got.FogStep+1].Side]
	if !ok || !strings.Contains(strings.Join(flatten(fog), ""), "?") {
		t.Fatalf("the fogged step %d does not show fog: %v", got.FogStep, fog)
	}

	// Keep a screenshot of a fogged position as a test artifact.
	shot := filepath.Join(artifacts(t), "viewer.png")
	view := turns[got.FogStep+1].Side
	out, err := exec.Command(browser, append(args, "--window-size=1100,760", "--screenshot="+shot,
		"file://"+file+"#ply="+itoa(got.FogStep)+"&view="+view)...).CombinedOutput()
	if err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot of ply %d in %s's view: %s", got.FogStep, view, shot)
}

func artifacts(t *testing.T) string {
	dir := os.Getenv("ARENA_ARTIFACTS")
	if dir == "" {
		root, err := gobuild.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "test-artifacts")
	}
	os.MkdirAll(dir, 0o755)
	return dir
}

func fmtSscanf(key string, step *int, mode *string) (int, error) {
	s, m, _ := strings.Cut(key, ":")
	n, err := strconv.Atoi(s)
	*step, *mode = n, m
	return 2, err
}

func itoa(n int) string { return strconv.Itoa(n) }

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func equal(a, b [][]string) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestViewOfALineGame(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	bot := func(name string) *submission.Bot {
		return &submission.Bot{Name: name, SHA256: submission.Sum(data),
			Program: sandbox.Program{Name: name, Entry: name, Files: []sandbox.File{{Name: name, Data: data, Mode: 0o755}}}}
	}
	g, _ := rules.Lookup("chess")
	dir := filepath.Join(t.TempDir(), "m")
	if _, err := match.Run(context.Background(), match.Config{Game: g, Rules: map[string]string{"maxPlies": "30"}, White: bot("legal"), Black: bot("legal"),
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	d, err := Build(dir)
	if err != nil || !d.Consistent {
		t.Fatalf("%v %s", err, d.Problem)
	}
	start := d.Steps[0].Frames["true"].Cells
	if len(d.Steps) != 31 || len(start) != 8 || strings.Join(start[0], "") != "rnbqkbnr" || strings.Join(start[7], "") != "RNBQKBNR" {
		t.Fatalf("%d steps, start %v", len(d.Steps), start)
	}
}

// arena view never writes into a match's folder unless told to: the page
// goes to the current directory, named after the match.
func TestDefaultOutputIsOutsideTheMatch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"matches/20261125-random-vs-greedy", "final/games/0003-a-vs-b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{
		"matches/20261125-random-vs-greedy":                  "20261125-random-vs-greedy.html",
		"matches/20261125-random-vs-greedy/":                 "20261125-random-vs-greedy.html",
		"matches/20261125-random-vs-greedy/transcript.jsonl": "20261125-random-vs-greedy.html",
		"final/games/0003-a-vs-b":                            "0003-a-vs-b.html",
	} {
		if got := DefaultOutput(filepath.Join(root, in)); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// A turn whose answer could not be read shows no move: the empty move its
// record keeps would read as one played.
func TestAnUnreadableAnswerShowsNoMove(t *testing.T) {
	t.Parallel()
	bad := NewStep(transcript.Turn{Ply: 1, Side: "white", Phase: "setup", Move: "[0,0]-[0,0]", Verdict: string(rules.InvalidOutput)}, false)
	if bad.Move != "" {
		t.Errorf("an invalid answer's step shows the move %q", bad.Move)
	}
	if ok := NewStep(transcript.Turn{Ply: 2, Side: "black", Move: "[4,0]-[3,0]", Verdict: string(rules.OK)}, false); ok.Move != "[4,0]-[3,0]" {
		t.Errorf("a played move shows as %q", ok.Move)
	}
}

// A match forfeited on a turn: the viewer's turns are the result's turns
// played (the one the fault ended the match on included), as the pages
// and the command line count them.
func TestTheViewerCountsTheTurnsTheResultDoes(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "bot"), []byte("#!/bin/sh\necho 'no move here'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	faulty, err := submission.Load(src, submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	res, err := match.Run(context.Background(), match.Config{
		Game: codeclash.Game{}, Seed: 3, White: bot(t, "./examples/greedy"), Black: faulty,
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	f, forfeit := res.Forfeit()
	if !forfeit || f.Side != "black" || res.TurnsPlayed() != res.Turns+1 {
		t.Fatalf("the result: %+v; want black's forfeit, on the turn after the last one applied", res)
	}
	d, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(d.Steps) - 1; got != res.TurnsPlayed() {
		t.Errorf("the viewer shows %d turns, the result %d played (%d applied)", got, res.TurnsPlayed(), res.Turns)
	}
}
