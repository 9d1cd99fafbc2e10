package event

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/eventlog"
)

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
	g, err := st.AddGame(ctx, LadderGame, dir, Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.LogGame(ctx, g); err != nil {
		t.Fatal(err)
	}
	return g
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
	g, err := st.AddGame(ctx, ScrimmageGame, dir, Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID})
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
