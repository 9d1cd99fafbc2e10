package match_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return "(none)"
}

// BusyHostEnv runs the busy-host test: it fills every core of the machine,
// so scripts/test.sh runs it on its own, after the other tests.
const busyHostEnv = "ARENA_BUSY_HOST"

// pythonBot writes a Python Code Clash bot: the random example, after prelude.
func spinnerBot(t *testing.T, name, prelude string) *submission.Bot {
	t.Helper()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "examples", "python", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	shebang, rest, _ := strings.Cut(string(src), "\n")
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(shebang+"\n"+prelude+rest), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hogs starts n containers that spin on the CPU, each in a cgroup of its own
// as other games and validations are (a hog in the host's own cgroup would
// get one group's share and hide the problem). stop removes them.
func hogs(t *testing.T, cli *client.Client, image string, n int, labels map[string]string) (stop func()) {
	t.Helper()
	ctx := context.Background()
	var ids []string
	stop = func() {
		for _, id := range ids {
			if err := cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}); err != nil {
				t.Errorf("remove hog: %v", err)
			}
		}
		ids = nil
	}
	t.Cleanup(stop)
	for i := range n {
		c, err := cli.ContainerCreate(ctx, &container.Config{Image: image, Entrypoint: []string{"/bin/sh", "-c", "while :; do :; done"}, Labels: labels},
			&container.HostConfig{NetworkMode: "none"}, nil, nil, fmt.Sprintf("arena-hog-%d-%d", os.Getpid(), i+time.Now().Nanosecond()))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return stop
}

// A verdict depends on the bot alone: with containers spinning on every core
// beside it, a Python bot whose turns need 300 ms of CPU under a 1 s limit
// loses no turn on time (its deadline moves past the host's wait, which the
// transcript shows), a bot that sleeps 2 s still times out, and the same
// game on a quiet host ends the same way.
func TestABusyHostDecidesNoGame(t *testing.T) {
	if os.Getenv(busyHostEnv) != "1" {
		t.Skipf("fills every core: scripts/test.sh runs it alone (%s=1)", busyHostEnv)
	}
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	defer dockertest.NoLeftovers(t, cli, labels)
	backend := docker.New(cli, image)
	spin := spinnerBot(t, "spin_bot.py", "import time as _t\n_end = _t.process_time() + 0.3\nwhile _t.process_time() < _end:\n    pass\n")
	sleeper := spinnerBot(t, "sleep_bot.py", "import time as _t\n_t.sleep(2)\n")
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = time.Second
	lim.Memory = 256 * sandbox.MiB
	play := func(white *submission.Bot, seed uint64) (transcript.Result, []transcript.Turn) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "m")
		res, err := match.Run(context.Background(), match.Config{
			Game: codeclash.Game{}, Seed: seed, White: white, Black: fixture(t, "legal"),
			Backend: backend, Limits: lim, Dir: dir, ArenaVersion: "test", Labels: labels,
		})
		if err != nil {
			t.Fatal(err)
		}
		lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
		if err != nil {
			t.Fatal(err)
		}
		var turns []transcript.Turn
		for _, l := range lines {
			if l.Type != transcript.TypeTurn {
				continue
			}
			var tn transcript.Turn
			if err := l.Decode(&tn); err != nil {
				t.Fatal(err)
			}
			turns = append(turns, tn)
		}
		return res, turns
	}
	moves := func(turns []transcript.Turn) string {
		var b strings.Builder
		for _, tn := range turns {
			fmt.Fprintf(&b, "%d %s %s %s\n", tn.Ply, tn.Side, tn.Verdict, tn.Move)
		}
		return b.String()
	}

	stop := hogs(t, cli, image, 3*runtime.NumCPU(), labels)
	busy, busyTurns := play(spin, 7)
	if busy.Reason == transcript.ReasonAborted {
		t.Fatalf("the busy host's game was aborted: %s", busy.AbortReason)
	}
	var slowest, waited float64
	for _, tn := range busyTurns {
		if tn.Side != "white" {
			continue
		}
		if tn.Verdict != "ok" {
			t.Errorf("ply %d on a busy host: %s (%s), wall %.0f ms, host wait %.0f ms, cpu %.0f ms", tn.Ply, tn.Verdict, tn.Reason, tn.WallMs, tn.HostWaitMs, tn.CPUMs)
		}
		slowest, waited = max(slowest, tn.WallMs), max(waited, tn.HostWaitMs)
	}
	if slowest <= float64(lim.TurnTimeout.Milliseconds()) {
		t.Fatalf("no turn of the busy host took longer than the limit (slowest %.0f ms): the hogs proved nothing", slowest)
	}
	if waited <= 0 {
		t.Fatal("the transcript shows no wait for the CPU")
	}
	t.Logf("busy host: slowest turn %.0f ms of wall time, the longest wait %.0f ms", slowest, waited)
	sleepRes, sleepTurns := play(sleeper, 7)
	if first := sleepTurns[0]; first.Verdict != "timeout" || sleepRes.Winner != transcript.WinnerBlack {
		t.Errorf("a bot that sleeps 2 s on a busy host: %s (%s), %+v", first.Verdict, first.Reason, sleepRes)
	}
	stop()

	quiet, quietTurns := play(spin, 7)
	if quiet.Winner != busy.Winner || quiet.Reason != busy.Reason {
		t.Errorf("the busy host's game ended %s (%s), the quiet host's %s (%s)", busy.Winner, busy.Reason, quiet.Winner, quiet.Reason)
	}
	b, q := strings.Split(moves(busyTurns), "\n"), strings.Split(moves(quietTurns), "\n")
	for i := range max(len(b), len(q)) {
		if i >= len(b) || i >= len(q) || b[i] != q[i] {
			t.Errorf("the games part at turn %d: busy %q, quiet %q", i+1, at(b, i), at(q, i))
			break
		}
	}
}
