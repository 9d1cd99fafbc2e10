package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
)

// A tournament of bots handed in as source builds each once; a match of two
// of them afterwards builds nothing; a bot that does not build loses its
// games with the reason shown; rerun rebuilds from the cache and refuses a
// changed source.
func TestSourceBotsAreBuiltOncePerTournament(t *testing.T) {
	t.Parallel()
	_, image := dockertest.Engine(t)
	arena := gobuild.MustStatic(t, "./cmd/arena")
	root, _ := gobuild.ModuleRoot()
	walker, err := os.ReadFile(filepath.Join(root, "harness", "build", "testdata", "walker.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir, cache := t.TempDir(), t.TempDir()
	bots := filepath.Join(dir, "bots")
	os.MkdirAll(bots, 0o755)
	for _, name := range []string{"ann", "bob", "cid"} {
		os.WriteFile(filepath.Join(bots, name+".py"), append([]byte("# "+name+"\n"), walker...), 0o644)
	}
	os.WriteFile(filepath.Join(bots, "dud.bad"), []byte("nothing\n"), 0o644)
	langsFile := filepath.Join(dir, "languages.txt")
	os.WriteFile(langsFile, []byte(langs.DefaultTable()+".bad | echo 'dud.bad:1: error: this never builds'; exit 2 | bot | {dir}/bot | - | echo bad 1.0\n"), 0o644)
	common := []string{"--image", image, "--game", "tiles", "--rule", "turns=20", "--languages", langsFile, "--build-cache", cache}
	env := append(os.Environ(), "ARENA_SIGNING_KEY=none")
	arenaRun := func(args ...string) (string, error) {
		cmd := exec.Command(arena, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := arenaRun(append([]string{"tournament", "--out", filepath.Join(dir, "t"), "--games-per-pair", "2", "-q", bots}, common...)...)
	if err != nil {
		t.Fatalf("arena tournament: %v\n%s", err, out)
	}
	if n := strings.Count(out, "built as .py (Python 3."); n != 3 || strings.Contains(out, "from the build cache") ||
		!strings.Contains(out, "dud did not build (it loses its games): exit status 2:\ndud.bad:1: error: this never builds") {
		t.Fatalf("%d builds reported:\n%s", n, out)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 3 {
		t.Fatalf("%d cache entries, want 3", len(entries))
	}
	if !strings.Contains(out, "dud ") || !strings.Contains(out, "   6    0    0    6 ") {
		t.Fatalf("the bot that did not build should lose its 6 games:\n%s", out)
	}

	m := filepath.Join(dir, "m")
	out, err = arenaRun(append([]string{"match", "--white", filepath.Join(bots, "ann.py"), "--black", filepath.Join(bots, "bob.py"), "--out", m, "-q"}, common...)...)
	if err != nil || strings.Count(out, "from the build cache") != 2 {
		t.Fatalf("arena match: %v\n%s", err, out)
	}
	out, err = arenaRun("rerun", m, "--ply", "5", "--bot", filepath.Join(bots, "ann.py"), "--languages", langsFile, "--build-cache", cache)
	if err != nil || !strings.Contains(out, "the run reproduces the recorded move and verdict") {
		t.Fatalf("arena rerun: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(bots, "ann.py"), append([]byte("# changed\n"), walker...), 0o644)
	out, err = arenaRun("rerun", m, "--ply", "5", "--bot", filepath.Join(bots, "ann.py"), "--languages", langsFile, "--build-cache", cache)
	if err == nil || !strings.Contains(out, "sha256") {
		t.Fatalf("a changed source was re-run: %v\n%s", err, out)
	}
}
