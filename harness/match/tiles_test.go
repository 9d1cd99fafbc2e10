package match_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules"
)

// turns reads a match's header and turns.
func turns(t *testing.T, dir string) (transcript.Header, []transcript.Turn) {
	t.Helper()
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var h transcript.Header
	if err := lines[0].Decode(&h); err != nil {
		t.Fatal(err)
	}
	var ts []transcript.Turn
	for _, l := range lines[1 : len(lines)-1] {
		var tr transcript.Turn
		if err := l.Decode(&tr); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	return h, ts
}

func TestTilesOverStdio(t *testing.T) {
	t.Parallel()
	t.Run("two bots that follow the dialogue play the whole game", func(t *testing.T) {
		// The fixture keeps what it is told and stops at a line it does not
		// expect, so 210 valid answers mean every line reached it in order.
		res, dir := playLines(t, "tiles", lineBot(t, "tiles.legal"), lineBot(t, "tiles.legal"), nil, match.Forfeit)
		if len(res.Faults) != 0 || res.Reason != "points" || res.Turns != 210 || len(res.Points) != 2 {
			t.Fatalf("%+v", res)
		}
		h, ts := turns(t, dir)
		for _, side := range []string{"white", "black"} {
			d, err := transcript.Dialogue(h, ts, side, 0)
			if err != nil {
				t.Fatal(err)
			}
			asked := 0
			for _, s := range d {
				if s.Question {
					asked++
				}
			}
			if len(d) < 2 || d[0].Line != "START" || d[1].Line != "SIZE 12" || d[len(d)-1].Line != "GAMEOVER" || asked != 105 {
				t.Fatalf("%s's dialogue: %d steps, %d questions, first %v, last %v", side, len(d), asked, d[0], d[len(d)-1])
			}
		}
		switch {
		case res.Points[0] > res.Points[1] && res.Winner != transcript.WinnerWhite,
			res.Points[0] < res.Points[1] && res.Winner != transcript.WinnerBlack,
			res.Points[0] == res.Points[1] && res.Winner != transcript.WinnerDraw:
			t.Fatalf("points %v, winner %s", res.Points, res.Winner)
		}
	})
	blackFaults(t, "tiles", "tiles.legal", []faultCase{
		{"tiles.garbage", nil, rules.InvalidOutput, `"resign please"`, 2},
		{"tiles.silent", map[string]string{"turnTimeout": "300ms"}, rules.Timeout, "no answer within the move time", 2},
		{"tiles.quit-3", nil, rules.Crash, "exited or closed its output", 8},
	})
	t.Run("random-move plays a valid line for a silent bot", func(t *testing.T) {
		res, _ := playLines(t, "tiles", lineBot(t, "tiles.legal"), lineBot(t, "tiles.silent"), map[string]string{"turnTimeout": "100ms", "turns": "20"}, match.RandomMove)
		if res.Reason != "points" || res.Turns != 20 || len(res.Faults) != 10 {
			t.Fatalf("%+v", res)
		}
	})
}

// The example bots, Go and Python, play each other both ways in the runtime
// image, and every answer of theirs is valid.
func TestTilesExampleBotsPlayEachOther(t *testing.T) {
	t.Parallel()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "examples", "tiles", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(t.TempDir(), "random_bot.py")
	if err := os.WriteFile(py, src, 0o755); err != nil {
		t.Fatal(err)
	}
	goBot := gobuild.MustStatic(t, "./examples/tiles-random")
	load := func(p string) *submission.Bot {
		b, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bots := [2]*submission.Bot{load(goBot), load(py)}
	for _, pair := range [][2]int{{0, 1}, {1, 0}} {
		white, black := bots[pair[0]], bots[pair[1]]
		t.Run(white.Name+" vs "+black.Name, func(t *testing.T) {
			res, _ := playLines(t, "tiles", white, black, map[string]string{"greeting": "engine"}, match.Forfeit)
			if len(res.Faults) != 0 || res.Reason != "points" || res.Turns != 210 {
				t.Fatalf("%+v", res)
			}
		})
	}
}
