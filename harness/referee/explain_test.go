package referee

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
)

// crash runs a program that an exception ends and returns its exit code and
// stderr, as a turn records them.
func crash(t *testing.T, prog, name, src string, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		t.Skipf("%s is not installed", prog)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, append(args, name)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("%s %s: want it to fail, got %v\n%s", prog, name, err, stderr.String())
	}
	return exit.ExitCode(), stderr.String()
}

func TestAnUncaughtExceptionIsExplainedAsACrash(t *testing.T) {
	t.Parallel()
	proto := codeclash.Game{}.Protocol().Files
	cases := []struct {
		name, prog, file, src string
		args                  []string
		runtime, last         string // last: how the exception's line starts
	}{
		{"python", "python3", "bot.py", "import json\n\ndef choose(state):\n    raise RuntimeError(\"boom\")\n\nchoose({})\n", nil,
			"Python", "RuntimeError: boom"},
		{"python chained", "python3", "bot.py", "try:\n    {}['board']\nexcept KeyError as e:\n    raise ValueError(\"no board\\nsecond line\") from e\n", nil,
			"Python", "ValueError: no board"},
		{"node", "node", "bot.js", "function choose() { throw new TypeError(\"boom\"); }\nchoose();\n", nil,
			"Node.js", "TypeError: boom"},
		{"node throws a string", "node", "bot.js", "throw \"boom\";\n", nil, "Node.js", "boom"},
		{"java", "java", "Bot.java", "public class Bot { public static void main(String[] a) { throw new IllegalStateException(\"boom\"); } }\n", nil,
			"Java", "java.lang.IllegalStateException: boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, stderr := crash(t, c.prog, c.file, c.src, c.args...)
			if code != 1 {
				t.Fatalf("%s exits %d on an uncaught exception, not 1:\n%s", c.prog, code, stderr)
			}
			u, ok := UncaughtException(stderr)
			if !ok || u.Runtime != c.runtime || !strings.HasPrefix(u.Last, c.last) {
				t.Fatalf("UncaughtException = %+v, %v; want %s, %q, in:\n%s", u, ok, c.runtime, c.last, stderr)
			}
			// The rules' reading of exit 1 stands: replay recomputes it.
			rep := sandbox.Report{ExitCode: code, Stderr: sandbox.Tail{Data: []byte(stderr), Total: int64(len(stderr))}}
			j := JudgeTurn(nil, proto, rep)
			if j.Verdict != rules.BotRejectedState || !j.Review {
				t.Fatalf("the verdict changed: %+v", j)
			}
			e, ok := ExplainExit(proto, j.Verdict, code, stderr)
			if !ok {
				t.Fatalf("no explanation for:\n%s", stderr)
			}
			for _, want := range []string{"the bot crashed with an uncaught " + c.runtime + " exception (" + u.Last + ")",
				`the rules count exit 1 as "rejected the state"`} {
				if !strings.Contains(e.Detail, want) {
					t.Errorf("detail %q does not say %q", e.Detail, want)
				}
			}
			if !strings.Contains(e.Fix, "catch errors and exit 3 (bot error)") || !strings.Contains(e.Fix, "fix the crash") {
				t.Errorf("fix %q", e.Fix)
			}
		})
	}
}

// A Python script that does not parse never ran: its file, its line and
// the error are named, and the fix is the syntax error's, whatever its exit
// code is read as (and the crash advice of catching errors cannot apply).
func TestASyntaxErrorIsNamedWithItsLine(t *testing.T) {
	t.Parallel()
	proto := codeclash.Game{}.Protocol().Files
	code, stderr := crash(t, "python3", "bot.py", "import sys\n\ndef choose(:\n    pass\n")
	e, ok := ExplainExit(proto, rules.BotRejectedState, code, stderr)
	if !ok || !strings.HasPrefix(e.Detail, "bot.py, line 3: SyntaxError: ") || !strings.Contains(e.Detail, "never ran") ||
		!strings.HasPrefix(e.Fix, "fix the syntax error at bot.py line 3") || strings.Contains(e.Fix, "catch errors") {
		t.Errorf("%+v %v for:\n%s", e, ok, stderr)
	}
	// A line game's bot too (no exit codes of its own).
	if e, ok := ExplainExit(nil, rules.Crash, code, stderr); !ok || !strings.Contains(e.Detail, "line 3: SyntaxError") {
		t.Errorf("a line game's syntax error: %+v %v", e, ok)
	}
}

func TestExplainExitLeavesOtherTurnsAlone(t *testing.T) {
	t.Parallel()
	proto := codeclash.Game{}.Protocol().Files
	trace := "Traceback (most recent call last):\n  File \"/bot/bot.py\", line 3, in <module>\n    main()\nRuntimeError: boom\n"
	cases := []struct {
		name    string
		p       *rules.FileProtocol
		verdict rules.Verdict
		exit    int
		stderr  string
	}{
		{"a bot that says the state was malformed", proto, rules.BotRejectedState, 1, "state.json: no board\n"},
		{"a bot that says so quietly", proto, rules.BotRejectedState, 1, ""},
		{"a trace with exit 3", proto, rules.BotError, 3, trace},
		{"a trace with another exit code", proto, rules.Crash, 7, trace},
		{"a line game", nil, rules.Crash, 1, trace},
		{"a verdict decided before the exit code", proto, rules.Timeout, 1, trace},
	}
	for _, c := range cases {
		if e, ok := ExplainExit(c.p, c.verdict, c.exit, c.stderr); ok {
			t.Errorf("%s: explained as %+v", c.name, e)
		}
	}
	if u, ok := UncaughtException("reading the state\nexit: bad state\n"); ok {
		t.Errorf("a plain message is taken for %+v", u)
	}
	// A tail that kept only the end of a long trace still shows a crash.
	if u, ok := UncaughtException("    f()\n  File \"/bot/bot.py\", line 9, in f\n    f()\n  [Previous line repeated 996 more times]\nRecursionError: maximum recursion depth exceeded\n"); !ok ||
		u.Last != "RecursionError: maximum recursion depth exceeded" {
		t.Errorf("a cut trace: %+v, %v", u, ok)
	}
}

func TestTheQuotedExceptionIsPrintable(t *testing.T) {
	t.Parallel()
	u, ok := UncaughtException("Traceback (most recent call last):\n  File \"bot.py\", line 1, in <module>\nValueError: \x1b[2J" + strings.Repeat("x", 300) + "\n")
	if !ok || strings.ContainsRune(u.Last, '\x1b') || len([]rune(u.Last)) > 160 || !strings.HasPrefix(u.Last, "ValueError: ?[2J") {
		t.Fatalf("%q, %v", u.Last, ok)
	}
}
