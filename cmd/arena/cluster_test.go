package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// same game turn for turn, and the transcript says where it was played; a
// turn the cluster played reruns on Docker as it was, and the reverse.
// The command runs with arena's ServiceAccount alone.
func TestMatchesOnTheClusterAreDockersGames(t *testing.T) {
	t.Parallel()
	image := clustertest.Image(t)
	builtForRunArena(t)
	_, bots := arenaWithBots(t, "legal")
	line, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	lineBot := filepath.Join(t.TempDir(), "line")
	if err := os.WriteFile(lineBot, line, 0o755); err != nil {
		t.Fatal(err)
	}
	type match struct {
		game, bot string
		rules     []string
		docker    string // the game Docker played
	}
	matches := []*match{
		{game: "codeclash", bot: filepath.Join(bots, "legal")},
		{game: "chess", bot: lineBot, rules: []string{"--rule", "maxPlies=30"}},
	}
	play := func(g *match, where string, global ...string) (string, string) {
		out := filepath.Join(t.TempDir(), where)
		args := append(global, "match", "--sandbox", where, "--cpus", "0.5", "--game", g.game, "--white", g.bot, "--black", g.bot, "--image", image,
			"--seed", "11", "--signing-key", "none", "--quiet", "--out", out)
		code, stdout, stderr := runArena(append(args, g.rules...)...)
		if code != 0 {
			t.Fatalf("%s on %s: exit %d\n%s%s", g.game, where, code, stdout, stderr)
		}
		return out, stderr
	}
	// Docker's games first: the cluster is taken once they are played.
	for _, g := range matches {
		g.docker, _ = play(g, "docker")
	}
	kubeconfig, _ := clustertest.Kubeconfig(t)
	cluster := []string{"--kube-config", kubeconfig, "--kube-namespace", clustertest.Namespace, "--kube-pull-policy", "Never"}
	for _, g := range matches {
		k, warned := play(g, "kubernetes", cluster...)
		d := g.docker
		if warned != "" {
			t.Errorf("%s on the cluster said on stderr:\n%s", g.game, warned)
		}
		kg, dg := gameOf(t, k), gameOf(t, d)
		if strings.Join(kg, "\n") != strings.Join(dg, "\n") || len(kg) < 10 {
			t.Errorf("%s: the cluster's game (%d turns) is not Docker's (%d):\n%s\n---\n%s", g.game, len(kg), len(dg), strings.Join(kg, "\n"), strings.Join(dg, "\n"))
		}
		// A turn the cluster played reruns on Docker, and the reverse:
		// the same move and verdict.
		for _, r := range []struct {
			dir, where string
			global     []string
		}{{k, "docker", nil}, {d, "kubernetes", cluster}} {
			args := append(append([]string{}, r.global...), "rerun", r.dir, "--ply", "5", "--bot", g.bot, "--sandbox", r.where)
			if code, stdout, stderr := runArena(args...); code != 0 {
				t.Errorf("%s: a turn rerun on %s: exit %d\n%s%s", g.game, r.where, code, stdout, stderr)
			}
		}
		lines, _ := transcript.ReadFile(filepath.Join(k, transcript.FileName))
		var h transcript.Header
		if err := lines[0].Decode(&h); err != nil || h.Sandbox["backend"] != "kubernetes" || h.Sandbox["serverVersion"] == "" {
			t.Errorf("%s: the header's sandbox says %v (%v)", g.game, h.Sandbox, err)
		}
	}
}

// A tournament on the cluster killed with SIGKILL resumes as on Docker:
// every game played once, and no Pod of the killed run left (the resumed
// run sweeps them). That the standings are a straight run's is proven on
// Docker: the cluster plays Docker's games.
func TestATournamentOnTheClusterResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	builtArena(t) // built before the cluster is taken
	kubeconfig, image := clustertest.Kubeconfig(t)
	cs := clustertest.Client(t)
	tournamentResumes(t, image, false, []string{"--kube-config", kubeconfig, "--kube-namespace", clustertest.Namespace, "--kube-pull-policy", "Never"},
		// Half a core a box: two games' four Pods fill the test node's two
		// cores (no room for a warm Pod: the pool gives way to the games).
		[]string{"--sandbox", "kubernetes", "--cpus", "0.5"}, func(dir string) (int, error) { return clustertest.Count(cs, "org.arenabots.arena.tournament", dir) })
}

// arena doctor --sandbox kubernetes checks the cluster with arena's
// ServiceAccount: every row passes on the test cluster (its bridge drops
// the Pods' packets, so a bot reaches nothing); in a namespace where arena
// has no rights the rights row says which it lacks and the rest is
// skipped; where the Pods reach each other the network row fails;
// --bench measures a Pod's start and a turn beside Docker's.
func TestTheDoctorChecksTheCluster(t *testing.T) {
	t.Parallel()
	builtForRunArena(t)
	kubeconfig, image := clustertest.Kubeconfig(t)
	cs := clustertest.Client(t)
	global := []string{"--kube-config", kubeconfig, "--kube-pull-policy", "Never"}
	doctor := func(ns string, args ...string) (int, []sandbox.Check, string) {
		code, out, errs := runArena(append(append(global, "--kube-namespace", ns, "doctor", "--sandbox", "kubernetes", "--image", image, "--out", t.TempDir()), args...)...)
		var checks []sandbox.Check
		if slices.Contains(args, "--json") {
			if err := json.Unmarshal([]byte(out), &checks); err != nil {
				t.Fatalf("doctor --json printed %q (%v); stderr:\n%s", out, err, errs)
			}
		}
		return code, checks, out + errs
	}
	code, checks, out := doctor(clustertest.Namespace, "--json")
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		// A loaded host may overshoot a short deadline: the doctor warns,
		// and that is the truth about this host, not a failure.
		if c.Status != sandbox.OK && !(c.Name == "turn deadline" && c.Status == sandbox.Warn) {
			t.Errorf("%s: %s %s (fix: %s)", c.Name, c.Status, c.Detail, c.Fix)
		}
	}
	want := []string{"cluster", "rights", "admission", "runtime class", "network policy", "hardened pod", "pod network", "out-of-memory detection", "turn deadline", "free space"}
	if code != 0 || !slices.Equal(names, want) {
		t.Errorf("exit %d, rows %v, want %v:\n%s", code, names, want, out)
	}
	for _, c := range checks {
		if c.Name == "pod network" && !strings.Contains(c.Detail, "another pod") {
			t.Errorf("the network probe tried no other pod: %s", c.Detail)
		}
		// Each row says what it could not check: the API server it did not
		// probe, the Pod Security level arena's rights cannot read.
		if c.Name == "pod network" && !strings.Contains(c.Detail, "the API server") {
			t.Errorf("the network row says nothing of the API server: %s", c.Detail)
		}
		if c.Name == "admission" && !strings.Contains(c.Detail, "Pod Security") {
			t.Errorf("the admission row says nothing of the namespace's Pod Security level: %s", c.Detail)
		}
	}

	// A cluster whose Pods reach each other fails the network row, and so
	// the doctor.
	t.Run("open network", func(t *testing.T) {
		clustertest.OpenNetwork(t)
		code, checks, out := doctor(clustertest.Namespace, "--json")
		i := slices.IndexFunc(checks, func(c sandbox.Check) bool { return c.Name == "pod network" })
		if code != 1 || i < 0 || checks[i].Status != sandbox.Fail || !strings.Contains(checks[i].Detail, "reached another pod") {
			t.Errorf("with the Pods reaching each other: exit %d\n%s", code, out)
		}
	})

	code, checks, out = doctor("arena-nothing-here", "--json")
	if code != 1 || len(checks) < 3 || checks[1].Status != sandbox.Fail || !strings.Contains(checks[1].Detail, "may not create pods") || checks[2].Status != sandbox.Skip {
		t.Errorf("in a namespace without rights: exit %d\n%s", code, out)
	}

	code, _, out = doctor(clustertest.Namespace, "--bench", "--runs", "10")
	for _, row := range []string{"pod create to running", "attach to first byte", "pod open (all)", "pod delete", "kubernetes backend turn", "docker backend turn"} {
		if !strings.Contains(out, row) {
			t.Errorf("the bench has no %q row", row)
		}
	}
	if code != 0 {
		t.Errorf("doctor --bench: exit %d\n%s", code, out)
	}
	// No box's Pod is left, warm ones included (the test holds the
	// cluster: every box's Pod is the doctor's).
	pods, err := cs.CoreV1().Pods(clustertest.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelOwner})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			t.Errorf("the doctor left pod %s (%s)", p.Name, p.Status.Phase)
		}
	}
}

// arena validate on the cluster: a submission's matches against the
// built-in opponent (arena itself, 70 MB, sent over the attach stream in
// parts) are played in Pods, and the report is Docker's: it passes.
func TestValidateOnTheCluster(t *testing.T) {
	t.Parallel()
	builtForRunArena(t)
	_, bots := arenaWithBots(t, "legal")
	kubeconfig, image := clustertest.Kubeconfig(t)
	good := filepath.Join(t.TempDir(), "good")
	if err := os.MkdirAll(good, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(bots, "legal"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(good, "legal"), data, 0o755)
	os.WriteFile(filepath.Join(good, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(good, "README.md"), []byte("Algorithm: first legal move. Build: go build. Data file: fixture.dat.\n"), 0o644)
	code, out, errs := runArena("--kube-config", kubeconfig, "--kube-namespace", clustertest.Namespace, "--kube-pull-policy", "Never",
		"validate", "--sandbox", "kubernetes", "--cpus", "0.5", "--image", image, "--turn-timeout", "2s", good)
	if code != 0 || !strings.Contains(out, "match as black") || !strings.Contains(out, "PASS") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	n, err := clustertest.Count(clustertest.Client(t), "org.arenabots.arena.validate", "good")
	if err != nil || n != 0 {
		t.Errorf("%d validation pods left (%v)", n, err)
	}
}

// Games at twice the room the namespace has (a ResourceQuota of two Pods:
// one game's, where two games are played at once) wait in the queue for
// it: every game is played, each on its first attempt, none charged with
// the cluster's refusals, and no Pod is left.
func TestGamesAtTwiceTheRoomWaitInTheQueue(t *testing.T) {
	t.Parallel()
	arena, bots := arenaWithBots(t, "legal", "shuffle", "slow-20")
	kubeconfig, image := clustertest.Kubeconfig(t)
	cs := clustertest.Client(t)
	ctx := context.Background()
	quotas := cs.CoreV1().ResourceQuotas(clustertest.Namespace)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "room-for-one-game"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}
	if _, err := quotas.Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := quotas.Delete(context.Background(), quota.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("remove the quota: %v", err)
		}
	})
	// A quota refuses every Pod until its controller has counted what the
	// namespace holds.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		q, err := quotas.Get(ctx, quota.Name, metav1.GetOptions{})
		if err == nil && q.Status.Hard != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quota was never counted: %v", err)
		}
	}
	out := filepath.Join(t.TempDir(), "t")
	cmd := exec.Command(arena, "--kube-config", kubeconfig, "--kube-namespace", clustertest.Namespace, "--kube-pull-policy", "Never",
		"tournament", "--sandbox", "kubernetes", "--cpus", "0.5", "--concurrency", "2", "--max-attempts", "1",
		"--max-plies", "16", "--image", image, "--seed", "5", "--signing-key", "none", "--out", out, bots)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a tournament at twice the namespace's room: %v\n%s", err, output)
	}
	state, err := tournament.Load(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Games) < 6 {
		t.Fatalf("%d games, want the schedule's 6", len(state.Games))
	}
	for _, g := range state.Games {
		if g.Status != tournament.Done || g.Attempts != 1 || g.Reason == transcript.ReasonAborted {
			t.Errorf("game %d: %s after %d attempts (%s)", g.ID, g.Status, g.Attempts, g.Reason)
		}
	}
	if n, err := clustertest.Count(cs, "org.arenabots.arena.tournament", out); err != nil || n != 0 {
		t.Errorf("%d Pods of the tournament left (%v)", n, err)
	}
}
