package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/enginetest"
	"github.com/arenabots/arena/internal/gobuild"
)

// Under gVisor's runsc, on an engine of its own that has it: the doctor
// passes and says so, a Code Clash match and a tiles match between bots
// built from C source are played, replay consistently with the runtime in
// their headers, and a disputed turn runs again under the recorded runtime.
func TestMatchesUnderGVisor(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a second Docker engine with gVisor: not in -short")
	}
	_, image := dockertest.Engine(t)
	e := enginetest.StartGVisor(t)
	e.Load(t, image)
	arena, bots := arenaWithBots(t, "legal")
	dir := t.TempDir()
	env := append(e.Env(), "ARENA_SIGNING_KEY=none")
	run := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(arena, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	header := func(m string) map[string]string {
		t.Helper()
		rep, err := replay.File(filepath.Join(m, "transcript.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return rep.Header.Sandbox
	}

	out, err := run("doctor", "--image", image, "--runtime", enginetest.GVisor, "--out", dir)
	if err != nil || !strings.Contains(out, "runsc (gVisor) at ") || !strings.Contains(out, "under gVisor (Linux version") {
		t.Fatalf("arena doctor under runsc: %v\n%s", err, out)
	}

	cc := filepath.Join(dir, "cc")
	legal := filepath.Join(bots, "legal")
	if out, err := run("match", "--white", legal, "--black", legal, "--image", image, "--runtime", enginetest.GVisor, "--seed", "7", "--out", cc, "-q"); err != nil {
		t.Fatalf("arena match codeclash under runsc: %v\n%s", err, out)
	}
	if got := header(cc); got["runtime"] != enginetest.GVisor || got["runtimeKind"] != "gvisor" {
		t.Fatalf("header's sandbox %v", got)
	}
	if out, err := run("replay", cc); err != nil || !strings.Contains(out, "consistent: codeclash") {
		t.Fatalf("arena replay: %v\n%s", err, out)
	}
	// Without --runtime the rerun takes the recorded one.
	if out, err := run("rerun", cc, "--ply", "12", "--bot", legal); err != nil || !strings.Contains(out, "the run reproduces the recorded move and verdict") {
		t.Fatalf("arena rerun: %v\n%s", err, out)
	}

	root, _ := gobuild.ModuleRoot()
	walker, err := os.ReadFile(filepath.Join(root, "harness", "build", "testdata", "walker.c"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	for _, n := range []string{"up", "down"} {
		if err := os.WriteFile(filepath.Join(src, n+".c"), append([]byte("/* "+n+" */\n"), walker...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tiles := filepath.Join(dir, "tiles")
	out, err = run("match", "--game", "tiles", "--rule", "turns=20", "--white", filepath.Join(src, "up.c"), "--black", filepath.Join(src, "down.c"),
		"--image", image, "--runtime", enginetest.GVisor, "--build-cache", filepath.Join(dir, "cache"), "--out", tiles, "-q")
	if err != nil || strings.Count(out, "built as .c") != 2 {
		t.Fatalf("arena match tiles from C source under runsc: %v\n%s", err, out)
	}
	if got := header(tiles); got["runtime"] != enginetest.GVisor {
		t.Fatalf("header's sandbox %v", got)
	}
	if out, err := run("replay", tiles); err != nil || !strings.Contains(out, "consistent: tiles") {
		t.Fatalf("arena replay: %v\n%s", err, out)
	}
}
