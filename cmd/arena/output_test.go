package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/words"
)

// Two teams hand in bot.py; one crashes with an uncaught exception. The bots
// are named by their directories, the verdict is the rules' (exit 1 rejects
// the state), and the live output says the bot crashed, shows the fault
// with its stderr, and counts turns as result.json does.
func TestMatchShowsTheFaultThatDecidedIt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	random, err := os.ReadFile(filepath.Join(root, "examples", "python", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for team, src := range map[string][]byte{
		"teamA": []byte("#!/usr/bin/env python3\nimport json, sys\n\ndef choose(state):\n    raise RuntimeError(\"boom\")\n\nchoose(json.load(open(sys.argv[1])))\n"),
		"teamB": random,
	} {
		os.MkdirAll(filepath.Join(dir, team), 0o755)
		if err := os.WriteFile(filepath.Join(dir, team, "bot.py"), src, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "m")
	code, stdout, stderr := runArena("match", "--sandbox", "local", "--signing-key", "none", "--seed", "3", "--out", out,
		"--white", filepath.Join(dir, "teamB", "bot.py"), "--black", filepath.Join(dir, "teamA", "bot.py"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res transcript.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.White.Name != "teamB" || res.Black.Name != "teamA" || res.Reason != "bot-rejected-state" || len(res.Faults) != 1 || res.Plies != 0 {
		t.Fatalf("result: %+v", res)
	}
	f := res.Faults[0]
	wants := []string{
		"codeclash: teamB (white) vs teamA (black)",
		`the bot crashed with an uncaught Python exception (RuntimeError: boom); the rules count exit 1 as "rejected the state"`,
		"teamB (white) wins: bot-rejected-state, after " + words.Plural(f.Ply, "turn") + " (0 play plies: the fault came in setup)\n",
		"the fault that decided it: ply " + strconv.Itoa(f.Ply) + ", black (teamA), setup: bot-rejected-state\n",
		"fix: catch errors and exit 3 (bot error), or fix the crash",
		"    Traceback (most recent call last):\n",
		"    RuntimeError: boom\n",
	}
	for _, w := range wants {
		if !strings.Contains(stdout, w) {
			t.Errorf("the live output does not say %q:\n%s", w, stdout)
		}
	}
	if f.Ply != res.Turns+1 {
		t.Errorf("fault at ply %d after %d turns", f.Ply, res.Turns)
	}
	if regexp.MustCompile(`\b1 [a-z ]*(plies|turns)\b`).MatchString(stdout) {
		t.Errorf("a singular count in the plural:\n%s", stdout)
	}
}

// A rerun that does not reproduce the recorded turn fails (exit 1), and says
// how many runs ended with each verdict in words.
func TestRerunThatDoesNotReproduceFails(t *testing.T) {
	t.Parallel()
	_, bots := arenaWithBots(t, "legal")
	dir := t.TempDir()
	armed, count := filepath.Join(dir, "armed"), filepath.Join(dir, "count")
	// The bot plays legally, except that once armed its first run exits 3.
	flaky := filepath.Join(dir, "flaky")
	script := "#!/bin/sh\nn=$(cat " + count + " 2>/dev/null || echo 0)\n" +
		"if [ -e " + armed + " ]; then echo $((n+1)) > " + count + "; if [ \"$n\" = 0 ]; then echo changed >&2; exit 3; fi; fi\n" +
		"exec " + filepath.Join(bots, "legal") + " \"$@\"\n"
	if err := os.WriteFile(flaky, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m")
	if code, stdout, stderr := runArena("match", "--sandbox", "local", "--signing-key", "none", "--seed", "1", "--max-plies", "1", "--quiet",
		"--out", out, "--white", flaky, "--black", filepath.Join(bots, "legal")); code != 0 {
		t.Fatalf("match: exit %d\n%s\n%s", code, stdout, stderr)
	}
	rerun := func(args ...string) (int, string, string) {
		return runArena(append([]string{"rerun", out, "--ply", "1", "--bot", "me=" + flaky}, args...)...)
	}
	if code, stdout, stderr := rerun(); code != 0 || !strings.Contains(stdout, "the run reproduces the recorded move and verdict") {
		t.Fatalf("a reproduced turn: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := os.WriteFile(armed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := rerun("--repeat", "3")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
	}
	for _, want := range []string{"verdicts: 2 ok, 1 bot-error\n", "2 of 3 runs reproduce the recorded move and verdict"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout does not say %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "not reproduced: 1 of 3 runs differ from the record") {
		t.Errorf("stderr: %s", stderr)
	}
	os.Remove(count)
	if code, stdout, _ := rerun("--json"); code != exitFailed || !strings.Contains(stdout, `"attempts"`) {
		t.Errorf("--json: exit %d\n%s", code, stdout)
	}
}

func TestCountWords(t *testing.T) {
	for _, c := range []struct {
		in   map[string]int
		want string
	}{
		{map[string]int{"ok": 5}, "5 ok"},
		{map[string]int{"timeout": 1, "ok": 3}, "3 ok, 1 timeout"},
		{map[string]int{"timeout": 2, "crash": 2, "ok": 1}, "2 crash, 2 timeout, 1 ok"},
	} {
		if got := replay.CountWords(c.in); got != c.want {
			t.Errorf("%v: %q, want %q", c.in, got, c.want)
		}
	}
	for n, want := range map[int]string{0: "0 plies", 1: "1 ply", 2: "2 plies", 12: "12 turns"} {
		word := "ply"
		if n == 12 {
			word = "turn"
		}
		if got := words.Plural(n, word); got != want {
			t.Errorf("words.Plural(%d, %s) = %q", n, word, got)
		}
	}
}
