package transcript

import (
	"bytes"
	"testing"
)

// game is a transcript of moves, with a seed and the times of its turns.
func game(t *testing.T, seed uint64, wall float64, rules map[string]string, moves ...string) []Line {
	t.Helper()
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Append(TypeHeader, Header{Format: Format, Game: "chess", Seed: seed, Rules: rules, StartedAt: "now"}))
	for i, m := range moves {
		side := []string{"white", "black"}[i%2]
		must(w.Append(TypeTurn, Turn{Ply: i + 1, Side: side, Phase: "play", Verdict: "ok", Move: m, Played: m, WallMs: wall,
			StderrTail: "thinking at " + m}))
	}
	must(w.Append(TypeFooter, Footer{Result: Result{Winner: WinnerDraw, Reason: "stalemate", Seed: seed, DurationMs: wall}}))
	must(w.Close())
	lines, err := ReadFile(dir + "/" + FileName)
	must(err)
	return lines
}

func TestACourseIsTheGameMoveForMove(t *testing.T) {
	course := func(lines []Line) string {
		t.Helper()
		c, err := Course(lines)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := course(game(t, 1, 10, nil, "e2e4", "e7e5"))
	if got := course(game(t, 2, 99, map[string]string{}, "e2e4", "e7e5")); got != base {
		t.Error("another seed and other times change the course")
	}
	for name, other := range map[string][]Line{
		"another move":    game(t, 1, 10, nil, "e2e4", "c7c5"),
		"a move more":     game(t, 1, 10, nil, "e2e4", "e7e5", "g1f3"),
		"another opening": game(t, 1, 10, map[string]string{"fen": "8/8/8/8/8/8/8/K6k w - - 0 1"}, "e2e4", "e7e5"),
	} {
		if course(other) == base {
			t.Errorf("%s: the same course", name)
		}
	}
	// An edited transcript has no course.
	lines := game(t, 1, 10, nil, "e2e4", "e7e5")
	lines[1].Raw = bytes.Replace(lines[1].Raw, []byte("e2e4"), []byte("d2d4"), 2)
	lines[1].Hash = Hash(lines[1].Raw)
	if _, err := Course(lines); err == nil {
		t.Error("an edited transcript has a course")
	}
}
