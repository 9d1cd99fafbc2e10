package transcript_test

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
)

// game writes a transcript of the turns given and its result, and reads it
// back.
func game(t *testing.T, winner string, turns ...transcript.Turn) []transcript.Line {
	t.Helper()
	dir := t.TempDir()
	w, err := transcript.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(transcript.TypeHeader, transcript.Header{Game: "codeclash"}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		if err := w.Append(transcript.TypeTurn, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Append(transcript.TypeFooter, transcript.Footer{Result: transcript.Result{Winner: winner, Reason: "king-captured", Plies: len(turns)}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines, err := transcript.ReadFile(dir + "/" + transcript.FileName)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// Two transcripts of one game are compared on what the bots were given and
// did, never on times or output: the first difference is named, and one a
// host's speed can decide is marked so.
func TestCompareNamesTheFirstTurnTheBotsDidOtherwise(t *testing.T) {
	t.Parallel()
	answer := func(s string) *string { return &s }
	turn := func(ply int, side, move string) transcript.Turn {
		return transcript.Turn{Ply: ply, Side: side, StateSHA256: "s" + move, Answer: answer(move), Verdict: "ok", Move: move, Played: move, WallMs: float64(ply)}
	}
	base := game(t, "white", turn(1, "white", "a2a3"), turn(2, "black", "e5e4"))
	slower := turn(2, "black", "e5e4")
	slower.WallMs, slower.StderrTail, slower.HostWaitMs = 900, "thinking 0.9 s", 12
	timedOut := turn(2, "black", "e5e4")
	timedOut.Answer, timedOut.Move, timedOut.Played, timedOut.Verdict, timedOut.TimedOut = nil, "", "", "timeout", true
	for _, c := range []struct {
		name     string
		other    []transcript.Line
		field    string
		ply      int
		resource bool
	}{
		{"the same game, other times and output", game(t, "white", turn(1, "white", "a2a3"), slower), "", 0, false},
		{"another move", game(t, "white", turn(1, "white", "a2a4"), turn(2, "black", "e5e4")), "state", 1, false},
		{"a turn timed out", game(t, "white", turn(1, "white", "a2a3"), timedOut), "answer", 2, true},
		{"another result", game(t, "black", turn(1, "white", "a2a3"), turn(2, "black", "e5e4")), "result", 0, false},
		{"a turn more", game(t, "white", turn(1, "white", "a2a3"), turn(2, "black", "e5e4"), turn(3, "white", "b2b3")), "length", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := transcript.Compare(base, c.other)
			if err != nil {
				t.Fatal(err)
			}
			if c.field == "" {
				if d != nil {
					t.Fatalf("the same game differs: %s", d)
				}
				return
			}
			if d == nil || d.Field != c.field || d.Ply != c.ply || d.Resource != c.resource {
				t.Fatalf("difference %+v, want %s at ply %d (resource %v)", d, c.field, c.ply, c.resource)
			}
			if !strings.Contains(d.String(), c.field) {
				t.Fatalf("%q does not name the field", d)
			}
		})
	}
}
