package match_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// Under keep=final only each side's last data file survives the match; the
// footer names the versions removed, and the match replays consistently.
func TestKeepFinalLeavesOnlyTheLastVersions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "m")
	res, err := match.Run(context.Background(), match.Config{
		Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "6"}, Seed: 4,
		White: fixture(t, "fresh-10m"), Black: fixture(t, "legal"),
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Dir: dir,
		Evidence: transcript.Evidence{Keep: transcript.KeepFinal},
	})
	if err != nil || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%v %+v", err, res)
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var foot transcript.Footer
	lines[len(lines)-1].Decode(&foot)
	last := map[string]string{}
	for _, l := range lines[1 : len(lines)-1] {
		var tr transcript.Turn
		l.Decode(&tr)
		for _, df := range tr.DataFiles {
			last[tr.Side] = df.SHA256
		}
	}
	blobs, _ := os.ReadDir(filepath.Join(dir, transcript.BlobDir))
	if len(blobs) != 2 || len(foot.Pruned) < 5 {
		t.Fatalf("%d blobs kept, %d pruned; last versions %v", len(blobs), len(foot.Pruned), last)
	}
	for _, sum := range last {
		if !transcript.HasBlob(dir, sum) {
			t.Fatalf("the last version %s was removed", sum)
		}
	}
	rep, err := replay.File(dir)
	if err != nil || !rep.Consistent || rep.NotKept != len(foot.Pruned) {
		t.Fatalf("replay: %v %s, %d not kept", err, rep.Problem(), rep.NotKept)
	}
}
