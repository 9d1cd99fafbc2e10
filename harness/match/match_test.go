package match_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
)

// fixture is the Code Clash fixture bot running under the given mode name.
func fixture(t testing.TB, mode string) *submission.Bot {
	t.Helper()
	return submissiontest.Fixture(t, "./internal/testbots/ccfixture", mode)
}

type setup struct {
	limits  sandbox.Limits
	policy  match.Policy
	seed    uint64
	rules   map[string]string
	timeout time.Duration
	// local plays on the local backend: for what the runner and referee
	// decide whatever the sandbox (the docker backend's own facts are the
	// conformance suite's).
	local bool
}

func play(t *testing.T, white, black *submission.Bot, s setup) (transcript.Result, string) {
	t.Helper()
	var backend sandbox.Backend
	var labels map[string]string
	if s.local {
		backend = &local.Backend{Dir: t.TempDir()}
	} else {
		cli, image := dockertest.Engine(t)
		labels = dockertest.Labels(t)
		backend = docker.New(cli, image)
		defer dockertest.NoLeftovers(t, cli, labels)
	}
	dir := t.TempDir()
	if s.limits == (sandbox.Limits{}) {
		s.limits = sandbox.DefaultLimits()
		s.limits.TurnTimeout = 2 * time.Second
		s.limits.Memory = 128 * sandbox.MiB
	}
	ctx := context.Background()
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	res, err := match.Run(ctx, match.Config{
		Game: codeclash.Game{}, Rules: s.rules, Seed: s.seed,
		White: white, Black: black,
		Backend: backend, Limits: s.limits, OnFault: s.policy,
		Dir: dir, ArenaVersion: "test", Labels: labels,
	})
	if err != nil {
		t.Fatalf("match: %v", err)
	}
	if _, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName)); err != nil {
		t.Fatalf("transcript does not verify: %v", err)
	}
	var onDisk transcript.Result
	data, err := os.ReadFile(filepath.Join(dir, transcript.ResultFile))
	if err != nil || json.Unmarshal(data, &onDisk) != nil || onDisk.Winner != res.Winner || onDisk.Reason != res.Reason {
		t.Fatalf("result.json %s does not match the result %+v (%v)", data, res, err)
	}
	return res, dir
}

func TestLegalBotsPlayToAResultAndKeepTheirDataFiles(t *testing.T) {
	t.Parallel()
	res, dir := play(t, fixture(t, "legal"), fixture(t, "legal"), setup{seed: 1})
	if res.Reason == transcript.ReasonAborted || len(res.Faults) != 0 {
		t.Fatalf("result %+v", res)
	}
	if res.Reason != rules.ReasonKingCaptured && res.Reason != rules.ReasonMaxPlies && res.Reason != rules.ReasonNoLegalMove {
		t.Fatalf("reason %q", res.Reason)
	}
	// The legal fixture exits 3 whenever its data file is missing, so a clean
	// game proves the file persisted; the blobs hold every content it had.
	lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	blobs := 0
	for _, l := range lines {
		if l.Type != transcript.TypeTurn {
			continue
		}
		var turn transcript.Turn
		l.Decode(&turn)
		for _, df := range turn.DataFiles {
			data, err := os.ReadFile(filepath.Join(dir, transcript.BlobDir, df.SHA256))
			if err != nil {
				t.Fatalf("ply %d: blob of %s missing: %v", turn.Ply, df.Name, err)
			}
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != df.SHA256 {
				t.Fatalf("blob %s holds other content", df.SHA256)
			}
			blobs++
		}
	}
	if blobs == 0 {
		t.Fatal("no data files recorded")
	}
}

// Every verdict a bot can earn ends the match against it. What the runner
// and referee decide from the facts (an answer, an exit code) is played on
// the local backend; what only a real sandbox produces (a signal, the memory
// limit, the deadline, the game directory seen from outside) in Docker.
func TestEveryVerdictIsProducedAndChargedToTheFaultingSide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode    string
		verdict rules.Verdict
		reason  string
		docker  bool
	}{
		{"illegal", rules.IllegalMove, "not in your own back two rows", false},
		{"garbage", rules.InvalidOutput, "not valid JSON", false},
		{"silent", rules.InvalidOutput, "move.json was not written", false},
		{"exit-1", rules.BotRejectedState, "malformed", false},
		{"exit-2", rules.IllegalMove, "its own move is illegal", false},
		{"exit-3", rules.BotError, "internal error", false},
		{"exit-42", rules.Crash, "exit code 42", false},
		{"segv", rules.Crash, "signal 11", true},
		{"hog", rules.OutOfMemory, "memory limit", true},
		{"sleeper", rules.Timeout, "time limit", true},
		{"two-files", rules.DataFileViolation, "at most 1 is allowed", true},
		{"big-data", rules.DataFileViolation, "10485761 bytes", true},
	}
	for _, c := range cases {
		t.Run(c.mode+" as black", func(t *testing.T) {
			t.Parallel()
			s := setup{local: !c.docker}
			if c.verdict == rules.OutOfMemory {
				// The memory limit, not the clock, must stop the hog, however
				// slowly a loaded host lets it allocate.
				s.limits = sandbox.DefaultLimits()
				s.limits.TurnTimeout = 20 * time.Second
				s.limits.Memory = 128 * sandbox.MiB
			}
			res, _ := play(t, fixture(t, "legal"), fixture(t, c.mode), s)
			if res.Winner != transcript.WinnerWhite || res.Reason != string(c.verdict) {
				t.Fatalf("winner %s reason %s, want white by %s (%+v)", res.Winner, res.Reason, c.verdict, res)
			}
			if len(res.Faults) != 1 || res.Faults[0].Side != "black" || res.Faults[0].Ply != 2 || res.Faults[0].Verdict != string(c.verdict) {
				t.Fatalf("faults %+v", res.Faults)
			}
			if !strings.Contains(res.Faults[0].Reason, c.reason) {
				t.Fatalf("reason %q does not mention %q", res.Faults[0].Reason, c.reason)
			}
			if c.verdict == rules.BotRejectedState && !res.Faults[0].Review {
				t.Fatalf("a bot-rejected-state fault is not flagged for review")
			}
		})
	}
	t.Run("a fault by white is charged to white", func(t *testing.T) {
		t.Parallel()
		res, _ := play(t, fixture(t, "garbage"), fixture(t, "legal"), setup{local: true})
		if res.Winner != transcript.WinnerBlack || res.Reason != string(rules.InvalidOutput) || res.Faults[0].Side != "white" || res.Faults[0].Ply != 1 {
			t.Fatalf("%+v", res)
		}
	})
}

func TestRandomMovePolicyContinuesAndRecordsFaults(t *testing.T) {
	t.Parallel()
	res, dir := play(t, fixture(t, "legal"), fixture(t, "late-fault"), setup{policy: match.RandomMove, seed: 3})
	if res.Reason == transcript.ReasonAborted || res.Reason == string(rules.InvalidOutput) {
		t.Fatalf("the match did not continue past the fault: %+v", res)
	}
	if len(res.Faults) == 0 {
		t.Fatalf("no faults recorded: %+v", res)
	}
	for _, f := range res.Faults {
		if f.Side != "black" || f.Verdict != string(rules.InvalidOutput) || f.Ply < 20 {
			t.Fatalf("unexpected fault %+v", f)
		}
	}
	lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	substituted := 0
	for _, l := range lines {
		var turn transcript.Turn
		if l.Type == transcript.TypeTurn && l.Decode(&turn) == nil && turn.Substituted {
			if turn.Played == "" || turn.Verdict != string(rules.InvalidOutput) {
				t.Fatalf("substituted turn %d lacks its move or verdict", turn.Ply)
			}
			substituted++
		}
	}
	if substituted != len(res.Faults) {
		t.Fatalf("%d substituted turns for %d faults", substituted, len(res.Faults))
	}
}

// normalized drops what differs between two runs of the same match: times,
// memory readings, and the hashes that cover them.
func normalized(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"prev", "wallMs", "hostWaitMs", "harnessMs", "cpuMs", "peakMemory", "startedAt", "finishedAt"} {
			delete(m, k)
		}
		if r, ok := m["result"].(map[string]any); ok {
			delete(r, "durationMs")
		}
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

func TestSameSeedSameBotsSameTranscript(t *testing.T) {
	t.Parallel()
	_, a := play(t, fixture(t, "legal"), fixture(t, "legal"), setup{seed: 99})
	_, b := play(t, fixture(t, "legal"), fixture(t, "legal"), setup{seed: 99})
	na, nb := normalized(t, a), normalized(t, b)
	if len(na) != len(nb) {
		t.Fatalf("%d lines vs %d", len(na), len(nb))
	}
	for i := range na {
		if na[i] != nb[i] {
			t.Fatalf("line %d differs:\n%s\n%s", i+1, na[i], nb[i])
		}
	}
}

func TestCancelledMatchIsAbortedAndLeavesNothing(t *testing.T) {
	t.Parallel()
	res, dir := play(t, fixture(t, "slow-300"), fixture(t, "slow-300"), setup{timeout: 2 * time.Second})
	if res.Reason != transcript.ReasonAborted || res.Winner != transcript.WinnerNone || !strings.Contains(res.AbortReason, "interrupted") {
		t.Fatalf("%+v", res)
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var foot transcript.Footer
	lines[len(lines)-1].Decode(&foot)
	if foot.Result.Reason != transcript.ReasonAborted {
		t.Fatalf("footer %+v", foot)
	}
}

func TestMissingImageAbortsWithoutChargingABot(t *testing.T) {
	t.Parallel()
	cli, _ := dockertest.Engine(t)
	dir := t.TempDir()
	res, err := match.Run(context.Background(), match.Config{
		Game: codeclash.Game{}, White: fixture(t, "legal"), Black: fixture(t, "legal"),
		Backend: docker.New(cli, "arena-no-such-image:0"), Limits: sandbox.DefaultLimits(), Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != transcript.ReasonAborted || len(res.Faults) != 0 || !strings.Contains(res.AbortReason, "arena-no-such-image:0") {
		t.Fatalf("%+v", res)
	}
	if _, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName)); err != nil {
		t.Fatalf("an aborted match's transcript does not verify: %v", err)
	}
}

// example loads one of the example bots the way a user would.
func example(t *testing.T, path string) *submission.Bot {
	t.Helper()
	if !strings.HasSuffix(path, ".py") {
		path = gobuild.MustStatic(t, path)
	} else {
		root, err := gobuild.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(root, path)
	}
	b, err := submission.Load(path, submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExampleBotsPlayCleanly(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{
		{"./examples/random", "examples/python/random_bot.py"},
		{"examples/python/random_bot.py", "./examples/greedy"},
		{"./examples/greedy", "./examples/random"},
	}
	for _, p := range pairs {
		t.Run(filepath.Base(p[0])+" vs "+filepath.Base(p[1]), func(t *testing.T) {
			res, _ := play(t, example(t, p[0]), example(t, p[1]), setup{seed: 11})
			if len(res.Faults) != 0 || res.Reason == transcript.ReasonAborted {
				t.Fatalf("%+v", res)
			}
		})
	}
}
