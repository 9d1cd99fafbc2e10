package replay

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// playedTiles plays a tiles match of turns turns.
func playedTiles(t *testing.T, white, black *submission.Bot, turns string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "m")
	res, err := match.Run(context.Background(), match.Config{
		Game: tiles.Game{}, Rules: map[string]string{"turns": turns}, Seed: 9, White: white, Black: black,
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir,
	})
	if err != nil || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%v %+v", err, res)
	}
	return dir
}

// A line game's turn is re-run by sending a fresh bot its recorded dialogue:
// a bot whose answers depend only on what it was sent answers every earlier
// question as recorded and the disputed one too.
func TestRerunOfALineGameReplaysTheDialogue(t *testing.T) {
	t.Parallel()
	legal := bot(t, "./internal/testbots/linefixture", "tiles.legal")
	dir := playedTiles(t, legal, legal, "60")
	be := &local.Backend{Dir: t.TempDir()}
	for _, ply := range []int{1, 2, 59} {
		out, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: ply, Bot: legal, Backend: be, Repeat: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range out.Attempts {
			if a.Move != out.Recorded.Move || a.Verdict != out.Recorded.Verdict || a.Answer != *out.Recorded.Answer ||
				a.EarlierDiffer != 0 || a.Earlier != (ply-1)/2 {
				t.Fatalf("ply %d run %d: %+v, recorded %s %s", ply, i+1, a, out.Recorded.Move, out.Recorded.Verdict)
			}
		}
	}
	// The disputed invalid line is given again, and judged the same way.
	garbage := bot(t, "./internal/testbots/linefixture", "tiles.garbage")
	dir = playedTiles(t, legal, garbage, "60")
	out, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: 2, Bot: garbage, Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	if a := out.Attempts[0]; a.Verdict != "invalid-output" || a.Answer != "resign please" || out.Recorded.Verdict != a.Verdict {
		t.Fatalf("%+v, recorded %+v", a, out.Recorded)
	}
}

// A bot that plays at random answers its earlier questions otherwise than
// the record: rerun says so, and how many.
func TestRerunOfALineGameCountsEarlierAnswersThatDiffer(t *testing.T) {
	t.Parallel()
	random := bot(t, "./cmd/arena-random", "arena-random-tiles")
	dir := playedTiles(t, random, random, "200")
	out, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: 199, Bot: random, Backend: &local.Backend{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if a := out.Attempts[0]; a.Earlier != 99 || a.EarlierDiffer == 0 || a.FirstDiffer < 1 || a.FirstDiffer > 197 {
		t.Fatalf("%+v", a)
	}
}
