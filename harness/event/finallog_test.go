package event

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/eventlog"
)

// openAt opens the event in dir, closed at the test's end.
func openAt(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// logLadderGame records a ladder game between two new teams in st, its
// directory under the ladder's pair n, and logs it.
func logLadderGame(t *testing.T, st *Store, n int) Game {
	t.Helper()
	ctx := context.Background()
	cfg := DefaultConfig("codeclash")
	suffix := string(rune('a' + n))
	a, err := st.AddTeam(ctx, "Alpha "+suffix, "", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.AddTeam(ctx, "Beta "+suffix, "", "")
	if err != nil {
		t.Fatal(err)
	}
	subA, subB := passed(t, st, cfg, a.ID, "a.py"), passed(t, st, cfg, b.ID, "b.py")
	dir := filepath.Join(st.Dir, LadderDir, suffix, "game-1")
	writeGame(t, dir, uint64(n), []string{"a1", "b2"}, "white")
	g, err := st.AddGame(ctx, LadderGame, dir, Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.LogGame(ctx, g); err != nil {
		t.Fatal(err)
	}
	return g
}

// The log's name is fixed when the event is made: a backup served from a
// directory of another name, or the event moved, keeps it, its key line
// and the checkpoints signed before; an event made before the name was
// kept keeps the one its directory gave it then.
func TestTheLogKeepsItsNameWhereverTheEventIsServed(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	a := filepath.Join(root, "cup-2026")
	origin, err := FixLogOrigin(a) // arena event init
	if err == nil {
		t.Fatalf("the origin of a directory that does not exist: %q", origin)
	}
	if err := os.Mkdir(a, 0o700); err != nil {
		t.Fatal(err)
	}
	if origin, err = FixLogOrigin(a); err != nil || origin != "arena/cup-2026" {
		t.Fatalf("the origin fixed: %q, %v", origin, err)
	}
	st := openAt(t, a)
	if st.LogOrigin() != "arena/cup-2026" {
		t.Fatalf("the event's log is %q, want arena/cup-2026", st.LogOrigin())
	}
	_, key, err := st.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "arena/cup-2026+") {
		t.Fatalf("the key line %q", key)
	}
	logLadderGame(t, st, 1)
	before, size, err := st.FinalLogCheckpoint(ctx)
	if err != nil || size != 1 {
		t.Fatalf("the checkpoint of one game: size %d, %v", size, err)
	}

	// A backup restored under another name, then moved again.
	b := filepath.Join(root, "restored")
	if _, err := st.Backup(ctx, b); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(b, LogOriginFile)); err != nil || string(data) != "arena/cup-2026\n" {
		t.Fatalf("the backup's %s: %q, %v", LogOriginFile, data, err)
	}
	c := filepath.Join(root, "elsewhere", "moved")
	if err := os.MkdirAll(filepath.Dir(c), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{b, c} {
		if dir == c {
			if err := os.Rename(b, c); err != nil {
				t.Fatal(err)
			}
		}
		cp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, cpKey, err := cp.LogKeys()
		if err != nil {
			t.Fatal(err)
		}
		if cp.LogOrigin() != "arena/cup-2026" || cpKey != key {
			t.Errorf("%s: the log is %q, its key %q; want arena/cup-2026 and %q", dir, cp.LogOrigin(), cpKey, key)
		}
		if _, err := eventlog.Verify(before, cpKey); err != nil {
			t.Errorf("%s: the checkpoint signed before the copy: %v", dir, err)
		}
		if dir == c {
			// The copy's log grows under the same name: the key kept
			// from before checks its checkpoints.
			logLadderGame(t, cp, 2)
			after, size, err := cp.FinalLogCheckpoint(ctx)
			if err != nil || size != 2 {
				t.Fatalf("the copy's checkpoint: size %d, %v", size, err)
			}
			if cpt, err := eventlog.Verify(after, key); err != nil || cpt.Origin != "arena/cup-2026" {
				t.Errorf("the copy's checkpoint by the key kept: %+v, %v", cpt, err)
			}
		}
		if err := cp.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// An event made before the origin was kept: the first open fixes
	// the name its directory gave its log all along.
	old := filepath.Join(root, "old cup")
	if err := os.Mkdir(old, 0o700); err != nil {
		t.Fatal(err)
	}
	st2, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	if st2.LogOrigin() != "arena/old-cup" {
		t.Errorf("an older event's log is %q, want arena/old-cup", st2.LogOrigin())
	}
	if err := st2.Close(); err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(root, "renamed")
	if err := os.Rename(old, renamed); err != nil {
		t.Fatal(err)
	}
	if st := openAt(t, renamed); st.LogOrigin() != "arena/old-cup" {
		t.Errorf("an older event renamed: its log is %q, want arena/old-cup", st.LogOrigin())
	}
	// No temporary file is left beside it.
	des, err := os.ReadDir(renamed)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), LogOriginFile+".") {
			t.Errorf("%s left behind", de.Name())
		}
	}

	// A damaged origin is refused, not replaced.
	bad := filepath.Join(root, "bad")
	if err := os.Mkdir(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, LogOriginFile), []byte("arena/a cup+x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := Open(bad); err == nil {
		st.Close()
		t.Error("an event whose log's origin is not one opens")
	} else if !strings.Contains(err.Error(), "not a log's origin") {
		t.Errorf("a bad origin: %v", err)
	}
}

// A scrimmage's game is never logged, whatever asks: only its two teams
// and the organizer see it. A ladder game is.
func TestAScrimmageIsNeverLogged(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[log]\nladder = true\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	subA, subB := passed(t, st, cfg, a.ID, "a.py"), passed(t, st, cfg, b.ID, "b.py")
	dir := filepath.Join(st.Dir, ScrimmagesDir, "1", "game-1")
	writeGame(t, dir, 3, []string{"a1", "b2"}, "black")
	g, err := st.AddGame(ctx, ScrimmageGame, dir, Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.LogGame(ctx, g); err == nil || !strings.Contains(err.Error(), "not logged") {
		t.Errorf("a scrimmage's game logged: %v", err)
	}
	if signed, size, err := st.FinalLogCheckpoint(ctx); err != nil || signed != nil || size != 0 {
		t.Errorf("the log after a scrimmage: %d entries, %v", size, err)
	}
	lg := logLadderGame(t, st, 1)
	data, err := eventlog.Entry(ctx, st.r, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"kind":"ladder"`) || !strings.Contains(string(data), lg.Dir) {
		t.Errorf("the ladder game's entry: %s", data)
	}
}
