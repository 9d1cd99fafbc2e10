package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox/docker"
)

// A checkers tournament from the ACF deck plays each ballot it draws from
// both sides: the two games of a pair start from the same ballot, sides
// swapped, and each transcript says which ballot and pair it was, the
// position being in its rules, so that replay starts from it too.
func TestACheckersTournamentPlaysEachBallotFromBothSides(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	g, _ := rules.Lookup("checkers")
	var bots []*submission.Bot
	for _, name := range []string{"north.py", "south.py"} {
		bots = append(bots, submissiontest.Example(t, g, "examples/checkers/random_bot.py", name))
	}
	opts := map[string]string{"menCaptureBackward": "false", "maxPlies": "16"}
	deck, err := rules.LoadOpenings(g, "acf3", 0, rules.Random, 5, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := options(t, dir, bots, docker.New(cli, image), "docker")
	o.Game = g
	o.Config.Game, o.Config.Rules, o.Config.Image, o.Config.GamesPerPair = "checkers", opts, image, 4
	o.Config.Limits.TurnTimeout = 10e9
	o.Config.Openings = deck
	o.Labels = dockertest.Labels(t)
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	dockertest.NoLeftovers(t, cli, o.Labels)
	if sum.Done != 4 {
		t.Fatalf("%+v", sum)
	}
	recs, err := tournament.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	byPair := map[int][]string{} // pair -> "white start"
	for _, r := range recs.Games {
		rep, err := replay.File(filepath.Join(dir, r.Dir))
		if err != nil || !rep.Consistent {
			t.Fatalf("game %d: %v %s", r.ID, err, rep.Problem())
		}
		h := rep.Header
		want := deck[r.Opening-1]
		if h.Job == nil || h.Job.Pair != r.Pair || h.Job.Opening != want.Name || h.Rules["start"] != want.Rules["start"] {
			t.Fatalf("game %d (opening %s %q): header job %+v, start %q", r.ID, want.Name, want.Rules["start"], h.Job, h.Rules["start"])
		}
		byPair[r.Pair] = append(byPair[r.Pair], h.White.Name+" "+h.Rules["start"])
	}
	if len(byPair) != 2 {
		t.Fatalf("pairs %v", byPair)
	}
	for p, two := range byPair {
		if len(two) != 2 || two[0] == two[1] || two[0][len("north.py"):] != two[1][len("south.py"):] {
			t.Errorf("pair %d: %v", p, two)
		}
	}
}
