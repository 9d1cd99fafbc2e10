package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
)

func fixtureBot(t testing.TB, mode string) *submission.Bot {
	t.Helper()
	return submissiontest.Fixture(t, "./internal/testbots/ccfixture", mode)
}

func options(t testing.TB, dir string, bots []*submission.Bot, backend sandbox.Backend, sb string) Options {
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 2 * time.Second
	lim.Memory = 256 * sandbox.MiB
	// No playoff: these tests count the games of the format's schedule (a
	// playoff is tested where it is the subject).
	cfg := tournament.Config{Format: tournament.RoundRobin, GamesPerPair: 2, Seed: 11, Game: "codeclash", Rules: map[string]string{"maxPlies": "40"},
		Limits: lim, OnFault: "forfeit", Sandbox: sb, Scoring: tournament.DefaultScoring(), TieBreaks: tournament.DefaultTieBreaks(), Playoff: tournament.NoPlayoff}
	for _, b := range bots {
		cfg.Bots = append(cfg.Bots, tournament.BotEntry{Name: b.Name, SHA256: b.SHA256, Source: b.Source})
	}
	return Options{Dir: dir, Config: cfg, Bots: bots, Game: codeclash.Game{}, Backend: backend, Concurrency: 2}
}

// flaky fails to open a sandbox for one bot, as a broken host would.
type flaky struct {
	sandbox.Backend
	name string
}

func (f flaky) Open(ctx context.Context, s sandbox.Spec) (sandbox.Box, error) {
	if s.Program.Name == f.name {
		return nil, sandbox.Faultf("create container", errors.New("engine refused"))
	}
	return f.Backend.Open(ctx, s)
}

func TestHostFaultsAreRetriedThenUnplayedAndNeverScored(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "garbage")}
	bots[2].Name, bots[2].Program.Name = "broken-host", "broken-host"
	dir := t.TempDir()
	o := options(t, dir, bots, flaky{&local.Backend{Dir: t.TempDir()}, "broken-host"}, "local")
	o.MaxAttempts = 2
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total != 6 || sum.Done != 2 || sum.Unplayed != 4 || sum.Pending != 0 {
		t.Fatalf("%+v", sum)
	}
	st, _ := tournament.Load(context.Background(), dir)
	for _, g := range st.Games {
		involved := g.White == 2 || g.Black == 2
		if involved && (g.Status != tournament.Unplayed || g.Attempts != 2 || !strings.Contains(g.AbortReason, "engine refused")) {
			t.Fatalf("game %+v", g)
		}
		if !involved && g.Status != tournament.Done {
			t.Fatalf("game %+v", g)
		}
	}
	for _, r := range sum.Standings {
		if r.Name == "broken-host" && (r.Games != 0 || r.Losses != 0 || r.Points != 0) {
			t.Fatalf("an unplayed game was scored: %+v", r)
		}
	}
	// The evidence of each aborted attempt is kept.
	attempts, _ := filepath.Glob(filepath.Join(dir, "games", "*broken-host*"))
	if len(attempts) != 8 {
		t.Fatalf("%d attempt directories, want 8: %v", len(attempts), attempts)
	}
	if page := string(st.HTML()); !strings.Contains(page, "aborted 2 times here: ") {
		t.Errorf("the report does not say how the unplayed games were aborted")
	}
	// The host mended, the same run again plays exactly the unplayed games.
	played := map[int]string{}
	for _, g := range st.Games {
		if g.Status == tournament.Done {
			played[g.ID] = g.Dir
		}
	}
	o.Backend = &local.Backend{Dir: t.TempDir()}
	sum, err = Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 6 || sum.Unplayed != 0 {
		t.Fatalf("run again: %+v", sum)
	}
	again, _ := tournament.Load(context.Background(), dir)
	for _, g := range again.Games {
		if d, ok := played[g.ID]; ok && (g.Dir != d || g.Attempts != 1) {
			t.Errorf("game %d, played already, was played again: %+v", g.ID, g)
		}
	}
}

func TestResumeRefusesAnotherConfiguration(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle")}
	dir := t.TempDir()
	o := options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	o.Config.Seed = 12
	o.Config.Limits.TurnTimeout = time.Second
	o.Config.Bots[1].SHA256 = "ffff"
	_, err := Run(context.Background(), o)
	if !errors.Is(err, ErrConfigChanged) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"seed: stored 11, now 12", "limits.turnTimeout: stored 2s, now 1s", "bot shuffle: its executable changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestTournamentInDocker(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "garbage"), fixtureBot(t, "exit-3")}
	dir := t.TempDir()
	o := options(t, dir, bots, docker.New(cli, image), "docker")
	o.Config.Image = image
	o.Labels = labels
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	dockertest.NoLeftovers(t, cli, labels)
	if sum.Total != 12 || sum.Done != 12 {
		t.Fatalf("%+v", sum)
	}
	pts := map[string]float64{}
	for _, r := range sum.Standings {
		pts[r.Name] = r.Points
	}
	// garbage and exit-3 forfeit every game on their first turn; against each
	// other White faults first, so each wins once as Black. legal and shuffle
	// win their four games against them and share 4 to 6 points between them.
	both := pts["legal"] + pts["shuffle"]
	if pts["garbage"] != 3 || pts["exit-3"] != 3 || both < 28 || both > 30 || pts["legal"] < 12 || pts["shuffle"] < 12 {
		t.Fatalf("points %v", pts)
	}
	for _, f := range []string{tournament.StandingsCSV, tournament.StandingsJSON, tournament.CrosstableTxt, tournament.ReportHTML} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, tournament.ReportHTML))
	views, _ := filepath.Glob(filepath.Join(dir, "games", "*", "match.html"))
	if len(views) != 12 || strings.Count(string(report), `/match.html">view</a>`) != 12 {
		t.Fatalf("%d views, report links %d", len(views), strings.Count(string(report), "match.html"))
	}
}

func TestTournamentOfALineGame(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	var bots []*submission.Bot
	for _, mode := range []string{"acm6x6.legal", "acm6x6.garbage", "acm6x6.silent"} {
		bots = append(bots, submissiontest.Fixture(t, "./internal/testbots/linefixture", mode))
	}
	dir := t.TempDir()
	o := options(t, dir, bots, docker.New(cli, image), "docker")
	o.Game, _ = rules.Lookup("acm6x6")
	o.Config.Game, o.Config.Rules, o.Config.Image = "acm6x6", map[string]string{"maxMoves": "5"}, image
	o.Config.Limits.TurnTimeout = sandbox.DefaultLimits().TurnTimeout // the game's own 0.1 s per move
	o.Labels = dockertest.Labels(t)
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	dockertest.NoLeftovers(t, cli, o.Labels)
	// The silent bot is late every time, so ACM's rule plays random moves for
	// it; garbage forfeits every game.
	last := sum.Standings[len(sum.Standings)-1]
	if sum.Done != 6 || last.Name != "acm6x6.garbage" || last.Points != 0 || last.Games != 4 {
		t.Fatalf("%+v\n%s", sum, tournament.String(sum.Standings, sum.TieBreaks))
	}
	// Each game records how long it held its place among those played at
	// once: its match and more (its sandboxes, its evidence read back).
	st, err := tournament.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Games {
		if g.DurationMs <= 0 || g.SlotMs < g.DurationMs {
			t.Errorf("game %d: a match of %g ms, its place held %g ms", g.ID, g.DurationMs, g.SlotMs)
		}
	}
}

// sabotage does harm to every game directory of a tournament whenever a
// sandbox is opened, while the game in it is being played.
type sabotage struct {
	sandbox.Backend
	dir  string
	harm func(t *testing.T, gameDir string)
	t    *testing.T
}

func (s sabotage) Open(ctx context.Context, spec sandbox.Spec) (sandbox.Box, error) {
	dirs, _ := filepath.Glob(filepath.Join(s.dir, "games", "*"))
	for _, d := range dirs {
		s.harm(s.t, d)
	}
	return s.Backend.Open(ctx, spec)
}

func TestAViewThatCannotBeWrittenIsWarnedAboutNotFatal(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle")}
	dir := t.TempDir()
	harm := func(t *testing.T, d string) {
		// A directory where the page goes: writing the page fails.
		if err := os.MkdirAll(filepath.Join(d, tournament.ViewHTML, "in-the-way"), 0o755); err != nil {
			t.Error(err)
		}
	}
	o := options(t, dir, bots, sabotage{&local.Backend{Dir: t.TempDir()}, dir, harm, t}, "local")
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("a missing viewer page failed the tournament: %v", err)
	}
	if sum.Done != sum.Total {
		t.Fatalf("%+v", sum)
	}
	blocked, _ := filepath.Glob(filepath.Join(dir, "games", "*", tournament.ViewHTML, "in-the-way"))
	if len(blocked) == 0 || len(sum.Warnings) != len(blocked) {
		t.Fatalf("%d pages blocked, %d warnings: %q", len(blocked), len(sum.Warnings), sum.Warnings)
	}
	for _, w := range sum.Warnings {
		if !strings.Contains(w, "the viewer page") {
			t.Fatalf("warning %q", w)
		}
	}
}

func TestLostEvidenceFailsTheRunAndTheGameIsPlayedAgain(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle")}
	dir := t.TempDir()
	harm := func(t *testing.T, d string) {
		// The transcript is unlinked while the match writes it.
		if err := os.Remove(filepath.Join(d, "transcript.jsonl")); err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
	}
	o := options(t, dir, bots, sabotage{&local.Backend{Dir: t.TempDir()}, dir, harm, t}, "local")
	_, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "transcript does not read back") {
		t.Fatalf("a game without its transcript did not fail the run: %v", err)
	}
	st, err := tournament.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Games {
		if g.Status == tournament.Done {
			if _, err := os.Stat(filepath.Join(dir, g.Dir, "transcript.jsonl")); err != nil {
				t.Fatalf("game %d was stored as played without its transcript", g.ID)
			}
		}
	}
	// The next run keeps the game's directory aside and plays it again.
	o = options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "games", "*.interrupted-*"))
	if sum.Done != sum.Total || len(kept) == 0 {
		t.Fatalf("%+v; %d directories kept aside", sum, len(kept))
	}
}

func TestEvidenceMustMatchTheResult(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle")}
	dir := t.TempDir()
	o := options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	o.Config.GamesPerPair = 1
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	st, err := tournament.Load(context.Background(), dir)
	if err != nil || len(st.Games) != 1 {
		t.Fatalf("%v %+v", err, st)
	}
	g := st.Games[0]
	game := filepath.Join(dir, g.Dir)
	res := transcript.Result{Winner: g.Winner, Reason: g.Reason}
	if ms, err := evidence(game, res); err != nil || ms.BotMs <= 0 || ms.TurnMs <= 0 {
		t.Fatalf("the evidence of a played game: %v ms, %v", ms, err)
	}
	other := res
	other.Winner = "nobody"
	if _, err := evidence(game, other); err == nil || !strings.Contains(err.Error(), "its transcript ends in") {
		t.Fatalf("another result was accepted: %v", err)
	}
	if err := os.Remove(filepath.Join(game, "result.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := evidence(game, res); err == nil || !strings.Contains(err.Error(), "result.json") {
		t.Fatalf("a game without result.json was accepted: %v", err)
	}
}

// A resume refused for the bots' order says which bots moved, in words.
func TestABotOrderChangedSaysWhichMoved(t *testing.T) {
	t.Parallel()
	list := func(names ...string) (out []tournament.BotEntry) {
		for _, n := range names {
			out = append(out, tournament.BotEntry{Name: n, SHA256: n})
		}
		return out
	}
	d := tournament.Diff(tournament.Config{Bots: list("a", "b", "c", "d")}, tournament.Config{Bots: list("a", "c", "d", "b")})
	if len(d) != 1 || d[0] != "bot order: b was 2nd, now 4th; c was 3rd, now 2nd; d was 4th, now 3rd" {
		t.Errorf("%q", d)
	}
	d = tournament.Diff(tournament.Config{Bots: list("a", "b", "c", "d", "e")}, tournament.Config{Bots: list("e", "d", "c", "b", "a")})
	if len(d) != 1 || d[0] != "bot order: a was 1st, now 5th; b was 2nd, now 4th; d was 4th, now 2nd; and 1 more moved" {
		t.Errorf("%q", d)
	}
}
