package replay

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// script loads an example bot as the event takes it: a script runs as it is
// (its #! line), a source is built in the sandbox.
func script(t *testing.T, backend sandbox.Backend, rel string) *submission.Bot {
	t.Helper()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	table := langs.Default()
	b, err := submission.Load(filepath.Join(root, rel), submission.LoadOptions{Limits: submission.DefaultLimits(), IsSource: table.Knows})
	if err != nil {
		t.Fatal(err)
	}
	b, err = (&build.Builder{Backend: backend, Langs: table, Limits: sandbox.DefaultLimits()}).Ready(context.Background(), b)
	if err != nil || b.BuildError != "" {
		t.Fatalf("build %s: %v %s", rel, err, b.BuildError)
	}
	return b
}

// Every turn of a game played in Docker by bots that keep a data file runs
// again as it was played: the data file restored in the bot's name with its
// mode, so that the bot rewrites it as it did; each rerun plays the recorded
// move with the recorded verdict. One game per language of the examples and
// starters that keep a data file (Python, JavaScript, Go).
func TestEveryTurnOfADataFileGameReruns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		white, black func(t *testing.T, b sandbox.Backend) *submission.Bot
	}{
		{"python-vs-javascript",
			func(t *testing.T, b sandbox.Backend) *submission.Bot {
				return script(t, b, "examples/python/random_bot.py")
			},
			func(t *testing.T, b sandbox.Backend) *submission.Bot {
				return script(t, b, "examples/javascript/random_bot.js")
			}},
		{"go",
			func(t *testing.T, _ sandbox.Backend) *submission.Bot { return bot(t, "./examples/random", "random") },
			func(t *testing.T, _ sandbox.Backend) *submission.Bot { return bot(t, "./examples/greedy", "greedy") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cli, image := dockertest.Engine(t)
			labels := dockertest.Labels(t)
			defer dockertest.NoLeftovers(t, cli, labels)
			backend := docker.New(cli, image)
			white, black := c.white(t, backend), c.black(t, backend)
			dir := filepath.Join(t.TempDir(), "m")
			lim := sandbox.DefaultLimits()
			lim.Memory = 256 * sandbox.MiB
			res, err := match.Run(context.Background(), match.Config{
				Game: codeclash.Game{}, Seed: 3, White: white, Black: black,
				Backend: backend, Limits: lim, Dir: dir, ArenaVersion: "test", Labels: labels,
			})
			if err != nil || res.Reason == transcript.ReasonAborted {
				t.Fatalf("%v %+v", err, res)
			}
			rep, err := File(dir)
			if err != nil || !rep.Consistent {
				t.Fatalf("replay: %v %s", err, rep.Problem())
			}
			withData := 0
			for ply := 1; ply <= rep.Turns; ply++ {
				_, at, data, err := FindTurn(dir, ply)
				if err != nil {
					t.Fatal(err)
				}
				b := white
				if at.Turn.Side == "black" {
					b = black
				}
				if len(data) > 0 {
					withData++
				}
				out, err := RunAgain(context.Background(), RerunOptions{Path: dir, Ply: ply, Bot: b, Backend: rerunLabelled{backend, labels}})
				if err != nil {
					t.Fatalf("ply %d: %v", ply, err)
				}
				if out.Reproduced() != 1 {
					a := out.Attempts[0]
					t.Errorf("ply %d (%s, %d data files): recorded %s %s, rerun %s %s exit %d: %s",
						ply, at.Turn.Side, len(data), out.Recorded.Move, out.Recorded.Verdict, a.Move, a.Verdict, a.ExitCode, a.Stderr)
				}
			}
			if withData < rep.Turns/2 {
				t.Fatalf("only %d of %d turns began with a data file: the game proves little", withData, rep.Turns)
			}
			t.Logf("%d turns rerun, %d of them with a data file restored", rep.Turns, withData)
		})
	}
}

// rerunLabelled opens the rerun's boxes with the test's labels too, so that
// a box left behind is found.
type rerunLabelled struct {
	sandbox.Backend
	labels map[string]string
}

func (b rerunLabelled) Open(ctx context.Context, spec sandbox.Spec) (sandbox.Box, error) {
	for k, v := range b.labels {
		spec.Labels[k] = v
	}
	return b.Backend.Open(ctx, spec)
}
