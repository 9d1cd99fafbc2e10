package event

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

func TestABackupIsTheWholeEvent(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n")
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(st.Dir, ConfigFile), []byte("game = \"codeclash\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	subA, subB := passed(t, st, cfg, a.ID, "a.py"), passed(t, st, cfg, b.ID, "b.py")
	if _, err := st.Signer(); err != nil {
		t.Fatal(err)
	}
	// A game of the ladder, of a scrimmage and of the final, each in its
	// tournament's directory beside the tournament's database, which a
	// runner holds open (WAL) while the copy is taken.
	var open []*tournament.Store
	var games []Game
	for _, d := range []string{filepath.Join(LadderDir, "1"), filepath.Join(ScrimmagesDir, "3"), FinalDir} {
		if err := os.MkdirAll(filepath.Join(st.Dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
		ts, err := tournament.OpenStore(filepath.Join(st.Dir, d), false)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, ts)
		dir := filepath.Join(st.Dir, d, "game-1")
		writeGame(t, dir, 1, []string{"a1", "b2"}, "white")
		// A data file the three games kept: stored once, linked in each.
		if _, _, err := transcript.PutShared(filepath.Join(st.Dir, EvidenceDir), dir, []byte(strings.Repeat("shared data file ", 1000))); err != nil {
			t.Fatal(err)
		}
		g, err := st.AddGame(ctx, map[string]string{LadderDir: LadderGame, ScrimmagesDir: ScrimmageGame, FinalDir: FinalGame}[strings.Split(d, "/")[0]],
			dir, Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID}, 0)
		if err != nil {
			t.Fatal(err)
		}
		games = append(games, g)
	}
	defer func() {
		for _, ts := range open {
			ts.Close()
		}
	}()
	for name, data := range map[string]string{
		filepath.Join(DisputesDir, "1", "rerun-3.txt"): "rerun",
		filepath.Join("workers", "w1.pub"):             "key",
		filepath.Join("nats", "jetstream", "x"):        "queue",
		filepath.Join(tmpDir, "upload-1"):              "half an upload",
	} {
		p := filepath.Join(st.Dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := st.Backup(ctx, filepath.Join(st.Dir, "copy")); err == nil || !strings.Contains(err.Error(), "inside") {
		t.Errorf("a copy inside the event: %v", err)
	}
	out := filepath.Join(t.TempDir(), "copy")
	rep, err := st.Backup(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Backup(ctx, out); err == nil {
		t.Error("a copy over an existing directory")
	}
	for _, name := range []string{DBFile, ConfigFile, SigningKey, filepath.Join(DisputesDir, "1", "rerun-3.txt"), filepath.Join("workers", "w1.pub"),
		filepath.Join(FinalDir, tournament.DBFile), filepath.Join(LadderDir, "1", tournament.DBFile), filepath.Join(ScrimmagesDir, "3", tournament.DBFile)} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("the copy lacks %s: %v", name, err)
		}
	}
	for _, name := range []string{"nats", tmpDir, DBFile + "-wal", filepath.Join(FinalDir, tournament.DBFile+"-wal")} {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("the copy holds %s", name)
		}
	}
	if len(rep.Skipped) != 2 || rep.Files == 0 || rep.Bytes == 0 {
		t.Errorf("report: %+v", rep)
	}
	dbs := 0
	for _, p := range rep.Parts {
		dbs += p.Databases
	}
	if dbs != 4 {
		t.Errorf("%d databases copied, want the event's and 3 tournaments'", dbs)
	}
	// The shared data file is copied once, its links kept.
	var inodes []uint64
	for _, d := range []string{filepath.Join(LadderDir, "1"), filepath.Join(ScrimmagesDir, "3"), FinalDir, EvidenceDir} {
		des, err := os.ReadDir(filepath.Join(out, d, "game-1", transcript.BlobDir))
		if d == EvidenceDir {
			des, err = os.ReadDir(filepath.Join(out, d, transcript.BlobDir))
		}
		if err != nil || len(des) != 1 {
			t.Fatalf("%s: %v %v", d, des, err)
		}
		fi, err := des[0].Info()
		if err != nil {
			t.Fatal(err)
		}
		inodes = append(inodes, fi.Sys().(*syscall.Stat_t).Ino)
	}
	if inodes[0] != inodes[1] || inodes[1] != inodes[2] || inodes[2] != inodes[3] {
		t.Errorf("the shared blob was copied apart: inodes %v", inodes)
	}
	// The copy is an event: every game it records is there whole.
	cp, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	for _, g := range games {
		got, err := cp.Game(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(cp.MatchDir(got), "transcript.jsonl")); err != nil {
			t.Errorf("game %d of the copy: %v", g.ID, err)
		}
	}
	k1, err := st.Signer()
	if err != nil {
		t.Fatal(err)
	}
	if k2, err := cp.Signer(); err != nil || !k1.Equal(k2) {
		t.Errorf("the copy signs with another key (%v)", err)
	}
}
