package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox/docker"
)

// runInProcess runs arena in this process, for a test that replaces one of
// the package's hooks (serveEvent). Never beside another run in this
// process (urfave/cli's setup writes its package's help flag and command):
// such a test is not parallel.
func runInProcess(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"arena"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// hostArena is the name of the arena runArena runs.
const hostArena = "arena-under-test"

// builtForRunArena builds the arena runArena runs, before a test takes what
// others wait for (the test cluster): the first build takes a while.
func builtForRunArena(t testing.TB) {
	t.Helper()
	if _, err := gobuild.Host("./cmd/arena", hostArena); err != nil {
		t.Fatal(err)
	}
}

// runArena runs arena with args, as its own process (under the race
// detector when the tests are), and returns its exit code, stdout and
// stderr. Its own process, not run in this one: urfave/cli's setup writes
// the package's help flag and command, and the log's destination is
// global, so runs in one process would wait on each other, and tests run
// arena many times beside each other.
func runArena(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	arena, err := gobuild.Host("./cmd/arena", hostArena)
	if err != nil {
		return exitFailed, "", err.Error()
	}
	cmd := exec.Command(arena, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	// Built with -race, it would sleep a second before it exits.
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode(), out.String(), errb.String()
	case err != nil:
		return exitFailed, out.String(), errb.String() + err.Error()
	}
	return exitOK, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join("..", "..", "rules", "codeclash", "testdata", "setup-step2-white.json")
	legal := filepath.Join(dir, "legal.json")
	os.WriteFile(legal, []byte(`{"move": {"to": [3, 3]}}`), 0o644)
	illegal := filepath.Join(dir, "illegal.json")
	os.WriteFile(illegal, []byte(`{"move": {"to": [1, 1]}}`), 0o644)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"phase": "play"}`), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		{"version", []string{"--version"}, 0, "arena "},
		{"help", []string{"--help"}, 0, "EXIT CODES"},
		{"unknown flag", []string{"--bogus"}, 2, "flag provided but not defined"},
		{"unknown command", []string{"dance"}, 2, ""},
		{"bad log level", []string{"--log-level", "loud", "rules", "explain"}, 2, "--log-level"},
		{"explain", []string{"rules", "explain"}, 0, "pawnReset"},
		{"unknown game", []string{"rules", "explain", "--game", "go"}, 2, `unknown game "go"`},
		{"legal", []string{"rules", "legal", state}, 0, `{"moves":[{"to":[3,0]}`},
		{"legal on a broken state", []string{"rules", "legal", broken}, 2, "playerColor is missing"},
		{"legal without a file", []string{"rules", "legal"}, 2, "one STATE.json"},
		{"check legal", []string{"rules", "check", state, legal}, 0, "legal: block [3,3]"},
		{"check illegal", []string{"rules", "check", state, illegal}, 1, "illegal-move: to [1,1] is not in the opponent's back two rows"},
		{"check a missing file", []string{"rules", "check", state, filepath.Join(dir, "nope.json")}, 2, "no such file"},
		{"unknown rule option", []string{"rules", "legal", "--rule", "castling=yes", state}, 2, `no rule option "castling"`},
		{"doctor against a dead socket", []string{"--docker-host", "unix://" + filepath.Join(dir, "none.sock"), "doctor"}, 1, "no Docker engine answered"},
		{"match without bots", []string{"match"}, 2, "--white is required"},
		{"match with a missing bot", []string{"match", "--white", filepath.Join(dir, "nobot"), "--black", legal}, 2, "no such file"},
		{"match with a bad policy", []string{"match", "--white", legal, "--black", legal}, 2, "no executable found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runArena(c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			if !strings.Contains(out+errs, c.want) {
				t.Fatalf("output does not mention %q\nstdout: %s\nstderr: %s", c.want, out, errs)
			}
			if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic:") {
				t.Fatalf("a stack trace reached the user:\n%s", errs)
			}
		})
	}
}

// builtArena is the arena binary and a directory with fixture bots in it.
func builtArena(t *testing.T) (arena, bots string) {
	return arenaWithBots(t, "legal", "slow-300")
}

// arenaWithBots is the arena binary and a new directory holding the fixture
// bot under each mode's name.
func arenaWithBots(t testing.TB, modes ...string) (arena, bots string) {
	t.Helper()
	arena = gobuild.MustStatic(t, "./cmd/arena")
	fixture := gobuild.MustStatic(t, "./internal/testbots/ccfixture")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	bots = t.TempDir()
	for _, mode := range modes {
		if err := os.WriteFile(filepath.Join(bots, mode), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return arena, bots
}

func TestMatchCommandPrintsTheResult(t *testing.T) {
	t.Parallel()
	_, image := dockertest.Engine(t)
	arena, bots := builtArena(t)
	out := filepath.Join(t.TempDir(), "m")
	cmd := exec.Command(arena, "match", "--white", filepath.Join(bots, "legal"), "--black", filepath.Join(bots, "legal"),
		"--image", image, "--seed", "5", "--out", out, "--json")
	key := filepath.Join(t.TempDir(), "signing.key")
	cmd.Env = append(os.Environ(), "ARENA_SIGNING_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("arena match: %v\n%s", err, stderr.String())
	}
	var res transcript.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("--json printed %q: %v", stdout.String(), err)
	}
	if res.Seed != 5 || res.Winner == "" || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(stderr.String(), "ok") {
		t.Fatalf("no live output on stderr with --json:\n%s", stderr.String())
	}

	// The same match, re-judged and one turn re-run in a fresh container.
	replayOut, err := exec.Command(arena, "replay", out).CombinedOutput()
	if err != nil || !strings.Contains(string(replayOut), "consistent: codeclash") || !strings.Contains(string(replayOut), "signed by") {
		t.Fatalf("arena replay: %v\n%s", err, replayOut)
	}
	rerun := exec.Command(arena, "rerun", out, "--ply", "20", "--bot", filepath.Join(bots, "legal"), "--repeat", "2")
	rerunOut, err := rerun.CombinedOutput()
	if err != nil || !strings.Contains(string(rerunOut), "2 of 2 runs reproduce the recorded move and verdict") {
		t.Fatalf("arena rerun: %v\n%s", err, rerunOut)
	}
}

// A match stopped by Ctrl-C, or by its output's reader going away (arena
// match | head), is aborted: the transcript says so and no container stays.
func TestInterruptedMatchIsAbortedWithoutLeftovers(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	arena, bots := builtArena(t)
	for _, c := range []struct {
		name string
		// stop ends the match once a turn is on record.
		stop func(cmd *exec.Cmd, stdout io.Closer)
	}{
		{"ctrl-c", func(cmd *exec.Cmd, _ io.Closer) { cmd.Process.Signal(syscall.SIGINT) }},
		{"stdout-closed", func(_ *exec.Cmd, stdout io.Closer) { stdout.Close() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "interrupted-"+c.name)
			cmd := exec.Command(arena, "match", "--white", filepath.Join(bots, "slow-300"), "--black", filepath.Join(bots, "slow-300"),
				"--image", image, "--out", out, "--signing-key", "none")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Read the live output until a turn is on record, however slowly
			// a loaded host starts the containers.
			lines := bufio.NewScanner(stdout)
			for lines.Scan() && !strings.Contains(lines.Text(), " ok ") {
			}
			c.stop(cmd, stdout)
			go io.Copy(io.Discard, stdout) // after a signal, drain what is left
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d (%v), want 1\n%s", code, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "match aborted: interrupted") {
				t.Fatalf("stderr: %s", stderr.String())
			}
			recs, err := transcript.ReadFile(filepath.Join(out, transcript.FileName))
			if err != nil {
				t.Fatalf("transcript: %v", err)
			}
			var foot transcript.Footer
			if err := recs[len(recs)-1].Decode(&foot); err != nil {
				t.Fatal(err)
			}
			if foot.Result.Reason != transcript.ReasonAborted || len(recs) < 3 {
				t.Fatalf("footer %+v after %d lines", foot.Result, len(recs))
			}
			n, err := docker.Count(context.Background(), cli, "org.arenabots.arena.match="+filepath.Base(out))
			if err != nil || n != 0 {
				t.Fatalf("%d containers left (%v)", n, err)
			}
		})
	}
}

func TestTournamentResumesAfterSIGKILLWithTheSameStandings(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	tournamentResumes(t, image, true, nil, nil, func(dir string) (int, error) {
		return docker.Count(context.Background(), cli, "org.arenabots.arena.tournament="+dir)
	})
}

// tournamentResumes plays a 4-bot tournament at concurrency 2 killed with
// SIGKILL after 3 games and resumed: every game played once, nothing of
// the run left in the sandbox (left counts the boxes of a run's directory
// name). With straightToo it is also played straight through, to the same
// standings (a fact of the runner and its store, whatever the sandbox:
// the cluster's games are Docker's, TestMatchesOnTheClusterAreDockersGames).
// global are the arena command's global flags, more the tournament's own
// (the sandbox).
func tournamentResumes(t *testing.T, image string, straightToo bool, global, more []string, left func(dir string) (int, error)) {
	t.Helper()
	arena, _ := builtArena(t)
	fixture, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/ccfixture"))
	if err != nil {
		t.Fatal(err)
	}
	bots := t.TempDir()
	for _, mode := range []string{"legal", "shuffle", "slow-20", "slow-40"} {
		os.WriteFile(filepath.Join(bots, mode), fixture, 0o755)
	}
	args := func(out string) []string {
		a := append(slices.Clone(global), "tournament", "--out", out, "--image", image, "--seed", "21", "--concurrency", "2",
			"--max-plies", "16", "--signing-key", "none")
		return append(append(a, more...), bots)
	}
	base := t.TempDir()
	straight, resumed := filepath.Join(base, "straight"), filepath.Join(base, "resumed")
	runs := []string{"resumed"}
	if straightToo {
		if out, err := exec.Command(arena, args(straight)...).CombinedOutput(); err != nil {
			t.Fatalf("uninterrupted tournament: %v\n%s", err, out)
		}
		runs = append(runs, "straight")
	}

	cmd := exec.Command(arena, args(resumed)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := exec.Command(arena, "standings", "--json", resumed).Output()
		var s struct{ Games map[string]int }
		if json.Unmarshal(out, &s) == nil && s.Games["done"] >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the tournament did not get going")
		}
		time.Sleep(250 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no cleanup at all
	cmd.Wait()
	out, err := exec.Command(arena, args(resumed)...).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "already played") {
		t.Fatalf("the second run did not resume:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(resumed, "standings.json"))
	if a, _ := os.ReadFile(filepath.Join(straight, "standings.json")); straightToo && (len(a) == 0 || string(a) != string(b)) {
		t.Fatalf("standings differ after resume:\n%s\n---\n%s", a, b)
	}
	var s struct{ Games map[string]int }
	json.Unmarshal(b, &s)
	if s.Games["total"] < 12 || s.Games["done"] != s.Games["total"] { // the schedule's 12, and a playoff's if first place was level
		t.Fatalf("games %v", s.Games)
	}
	for _, dir := range runs {
		n, err := left(dir)
		if err != nil || n != 0 {
			t.Fatalf("%s: %d boxes left (%v)", dir, n, err)
		}
	}
}

func TestValidateCommandExitCodes(t *testing.T) {
	t.Parallel()
	_, image := dockertest.Engine(t)
	arena, bots := builtArena(t)
	subs := t.TempDir()
	good := filepath.Join(subs, "good")
	os.MkdirAll(good, 0o755)
	data, _ := os.ReadFile(filepath.Join(bots, "legal"))
	os.WriteFile(filepath.Join(good, "legal"), data, 0o755)
	os.WriteFile(filepath.Join(good, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(good, "README.md"), []byte("Algorithm: first legal move. Build: go build. Data file: fixture.dat.\n"), 0o644)
	bad := filepath.Join(subs, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "legal"), data, 0o755)

	run := func(args ...string) (int, string) {
		cmd := exec.Command(arena, append([]string{"validate", "--image", image, "--turn-timeout", "2s"}, args...)...)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := run(good); code != 0 || !strings.Contains(out, "match as black") || !strings.Contains(out, "PASS") {
		t.Fatalf("good: exit %d\n%s", code, out)
	}
	code, out := run("--batch", subs)
	if code != 1 || !strings.Contains(out, "SUBMISSION") || !regexp.MustCompile(`bad +FAIL +source, readme`).MatchString(out) {
		t.Fatalf("batch: exit %d\n%s", code, out)
	}
	if code, out := run(filepath.Join(subs, "missing.zip")); code != 2 {
		t.Fatalf("missing: exit %d\n%s", code, out)
	}
}

func TestAnExplicitTurnTimeoutSetsALineGamesMoveTime(t *testing.T) {
	data, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	bot := filepath.Join(t.TempDir(), "legal")
	if err := os.WriteFile(bot, data, 0o755); err != nil {
		t.Fatal(err)
	}
	play := func(t *testing.T, extra ...string) (int, string, transcript.Header) {
		out := filepath.Join(t.TempDir(), "m")
		args := append([]string{"match", "--game", "chess", "--sandbox", "local", "--white", bot, "--black", bot,
			"--rule", "maxPlies=4", "--signing-key", "none", "--quiet", "--out", out}, extra...)
		code, _, errs := runArena(args...)
		var h transcript.Header
		if code == 0 {
			lines, err := transcript.ReadFile(filepath.Join(out, transcript.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if err := lines[0].Decode(&h); err != nil {
				t.Fatal(err)
			}
		}
		return code, errs, h
	}
	// The flag reaches settings.Settings only when it is given: 5s is also its
	// default, and set explicitly it still sets the line game's move time
	// (the rule itself is TestSettingsResolve's).
	code, errs, h := play(t, "--turn-timeout", "5s")
	if code != 0 || h.Rules["moveTime"] != "5s" || h.TimeControl == nil || h.TimeControl.MoveTime != 5*time.Second {
		t.Fatalf("exit %d (%s): rules %v, time control %+v", code, errs, h.Rules, h.TimeControl)
	}
	if code, errs, h := play(t); code != 0 || h.Rules["moveTime"] != "10s" {
		t.Fatalf("not set: exit %d (%s): rules %v", code, errs, h.Rules)
	}
}

// A library's error about a setting names the flag that gives it: the
// engine's address is --docker-host, the cluster's kubeconfig --kube-config.
func TestALibrarysErrorNamesTheFlag(t *testing.T) {
	t.Parallel()
	bot := filepath.Join(t.TempDir(), "bot")
	if err := os.WriteFile(bot, []byte("#!/bin/sh\necho a1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--docker-host", "unix:///nonexistent/docker.sock", "match", "--white", bot, "--black", bot}, "point --docker-host at one"},
		{[]string{"--kube-config", "/nonexistent/kubeconfig", "match", "--sandbox", "kubernetes", "--white", bot, "--black", bot}, "give --kube-config,"},
	} {
		code, _, errs := runArena(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("arena %s: exit %d, %q; want exit %d saying %q", strings.Join(c.args, " "), code, errs, exitUsage, c.want)
		}
	}
}
