package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// playedLines plays a real match of the greedy example against the random
// one on the local sandbox and returns its transcript's lines.
func playedLines(t *testing.T) []transcript.Line {
	t.Helper()
	load := func(pkg string) *submission.Bot {
		b, err := submission.Load(gobuild.MustStatic(t, pkg), submission.LoadOptions{Limits: submission.DefaultLimits()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir := filepath.Join(t.TempDir(), "m")
	res, err := match.Run(context.Background(), match.Config{Game: codeclash.Game{}, Seed: 5, White: load("./examples/greedy"), Black: load("./examples/random"),
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir})
	if err != nil || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%v %+v", err, res)
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// file is lines as a transcript file holds them.
func file(lines []transcript.Line) io.Reader {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l.Raw)
		b.WriteByte('\n')
	}
	return &b
}

// edited is lines with the records of type typ (from the n-th of them on,
// count of them; -1: every one) changed by edit.
func edited(t *testing.T, lines []transcript.Line, typ string, n, count int, edit func(map[string]any)) []transcript.Line {
	t.Helper()
	out := make([]transcript.Line, len(lines))
	copy(out, lines)
	seen := 0
	for i, l := range out {
		if l.Type != typ {
			continue
		}
		seen++
		if seen <= n || count >= 0 && seen > n+count {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(l.Raw, &rec); err != nil {
			t.Fatal(err)
		}
		edit(rec)
		raw, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		out[i].Raw = raw
	}
	return out
}

// A game played again is compared with the published one turn by turn:
// the same game (its times aside) has no difference; a turn whose answer
// differs is named with its ply, side and field, both values shown; the
// turns after the first that differs are counted; a turn missing and
// another result are named too.
func TestAGamePlayedAgainIsComparedTurnByTurn(t *testing.T) {
	t.Parallel()
	lines := playedLines(t)
	slower := edited(t, lines, transcript.TypeTurn, 0, -1, func(r map[string]any) { r["wallMs"], r["cpuMs"], r["peakMemory"] = 999.0, 998.0, 1.0 })
	diffs, turns, err := compare(file(lines), file(slower))
	if err != nil || len(diffs) != 0 || turns < 4 {
		t.Fatalf("the same game, slower: %q, %d turns, %v", diffs, turns, err)
	}
	other := edited(t, lines, transcript.TypeTurn, 2, 1, func(r map[string]any) { r["answer"] = `{"move":{"to":[9,9]}}` })
	diffs, _, err = compare(file(lines), file(other))
	if err != nil || len(diffs) != 1 || !strings.HasPrefix(diffs[0], "ply 3 (") || !strings.Contains(diffs[0], `answer: published "`) || !strings.Contains(diffs[0], `played again "{\"move\":{\"to\":[9,9]}}"`) {
		t.Errorf("a third turn answered otherwise: %q %v", diffs, err)
	}
	many := edited(t, lines, transcript.TypeTurn, 0, -1, func(r map[string]any) { r["verdict"] = "timeout" })
	diffs, turns, err = compare(file(lines), file(many))
	if want := fmt.Sprintf("%d of the %d turns after it differ too", turns-1, turns-1); err != nil || len(diffs) != 2 || diffs[1] != want || !strings.HasPrefix(diffs[0], "ply 1 (") || !strings.Contains(diffs[0], "verdict: published") {
		t.Errorf("every turn judged otherwise: %q %v", diffs, err)
	}
	short := lines[:len(lines)-2] // its last turn and footer gone
	var footer transcript.Line
	for _, l := range lines {
		if l.Type == transcript.TypeFooter {
			footer = l
		}
	}
	short = append(short[:len(short):len(short)], edited(t, []transcript.Line{footer}, transcript.TypeFooter, 0, -1, func(r map[string]any) {
		res := r["result"].(map[string]any)
		res["winner"], res["reason"] = "black", "a reason of its own"
	})...)
	diffs, _, err = compare(file(lines), file(short))
	if err != nil || len(diffs) != 2 || !strings.HasPrefix(diffs[0], "its turns: published ") || !strings.HasPrefix(diffs[1], "its result: published ") || !strings.Contains(diffs[1], "played again black (a reason of its own)") {
		t.Errorf("a turn less and another result: %q %v", diffs, err)
	}
}
