package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/internal/gobuild"
)

// arena duel's exit codes say what was decided: 0 H1 (or every pair
// played without an SPRT), 1 H0, 2 bad usage, 3 undecided within --pairs;
// arena export refuses what it cannot write, leaving no file behind.
func TestDuelExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	random, err := os.ReadFile(gobuild.MustStatic(t, "./examples/random"))
	if err != nil {
		t.Fatal(err)
	}
	var bots []string
	for _, name := range []string{"a", "b"} {
		p := filepath.Join(dir, name, "random")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, random, 0o755); err != nil {
			t.Fatal(err)
		}
		bots = append(bots, strings.ToUpper(name)+"="+p)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	local := []string{"duel", "--sandbox", "local", "--seed", "3", "--max-plies", "1"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"one bot", []string{"duel", "--out", out("u1"), bots[0]}, 2, "name two bots"},
		{"bad sprt", []string{"duel", "--out", out("u2"), "--sprt", "elo0=5,elo1=1", bots[0], bots[1]}, 2, "elo0 (5) must be less than elo1 (1)"},
		{"openings for a seeded game", append(local, "--out", out("u3"), "--openings", "acf3", bots[0], bots[1]), 2, "start from the seed"},
		// Games of one ply after the setup: every one a draw.
		{"every pair played", append(local, "--out", out("p"), "--pairs", "1", bots[0], bots[1]), 0, "B 0-2-0 (W-D-L) in 1 pairs [0, 0, 1, 0, 0]"},
		{"undecided", append(local, "--out", out("s"), "--pairs", "1", "--sprt", "elo0=0,elo1=5", bots[0], bots[1]), 3, "did not decide"},
		{"H0", append(local, "--out", out("h0"), "--sprt", "elo0=0,elo1=200", bots[0], bots[1]), 1, "H0 accepted"},
		// A duel is a tournament directory: export reads it, and says why
		// Code Clash has no PGN.
		{"export", []string{"export", "--format", "pgn", "--out", out("p.pgn"), out("p")}, 2, "codeclash tournament: it exports as neither PGN nor PDN"},
		{"export without a path", []string{"export", "--format", "pgn"}, 2, "name one match or tournament"},
	}
	for _, c := range cases {
		code, stdout, stderr := runArena(c.args...)
		if code != c.code || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s%s", c.name, code, c.code, c.want, stdout, stderr)
		}
	}
	if _, err := os.Stat(out("p.pgn")); !os.IsNotExist(err) {
		t.Errorf("a refused export left a file: %v", err)
	}
}
