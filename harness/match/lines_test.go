package match_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

func lineBot(t testing.TB, name string) *submission.Bot {
	t.Helper()
	return submissiontest.Fixture(t, "./internal/testbots/linefixture", name)
}

func playLines(t *testing.T, game string, white, black *submission.Bot, opts map[string]string, policy match.Policy) (transcript.Result, string) {
	t.Helper()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	g, err := rules.Lookup(game)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var before, after runtimeMem
	before.read()
	res, err := match.Run(context.Background(), match.Config{Game: g, Rules: opts, Seed: 3, White: white, Black: black,
		Backend: docker.New(cli, image), Limits: sandbox.DefaultLimits(), OnFault: policy, Dir: dir, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	after.read()
	if after.heap-before.heap > 64<<20 {
		t.Errorf("the harness heap grew by %d MiB", (after.heap-before.heap)>>20)
	}
	dockertest.NoLeftovers(t, cli, labels)
	rep, err := replay.File(dir)
	if err != nil || !rep.Consistent {
		t.Fatalf("replay: %v %s", err, rep.Problem())
	}
	return res, dir
}

func TestChessOverStdio(t *testing.T) {
	t.Parallel()
	t.Run("two legal bots finish the game", func(t *testing.T) {
		res, dir := playLines(t, "chess", lineBot(t, "legal"), lineBot(t, "legal"), nil, match.Forfeit)
		if len(res.Faults) != 0 || res.Reason == transcript.ReasonAborted || res.Plies < 2 {
			t.Fatalf("%+v", res)
		}
		lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
		var first transcript.Turn
		lines[1].Decode(&first)
		if !strings.HasPrefix(first.State, "NONE 120 120 rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") {
			t.Fatalf("first question %q", first.State)
		}
		var foot transcript.Footer
		lines[len(lines)-1].Decode(&foot)
		if len(foot.Sessions) != 2 || foot.Sessions[0].ExitCode != -1 {
			t.Fatalf("sessions %+v", foot.Sessions)
		}
	})
	blackFaults(t, "chess", "legal", []faultCase{
		{"silent", map[string]string{"moveTime": "300ms"}, rules.Timeout, "no answer within the move time", 2},
		// A line printed at start-up reaches the harness before or after the
		// first question, depending on how fast the bot starts: either way it
		// is not an answer.
		{"early", nil, rules.InvalidOutput, `"ready!"`, 2},
		{"quit-3", nil, rules.Crash, "exited or closed its output", 8},
		{"garbage", nil, rules.InvalidOutput, `"resign please" is not a move`, 2},
		{"flood", nil, rules.InvalidOutput, `"xxxxxxxx`, 4},
		{"slow-200", map[string]string{"gameTime": "1s"}, rules.Timeout, "time bank for the game ran out", 0},
	})
	t.Run("random-move keeps a silent bot's game going", func(t *testing.T) {
		res, _ := playLines(t, "chess", lineBot(t, "legal"), lineBot(t, "silent"), map[string]string{"moveTime": "100ms", "maxPlies": "20"}, match.RandomMove)
		if res.Reason != rules.ReasonMaxPlies || len(res.Faults) != 10 {
			t.Fatalf("%+v", res)
		}
	})
}

type runtimeMem struct{ heap int64 }

func (m *runtimeMem) read() {
	var s runtimeMemStats
	readMemStats(&s)
	m.heap = int64(s.HeapInuse)
}

func TestACM6x6OverStdio(t *testing.T) {
	t.Parallel()
	t.Run("two legal bots finish the game", func(t *testing.T) {
		// The move time is the game's fact under test elsewhere; here a busy
		// machine must not turn a legal first move into a timeout.
		res, _ := playLines(t, "acm6x6", lineBot(t, "acm6x6.legal"), lineBot(t, "acm6x6.legal"), map[string]string{"moveTime": "2s"}, match.Forfeit)
		if len(res.Faults) != 0 || res.Reason == transcript.ReasonAborted {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("a late bot gets a random move and the game goes on", func(t *testing.T) {
		res, dir := playLines(t, "acm6x6", lineBot(t, "acm6x6.legal"), lineBot(t, "acm6x6.slow-250"), map[string]string{"maxMoves": "5", "moveTime": "200ms"}, match.Forfeit)
		if res.Reason != rules.ReasonMaxPlies || len(res.Faults) == 0 {
			t.Fatalf("%+v", res)
		}
		for _, f := range res.Faults {
			if f.Side != "black" || f.Verdict != string(rules.Timeout) {
				t.Fatalf("fault %+v", f)
			}
		}
		// Black's first answer has the program's start besides the move
		// time, so 250 ms is in time; its second is late.
		lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
		var first, second transcript.Turn
		lines[2].Decode(&first)
		lines[4].Decode(&second)
		if first.Side != "black" || first.Verdict != string(rules.OK) || first.Substituted {
			t.Fatalf("black's first turn: %+v", first)
		}
		if second.Side != "black" || !second.Substituted || second.Played == "" {
			t.Fatalf("black's second turn: %+v", second)
		}
	})
}

func pythonBot(t *testing.T, name, source string) *submission.Bot {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	os.WriteFile(p, []byte(source), 0o644)
	g, _ := rules.Lookup("checkers")
	b, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits(), Packager: g.(rules.Packager)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckersPythonClassesRunUnchanged(t *testing.T) {
	t.Parallel()
	root, _ := gobuild.ModuleRoot()
	example, err := os.ReadFile(filepath.Join(root, "examples", "checkers", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a bot class against a line-protocol bot", func(t *testing.T) {
		res, dir := playLines(t, "checkers", pythonBot(t, "random_bot.py", string(example)), lineBot(t, "checkers.legal"), nil, match.Forfeit)
		if len(res.Faults) != 0 || res.Reason == transcript.ReasonAborted {
			t.Fatalf("%+v", res)
		}
		// A position with one legal move is played without asking the bot,
		// and only such a position.
		lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
		if err != nil {
			t.Fatal(err)
		}
		auto, single := 0, 0
		replay.Lines(lines, dir, func(s replay.State) {
			one := len(s.Before.LegalMoves()) == 1
			if one {
				single++
			}
			if s.Turn.Auto {
				auto++
			}
			if s.Turn.Auto != one || (s.Turn.Auto && (s.Turn.State != "" || s.Turn.Answer != nil || s.Turn.Played == "")) {
				t.Errorf("ply %d: one legal move %v, recorded %+v", s.Turn.Ply, one, s.Turn)
			}
		})
		if auto != single {
			t.Fatalf("%d positions had a single legal move, %d moves were played automatically", single, auto)
		}
	})
	t.Run("a bot class that raises loses with its traceback kept", func(t *testing.T) {
		broken := "class bot():\n    def move(self, plansza, ruchy):\n        print('thinking')\n        raise ValueError('no idea')\n"
		res, dir := playLines(t, "checkers", pythonBot(t, "broken.py", broken), lineBot(t, "checkers.legal"), nil, match.Forfeit)
		if res.Winner != transcript.WinnerBlack || res.Reason != string(rules.InvalidOutput) {
			t.Fatalf("%+v", res)
		}
		lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
		var foot transcript.Footer
		lines[len(lines)-1].Decode(&foot)
		if !strings.Contains(foot.Sessions[0].StderrTail, "ValueError: no idea") || !strings.Contains(foot.Sessions[0].StderrTail, "thinking") {
			t.Fatalf("stderr tail %q", foot.Sessions[0].StderrTail)
		}
	})
}

// faultCase is a black bot that faults, and the fault it must get: its
// verdict, a part of its reason, and its ply (0: any).
type faultCase struct {
	black   string
	opts    map[string]string
	verdict rules.Verdict
	reason  string
	ply     int
}

// blackFaults plays each case's black bot against white and checks that
// black alone faulted, as the case says, and lost.
func blackFaults(t *testing.T, game, white string, cases []faultCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.black+" as black", func(t *testing.T) {
			res, _ := playLines(t, game, lineBot(t, white), lineBot(t, c.black), c.opts, match.Forfeit)
			if res.Winner != transcript.WinnerWhite || res.Reason != string(c.verdict) || len(res.Faults) != 1 {
				t.Fatalf("%+v", res)
			}
			f := res.Faults[0]
			if f.Side != "black" || !strings.Contains(f.Reason, c.reason) || (c.ply > 0 && f.Ply != c.ply) {
				t.Fatalf("fault %+v", f)
			}
		})
	}
}
