package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox/local"
)

// A bot that writes a fresh 10 MiB data file every turn cannot fill the
// disk: each match directory stays within the evidence budget, every turn's
// hash is recorded, and every match still replays consistently.
func TestEvidenceStaysWithinTheBudget(t *testing.T) {
	t.Parallel()
	const budget = 32 << 20
	bots := []*submission.Bot{fixtureBot(t, "fresh-10m"), fixtureBot(t, "shuffle")}
	dir := t.TempDir()
	o := options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	o.Config.Rules = map[string]string{"maxPlies": "12"}
	o.Config.Evidence = transcript.Evidence{Keep: transcript.KeepChanged, Budget: budget}
	o.Concurrency = 1
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 2 {
		t.Fatalf("%+v", sum)
	}
	games, _ := filepath.Glob(filepath.Join(dir, "games", "*"))
	for _, g := range games {
		var size int64
		blobs, _ := os.ReadDir(filepath.Join(g, transcript.BlobDir))
		for _, b := range blobs {
			fi, err := b.Info()
			if err != nil {
				t.Fatal(err)
			}
			size += fi.Size()
		}
		if size > budget || len(blobs) == 0 {
			t.Fatalf("%s: %d blobs, %d bytes, budget %d", g, len(blobs), size, budget)
		}
		rep, err := replay.File(g)
		if err != nil || !rep.Consistent || rep.NotKept == 0 {
			t.Fatalf("%s: replay %v %s, %d versions not kept", g, err, rep.Problem(), rep.NotKept)
		}
		lines, err := transcript.ReadFile(filepath.Join(g, transcript.FileName))
		if err != nil {
			t.Fatal(err)
		}
		var h transcript.Header
		lines[0].Decode(&h)
		if h.Evidence == nil || *h.Evidence != o.Config.Evidence {
			t.Fatalf("the header records evidence %+v", h.Evidence)
		}
		for _, l := range lines[1 : len(lines)-1] {
			var tr transcript.Turn
			l.Decode(&tr)
			if botOf(h, tr.Side) == "fresh-10m" && (len(tr.DataFiles) != 1 || tr.DataFiles[0].SHA256 == "") {
				t.Fatalf("ply %d records data files %+v", tr.Ply, tr.DataFiles)
			}
		}
	}
}

func botOf(h transcript.Header, side string) string {
	if side == "black" {
		return h.Black.Name
	}
	return h.White.Name
}

// An unkept version cannot be re-run, and rerun says why.
func TestRerunOfAnUnkeptTurnSaysSo(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "fresh-10m"), fixtureBot(t, "shuffle")}
	dir := t.TempDir()
	o := options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	o.Config.Rules = map[string]string{"maxPlies": "4"}
	o.Config.GamesPerPair = 1
	o.Config.Evidence = transcript.Evidence{Keep: transcript.KeepNone}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	games, _ := filepath.Glob(filepath.Join(dir, "games", "*"))
	if len(games) != 1 {
		t.Fatalf("games %v", games)
	}
	if blobs, _ := os.ReadDir(filepath.Join(games[0], transcript.BlobDir)); len(blobs) != 0 {
		t.Fatalf("%d blobs kept under keep=none", len(blobs))
	}
	lines := mustRead(t, games[0])
	var h transcript.Header
	lines[0].Decode(&h)
	ply, seen := 0, 0
	for _, l := range lines[1 : len(lines)-1] {
		var tr transcript.Turn
		l.Decode(&tr)
		if botOf(h, tr.Side) == "fresh-10m" {
			if seen++; seen == 2 {
				ply = tr.Ply // it began with the file the first turn wrote
				break
			}
		}
	}
	rep, err := replay.File(games[0])
	if err != nil || !rep.Consistent {
		t.Fatalf("replay: %v %s", err, rep.Problem())
	}
	_, err = replay.RunAgain(context.Background(), replay.RerunOptions{Path: games[0], Ply: ply, Bot: bots[0], Backend: &local.Backend{Dir: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), "was not kept (evidence policy: none)") {
		t.Fatalf("rerun of ply %d: %v", ply, err)
	}
}

func mustRead(t *testing.T, dir string) []transcript.Line {
	t.Helper()
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
