package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/gobuild"
)

// gameOf is what a match decided, turn by turn, without what timing or
// the sandbox changes: each turn's side, state, answer, verdict and move,
// and the result.
func gameOf(t *testing.T, dir string) []string {
	t.Helper()
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lines {
		var v struct {
			Type, Side, StateSha256, Answer, Verdict, Move, Line string
			Ply                                                  int
			Result                                               *struct {
				Winner, Reason string
				Plies, Turns   int
			}
		}
		if err := l.Decode(&v); err != nil {
			t.Fatal(err)
		}
		switch v.Type {
		case "turn", "exchange", "ask":
			out = append(out, fmt.Sprintf("%d %s %s %q %q %s %s", v.Ply, v.Side, v.StateSha256, v.Answer, v.Line, v.Verdict, v.Move))
		case "footer":
			r, _ := json.Marshal(v.Result)
			out = append(out, string(r))
		}
	}
	return out
}

// A match on the cluster is the match Docker plays: a Code Clash match (a
// process a turn) and a chess match (a line game, its bots living the
// whole game on the attach stream), the same bots and seeds, give the
// same game turn for turn, and the transcript says where it was played.
// The command runs with arena's ServiceAccount alone.
func TestMatchesOnTheClusterAreDockersGames(t *testing.T) {
	t.Parallel()
	kubeconfig, image := clustertest.Kubeconfig(t)
	_, bots := arenaWithBots(t, "legal")
	line, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	lineBot := filepath.Join(t.TempDir(), "line")
	if err := os.WriteFile(lineBot, line, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		game, bot string
		rules     []string
	}{
		{"codeclash", filepath.Join(bots, "legal"), nil},
		{"chess", lineBot, []string{"--rule", "maxPlies=30"}},
	} {
		play := func(where string, global ...string) (string, string) {
			out := filepath.Join(t.TempDir(), where)
			args := append(global, "match", "--sandbox", where, "--cpus", "0.5", "--game", g.game, "--white", g.bot, "--black", g.bot, "--image", image,
				"--seed", "11", "--signing-key", "none", "--quiet", "--out", out)
			code, stdout, stderr := runArena(append(args, g.rules...)...)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d\n%s%s", g.game, where, code, stdout, stderr)
			}
			return out, stderr
		}
		k, warned := play("kubernetes", "--kubeconfig", kubeconfig, "--namespace", clustertest.Namespace, "--image-pull-policy", "Never")
		d, _ := play("docker")
		if warned != "" {
			t.Errorf("%s on the cluster said on stderr:\n%s", g.game, warned)
		}
		kg, dg := gameOf(t, k), gameOf(t, d)
		if strings.Join(kg, "\n") != strings.Join(dg, "\n") || len(kg) < 10 {
			t.Errorf("%s: the cluster's game (%d turns) is not Docker's (%d):\n%s\n---\n%s", g.game, len(kg), len(dg), strings.Join(kg, "\n"), strings.Join(dg, "\n"))
		}
		lines, _ := transcript.ReadFile(filepath.Join(k, transcript.FileName))
		var h transcript.Header
		if err := lines[0].Decode(&h); err != nil || h.Sandbox["backend"] != "kubernetes" || h.Sandbox["serverVersion"] == "" {
			t.Errorf("%s: the header's sandbox says %v (%v)", g.game, h.Sandbox, err)
		}
	}
}

// A tournament on the cluster killed with SIGKILL resumes as on Docker:
// the same standings, and no Pod of either run left (the resumed run
// sweeps the killed one's).
func TestATournamentOnTheClusterResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	kubeconfig, image := clustertest.Kubeconfig(t)
	cs := clustertest.Client(t)
	tournamentResumes(t, image, []string{"--kubeconfig", kubeconfig, "--namespace", clustertest.Namespace, "--image-pull-policy", "Never"},
		// Half a core a box: two games' four Pods fit the test node's two
		// cores (the scheduler places a game's two Pods one by one, so two
		// games that each hold one Pod of a full node would wait for each
		// other until their start timed out: docs/kubernetes.md).
		[]string{"--sandbox", "kubernetes", "--cpus", "0.5"}, func(dir string) (int, error) { return clustertest.Count(cs, "org.arenabots.arena.tournament", dir) })
}
