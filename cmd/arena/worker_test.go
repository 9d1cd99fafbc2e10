package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/tournament"
)

// A tournament spread over three worker processes, two of them enrolled
// while the coordinator runs and started at once, one killed with SIGKILL
// while it plays and the coordinator itself killed and restarted midway,
// gives the standings a run on one machine gives: every game played and
// counted once. The workers ride out the restart and stop when the
// tournament is over.
func TestWorkersGiveTheStandingsOfALocalRun(t *testing.T) {
	t.Parallel()
	arena, bots := arenaWithBots(t, "legal", "shuffle", "slow-40")
	dir := t.TempDir()
	env := append(os.Environ(), "ARENA_SIGNING_KEY=none")
	common := []string{"--sandbox", "local", "--seed", "9", "--rule", "maxPlies=30", "-q", "--min-free", "0"}
	local := exec.Command(arena, append([]string{"tournament", "--out", filepath.Join(dir, "local"), bots}, common...)...)
	local.Env = env
	if out, err := local.CombinedOutput(); err != nil {
		t.Fatalf("the local run: %v\n%s", err, out)
	}

	spread := filepath.Join(dir, "spread")
	enroll := func(w string) {
		out, err := exec.Command(arena, "enroll", "--out", spread, "--creds", filepath.Join(dir, w+".creds"), w).CombinedOutput()
		if err != nil {
			t.Fatalf("arena enroll %s: %v\n%s", w, err, out)
		}
	}
	enroll("w1")
	// A fixed port: the restarted coordinator listens where the workers
	// look for it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	coordArgs := append([]string{"tournament", "--out", spread, "--listen", addr, "--ack-wait", "2s", bots}, common[:len(common)-2]...)
	coordArgs = append(coordArgs, "--min-free", "0")
	type coordinator struct {
		cmd   *exec.Cmd
		url   string
		done  chan error
		out   *strings.Builder
		lines chan string
	}
	startCoordinator := func(progress bool) *coordinator {
		args := coordArgs
		if progress {
			args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-q" })
		}
		cmd := exec.Command(arena, args...)
		cmd.Env = env
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		c := &coordinator{cmd: cmd, done: make(chan error, 1), out: &strings.Builder{}, lines: make(chan string, 100)}
		joinLine := regexp.MustCompile(`games go to workers at (\S+) `)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := joinLine.FindStringSubmatch(sc.Text()); m != nil {
				c.url = m[1]
				break
			}
		}
		if c.url == "" {
			t.Fatal("the coordinator printed no address for its workers")
		}
		go func() {
			for sc.Scan() {
			}
		}()
		lines := c.lines
		go func() {
			out := bufio.NewScanner(stdout)
			for out.Scan() {
				c.out.WriteString(out.Text() + "\n")
				select {
				case lines <- out.Text():
				default:
				}
			}
			close(lines)
			c.done <- cmd.Wait()
		}()
		return c
	}
	first := startCoordinator(true)

	var workers []*exec.Cmd
	var outs []*strings.Builder
	for _, w := range []string{"w1", "w2", "w3"} {
		if w != "w1" {
			// Enrolled while the coordinator runs and started at once, as
			// a script does: admitted by its first connection.
			enroll(w)
		}
		cmd := exec.Command(arena, "worker", "--creds", filepath.Join(dir, w+".creds"), "--join", first.url, "--sandbox", "local")
		cmd.Env = env
		var out strings.Builder
		cmd.Stderr, cmd.Stdout = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		workers, outs = append(workers, cmd), append(outs, &out)
		t.Cleanup(func() { cmd.Process.Kill() })
	}
	time.Sleep(300 * time.Millisecond)
	workers[0].Process.Signal(syscall.SIGKILL) // mid-game, most likely: nothing may be lost
	workers[0].Wait()
	// The coordinator dies once two games are in: the rest is played after
	// its restart.
	timeout := time.After(time.Minute)
wait:
	for {
		select {
		case line, ok := <-first.lines:
			if !ok || strings.HasPrefix(line, "[2/6]") {
				break wait
			}
		case <-timeout:
			t.Fatalf("two games did not finish in a minute:\n%s\nworkers:\n%s\n%s", first.out.String(), outs[1].String(), outs[2].String())
		}
	}
	first.cmd.Process.Signal(syscall.SIGKILL)
	<-first.done
	if !strings.Contains(first.out.String(), "plays it") {
		t.Fatalf("the coordinator did not show which worker plays what:\n%s", first.out.String())
	}
	second := startCoordinator(false)
	select {
	case err := <-second.done:
		if err != nil {
			t.Fatalf("the restarted coordinator: %v\n%s", err, second.out.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the spread tournament did not finish")
	}
	// The workers hear that the tournament is over and stop by themselves.
	for i, w := range workers[1:] {
		exited := make(chan error, 1)
		go func() { exited <- w.Wait() }()
		select {
		case err := <-exited:
			if err != nil || !strings.Contains(outs[i+1].String(), "the tournament is over") {
				t.Fatalf("worker %d: %v\n%s", i+2, err, outs[i+1].String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("worker %d did not stop after the tournament:\n%s", i+2, outs[i+1].String())
		}
	}
	standings := func(d string) string {
		out, err := exec.Command(arena, "standings", filepath.Join(dir, d)).CombinedOutput()
		if err != nil {
			t.Fatalf("arena standings %s: %v\n%s", d, err, out)
		}
		return string(out)
	}
	l1, s := standings("local"), standings("spread")
	if l1 != s || !regexp.MustCompile(`\b(\d+) of (\d+) games played`).MatchString(s) || strings.Count(s, "unplayed") != 1 || !strings.Contains(s, ", 0 unplayed, 0 to play") {
		t.Fatalf("standings differ:\nlocal\n%s\nspread\n%s", l1, s)
	}
	report, err := os.ReadFile(filepath.Join(spread, "report.html"))
	if err != nil || !strings.Contains(string(report), "<h2>Workers</h2>") {
		t.Fatalf("the report lists no workers (%v)", err)
	}
}

// arena enroll refuses what would lose or leak a key: a bad name, a name
// enrolled already, a credentials file that exists.
func TestEnrollRefusals(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t")
	creds := filepath.Join(dir, "w1.creds")
	if code, stdout, stderr := runArena("enroll", "--out", out, "--creds", creds, "w1"); code != 0 || !strings.Contains(stdout, "enrolled w1") {
		t.Fatalf("enroll: %d\n%s%s", code, stdout, stderr)
	}
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials: %v %v", fi, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"enroll", "--out", out, "--creds", filepath.Join(dir, "x.creds"), "../w2"}, "worker name"},
		{[]string{"enroll", "--out", out, "--creds", filepath.Join(dir, "again.creds"), "w1"}, "enrolled already"},
		{[]string{"enroll", "--out", out, "--creds", creds, "w2"}, "exists"},
		{[]string{"worker", "--creds", filepath.Join(dir, "missing.creds"), "--sandbox", "local"}, "--creds"},
		{[]string{"worker", "--creds", creds, "--sandbox", "local"}, "--join URL"},
	} {
		code, stdout, stderr := runArena(c.args...)
		if code == 0 || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("arena %s: exit %d, want an error with %q:\n%s%s", strings.Join(c.args, " "), code, c.want, stdout, stderr)
		}
	}
	// The refused enrolment of w2 (its creds file existed) left no key.
	if _, err := os.Stat(filepath.Join(out, "workers", "w2.pub")); err == nil {
		t.Fatal("a refused enrolment left a key behind")
	}
}

// A suspended worker is listed with why, and let in again by name.
func TestWorkersAreListedAndReadmitted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t")
	if code, stdout, stderr := runArena("enroll", "--out", out, "--creds", filepath.Join(t.TempDir(), "w1.creds"), "w1"); code != 0 {
		t.Fatalf("enroll: %d\n%s%s", code, stdout, stderr)
	}
	if err := roster.Suspend(filepath.Join(out, "workers"), roster.Suspension{Worker: "w1", At: time.Now(), Game: 4, Reason: "it does not replay: ply 3"}); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := runArena("workers", "list", out); code != 0 || !strings.Contains(stdout, "worker w1 suspended at") || !strings.Contains(stdout, "game 4, it does not replay") {
		t.Errorf("workers list: %d\n%s", code, stdout)
	}
	if code, stdout, stderr := runArena("workers", "readmit", out, "w1"); code != 0 || !strings.Contains(stdout, "w1 is admitted again") {
		t.Errorf("readmit: %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := runArena("workers", "list", out); code != 0 || !regexp.MustCompile(`(?m)^w1\s+admitted$`).MatchString(stdout) {
		t.Errorf("workers list after the readmission: %d\n%s", code, stdout)
	}
	if code, _, stderr := runArena("workers", "readmit", out, "w1"); code != exitFailed || !strings.Contains(stderr, "not suspended") {
		t.Errorf("readmitting a worker that is not suspended: %d %s", code, stderr)
	}
	// In an event's directory a game is named as the event's pages name it.
	if err := os.WriteFile(filepath.Join(out, event.ConfigFile), []byte("game = \"codeclash\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := roster.Suspend(filepath.Join(out, "workers"), roster.Suspension{Worker: "w1", At: time.Now(), Game: event.JobsLadder + 4*12 + 2, Reason: "it does not replay: ply 3"}); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := runArena("workers", "list", out); code != 0 || !strings.Contains(stdout, "ladder pair 12, game 2, it does not replay") {
		t.Errorf("workers list of an event: %d\n%s", code, stdout)
	}
}

func TestATournamentWithGamesUnplayedExitsOne(t *testing.T) {
	for _, c := range []struct {
		sum  tournament.Summary
		want string
	}{
		{tournament.Summary{Total: 6, Done: 6}, ""},
		{tournament.Summary{Total: 6, Done: 4, Unplayed: 2}, "2 games of 6 unplayed"},
		{tournament.Summary{Total: 6, Done: 4, Pending: 2, Interrupted: true}, "interrupted"},
	} {
		err := summaryExit(&c.sum)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.sum, err)
			}
			continue
		}
		if code := exitCode(err, io.Discard); code != exitFailed || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: exit %d, %v; want 1 saying %q", c.sum, code, err, c.want)
		}
	}
}
