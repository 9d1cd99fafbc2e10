package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arenabots/arena/sandbox"
)

// shell is a Spec running script with /bin/sh in dir, its own process group.
func shell(dir, script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Timeout: 5 * time.Second, Tail: 1024, Reaping: ReapGroup}
}

// unsettable is a limit the kernel refuses to anyone, root included: no hard
// limit on open files may exceed fs.nr_open.
var unsettable = Rlimit{Resource: unix.RLIMIT_NOFILE, Value: ^uint64(0)}

// noChildLeft fails the test if this process still has a child, running or
// unreaped.
func noChildLeft(t *testing.T) {
	t.Helper()
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
	if !errors.Is(err, syscall.ECHILD) {
		t.Fatalf("a child is left: wait4 returned pid %d, error %v; want ECHILD", pid, err)
	}
}

func TestRunReportsHowTheBotEnded(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		script   string
		timeout  time.Duration
		exit     int
		signal   int
		timedOut bool
		stdout   string
	}{
		{script: "echo out; echo err >&2; exit 3", exit: 3, stdout: "out\n"},
		{script: "kill -9 $$", exit: -1, signal: 9},
		{script: "exec sleep 10", timeout: 100 * time.Millisecond, exit: -1, signal: 9, timedOut: true},
	} {
		s := shell(dir, c.script)
		if c.timeout > 0 {
			s.Timeout = c.timeout
		}
		res, err := Run(context.Background(), s)
		if err != nil {
			t.Fatalf("%q: %v", c.script, err)
		}
		if res.ExitCode != c.exit || res.Signal != c.signal || res.TimedOut != c.timedOut || string(res.Stdout.Data) != c.stdout {
			t.Errorf("%q: got exit %d signal %d timedOut %v stdout %q", c.script, res.ExitCode, res.Signal, res.TimedOut, res.Stdout.Data)
		}
	}
	noChildLeft(t)
}

func TestRunAndSessionSetTheLimits(t *testing.T) {
	dir := t.TempDir()
	limits := []Rlimit{{Resource: unix.RLIMIT_NOFILE, Value: 64}, {Resource: unix.RLIMIT_CORE, Value: 0}}
	s := shell(dir, "ulimit -n; ulimit -Hn; ulimit -c")
	s.Rlimits = limits
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout.Data); got != "64\n64\n0\n" {
		t.Errorf("run: the bot saw limits %q, want 64, 64 and 0", got)
	}

	s = shell(dir, `read q; echo "$(ulimit -n) $(ulimit -c)"`)
	s.Rlimits = limits
	ss, err := StartSession(s)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ss.Ask("limits?", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Line != "64 0" {
		t.Errorf("session: the bot saw limits %q, want \"64 0\"", ex.Line)
	}
	if _, err := ss.Stop(); err != nil {
		t.Fatal(err)
	}
	noChildLeft(t)
}

func TestALimitThatCannotBeSetFailsTheStartAndLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	s := shell(dir, "exec sleep 30")
	s.Rlimits = []Rlimit{{Resource: unix.RLIMIT_CORE, Value: 0}, unsettable}
	checkErr := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "set RLIMIT_NOFILE of the bot") {
			t.Fatalf("%s: got error %v, want one saying RLIMIT_NOFILE could not be set", what, err)
		}
		var ee *ExecError
		if errors.As(err, &ee) {
			t.Fatalf("%s: a limit that cannot be set is charged to the bot: %v", what, err)
		}
		noChildLeft(t)
	}

	start := time.Now()
	res, err := Run(context.Background(), s)
	checkErr("run", err)
	if res.StartError != "" {
		t.Errorf("run: StartError %q for a failure of ours", res.StartError)
	}
	ss, err := StartSession(s)
	checkErr("session", err)
	if ss != nil {
		t.Error("session: a session is returned with the error")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the bots were not killed: the failed starts took %v", took)
	}
}

func TestAFailingStartedHookFailsTheStartAndLeavesNoProcess(t *testing.T) {
	s := shell(t.TempDir(), "exec sleep 30")
	hookErr := errors.New("no OOM score for you")
	s.Started = func(int) error { return hookErr }
	if _, err := Run(context.Background(), s); !errors.Is(err, hookErr) {
		t.Fatalf("run: got %v, want the hook's error", err)
	}
	noChildLeft(t)
	if _, err := StartSession(s); !errors.Is(err, hookErr) {
		t.Fatalf("session: got %v, want the hook's error", err)
	}
	noChildLeft(t)
}

func TestABotThatCannotBeExecutedIsTheBots(t *testing.T) {
	dir := t.TempDir()
	s := Spec{Path: filepath.Join(dir, "missing"), Args: []string{"missing"}, Dir: dir, Timeout: time.Second, Reaping: ReapGroup}
	res, err := Run(context.Background(), s)
	if err != nil || res.ExitCode != -1 || !strings.Contains(res.StartError, "not found") {
		t.Errorf("run: got error %v, exit %d, StartError %q; want the bot's StartError", err, res.ExitCode, res.StartError)
	}
	_, err = StartSession(s)
	var ee *ExecError
	if !errors.As(err, &ee) {
		t.Errorf("session: got %v, want an *ExecError", err)
	}
}

func TestAFailedScratchWipeIsReported(t *testing.T) {
	dir := t.TempDir()
	game, scratch, missing := filepath.Join(dir, "game"), filepath.Join(dir, "scratch"), filepath.Join(dir, "missing")
	if err := os.Mkdir(game, 0o700); err != nil {
		t.Fatal(err)
	}
	// A scratch "directory" that is a file cannot be listed, so not wiped.
	if err := os.WriteFile(scratch, []byte("left by the bot"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WipeScratch([]string{missing}); err != nil {
		t.Errorf("a missing scratch directory: %v", err)
	}
	_, err := RunTurn(context.Background(), game, []string{missing, scratch}, sandbox.Turn{}, shell(game, "exit 0"), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "wipe "+scratch) {
		t.Fatalf("got %v, want the failed wipe of %s", err, scratch)
	}
}

func TestSessionAnswersAndStops(t *testing.T) {
	ss, err := StartSession(shell(t.TempDir(), `while read l; do echo "got $l"; done`))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a", "b"} {
		ex, err := ss.Ask(q, 5*time.Second)
		if err != nil || ex.Line != "got "+q || ex.TimedOut || ex.Exited {
			t.Fatalf("ask %q: got %+v, error %v", q, ex, err)
		}
	}
	rep, err := ss.Stop()
	if err != nil || rep.ExitCode != -1 {
		t.Fatalf("stop: got exit %d, error %v; want -1 (stopped by us)", rep.ExitCode, err)
	}
	noChildLeft(t)
}
