package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/gobuild"
)

// A tournament spread over three worker processes, one killed with SIGKILL
// while it plays, gives the standings a run on one machine gives: every game
// played and counted once.
func TestWorkersGiveTheStandingsOfALocalRun(t *testing.T) {
	arena := gobuild.MustStatic(t, "./cmd/arena")
	fixture, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/ccfixture"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bots := filepath.Join(dir, "bots")
	os.MkdirAll(bots, 0o755)
	for _, mode := range []string{"legal", "shuffle", "slow-40"} {
		os.WriteFile(filepath.Join(bots, mode), fixture, 0o755)
	}
	env := append(os.Environ(), "ARENA_SIGNING_KEY=none")
	common := []string{"--sandbox", "local", "--seed", "9", "--rule", "maxPlies=30", "-q", "--min-free", "0"}
	local := exec.Command(arena, append([]string{"tournament", "--out", filepath.Join(dir, "local"), bots}, common...)...)
	local.Env = env
	if out, err := local.CombinedOutput(); err != nil {
		t.Fatalf("the local run: %v\n%s", err, out)
	}

	coord := exec.Command(arena, append([]string{"tournament", "--out", filepath.Join(dir, "spread"), "--listen", "127.0.0.1:0", "--ack-wait", "2s", bots}, common...)...)
	coord.Env = env
	stderr, err := coord.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var coordOut strings.Builder
	coord.Stdout = &coordOut
	if err := coord.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coord.Process.Kill(); coord.Wait() })
	joinLine := regexp.MustCompile(`arena worker --join (\S+) --tournament (\S+)`)
	sc := bufio.NewScanner(stderr)
	var url, name string
	for sc.Scan() {
		if m := joinLine.FindStringSubmatch(sc.Text()); m != nil {
			url, name = m[1], m[2]
			break
		}
	}
	if url == "" {
		t.Fatal("the coordinator printed no address for its workers")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	var workers []*exec.Cmd
	for _, w := range []string{"w1", "w2", "w3"} {
		cmd := exec.Command(arena, "worker", "--join", url, "--tournament", name, "--name", w, "--sandbox", "local")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, cmd)
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	time.Sleep(300 * time.Millisecond)
	workers[0].Process.Signal(syscall.SIGKILL) // mid-game, most likely: nothing may be lost
	done := make(chan error, 1)
	go func() { done <- coord.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the coordinator: %v\n%s", err, coordOut.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the spread tournament did not finish")
	}
	standings := func(d string) string {
		out, err := exec.Command(arena, "standings", filepath.Join(dir, d)).CombinedOutput()
		if err != nil {
			t.Fatalf("arena standings %s: %v\n%s", d, err, out)
		}
		return string(out)
	}
	l, s := standings("local"), standings("spread")
	if l != s || !strings.Contains(s, "6 of 6 games played") {
		t.Fatalf("standings differ:\nlocal\n%s\nspread\n%s", l, s)
	}
}
