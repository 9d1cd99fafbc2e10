package build_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// source writes a one-file submission and loads it as source.
func source(t *testing.T, table langs.Languages, name, text string) *submission.Bot {
	t.Helper()
	// A name with a folder is handed in as a directory that holds it.
	root := t.TempDir()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, _ := filepath.Split(name); dir != "" {
		p = root
	}
	b, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits(), IsSource: table.Knows})
	if err != nil {
		t.Fatal(err)
	}
	if !build.Needs(b) {
		t.Fatalf("%s was not taken as source: %+v", name, b.Choice)
	}
	return b
}

func lineFixture(t *testing.T, name string) *submission.Bot {
	t.Helper()
	return submissiontest.Fixture(t, "./internal/testbots/linefixture", name)
}

// A Python bot handed in as one source file is built (its version noted),
// plays a whole tiles match, and is taken from the cache the second time.
func TestAPythonSourcePlaysAndIsCached(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	be := docker.New(cli, image)
	root, _ := gobuild.ModuleRoot()
	text, err := os.ReadFile(filepath.Join(root, "examples", "tiles", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	// Without its #! line it is not an executable script: only source.
	_, body, _ := strings.Cut(string(text), "\n")
	table := langs.Default()
	b := &build.Builder{Backend: be, Langs: table, Limits: sandbox.DefaultLimits(), Cache: t.TempDir(), Labels: labels}
	bot, err := b.Ready(context.Background(), source(t, table, "random_bot.py", body))
	if err != nil {
		t.Fatal(err)
	}
	if bot.BuildError != "" || bot.Language != ".py" || !strings.HasPrefix(bot.Toolchain, "Python 3.") || bot.Program.Entry == "" {
		t.Fatalf("%+v", bot)
	}
	dir := t.TempDir()
	res, err := match.Run(context.Background(), match.Config{Game: tiles.Game{}, Seed: 2, White: bot, Black: lineFixture(t, "tiles.legal"),
		Backend: be, Limits: sandbox.DefaultLimits(), Dir: dir, Labels: labels})
	if err != nil || len(res.Faults) != 0 || res.Reason != "points" {
		t.Fatalf("%v %+v", err, res)
	}
	lines, _ := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	var h transcript.Header
	lines[0].Decode(&h)
	if h.White.Language != ".py" || h.White.Toolchain != bot.Toolchain || h.White.SHA256 != bot.SHA256 {
		t.Fatalf("the header records %+v", h.White)
	}
	again, err := b.Ready(context.Background(), source(t, table, "random_bot.py", body))
	if err != nil || again.SHA256 != bot.SHA256 || b.Builds() != 1 {
		t.Fatalf("second build: %v, sha256 %s (was %s), %d builds", err, again.SHA256, bot.SHA256, b.Builds())
	}
	dockertest.NoLeftovers(t, cli, labels)
}

// Hostile and broken builds end as build errors within the limits, with the
// build's own first lines, and leave no container.
func TestBrokenAndHostileBuilds(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	table, err := langs.Parse(`
.fail  | echo "first: error here"; echo second; exit 3 | bot | {dir}/bot | - | echo v1
.flood | yes "flood flood flood flood"                   | bot | {dir}/bot | - | echo v1
.slow  | sleep 600                                       | bot | {dir}/bot | - | echo v1
.none  | true                                            | bot | {dir}/bot | - | echo v1
.peek  | cat /etc/hostname /root/.ssh/id_rsa > bot 2>&1; false | bot | {dir}/bot | - | echo v1
`)
	if err != nil {
		t.Fatal(err)
	}
	b := &build.Builder{Backend: docker.New(cli, image), Langs: table, Limits: sandbox.DefaultLimits(), Timeout: 3 * time.Second, Labels: labels}
	for _, c := range []struct{ ext, want string }{
		{".fail", "exit status 3:\nfirst: error here\nsecond"},
		{".flood", "flood flood"},
		{".slow", "the build did not finish within 3s"},
		{".none", "the build left no bot"},
		{".peek", "exit status 1"},
	} {
		t.Run(c.ext, func(t *testing.T) {
			t0 := time.Now()
			bot, err := b.Ready(context.Background(), source(t, table, "bot"+c.ext, "int main() {}\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(bot.BuildError, c.want) || time.Since(t0) > 60*time.Second {
				t.Fatalf("build error %q after %v, want %q", bot.BuildError, time.Since(t0), c.want)
			}
			if strings.Count(bot.BuildError, "\n") > 25 {
				t.Fatalf("the build error keeps %d lines", strings.Count(bot.BuildError, "\n"))
			}
		})
	}
	dockertest.NoLeftovers(t, cli, labels)
}

// A bot that did not build loses with the verdict build-error, without a
// container; when neither side builds, the game is a draw. Both replay.
func TestABotThatDidNotBuildLoses(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	be := docker.New(cli, image)
	broken := &submission.Bot{Name: "broken", SHA256: strings.Repeat("ab", 32), SourceEntry: "bot.c", Language: ".c",
		BuildError: "exit status 1:\nbot.c:1:1: error: expected identifier"}
	for _, c := range []struct {
		white, black *submission.Bot
		winner       string
		faults       int
	}{
		{lineFixture(t, "tiles.legal"), broken, transcript.WinnerWhite, 1},
		{broken, broken, transcript.WinnerDraw, 2},
	} {
		dir := t.TempDir()
		res, err := match.Run(context.Background(), match.Config{Game: tiles.Game{}, Seed: 2, White: c.white, Black: c.black,
			Backend: be, Limits: sandbox.DefaultLimits(), Dir: dir})
		if err != nil || res.Winner != c.winner || res.Reason != "build-error" || len(res.Faults) != c.faults {
			t.Fatalf("%v %+v", err, res)
		}
		if f := res.Faults[len(res.Faults)-1]; f.Verdict != "build-error" || !strings.Contains(f.Reason, "expected identifier") {
			t.Fatalf("fault %+v", f)
		}
		rep, err := replay.File(dir)
		if err != nil || !rep.Consistent {
			t.Fatalf("replay: %v %s", err, rep.Problem())
		}
	}
}

// testdata reads a file of testdata/.
func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// One bot per language, built from source in the runtime image, plays a
// whole tiles match without a fault; its toolchain is recorded.
func TestEveryLanguagePlaysFromSource(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	be := docker.New(cli, image)
	table := langs.Default()
	b := &build.Builder{Backend: be, Langs: table, Limits: sandbox.DefaultLimits(), Cache: t.TempDir(), Labels: labels}
	opponent := lineFixture(t, "tiles.legal")
	// Two of them in a folder, as a folder zipped as it is holds them (on
	// Windows, "New folder"): built there, run from there.
	for _, src := range []string{"New folder/walker.c", "walker.cpp", "Main.java", "bot/walker.js", "walker.py"} {
		t.Run(src, func(t *testing.T) {
			bot, err := b.Ready(context.Background(), source(t, table, src, testdata(t, filepath.Base(src))))
			if err != nil {
				t.Fatal(err)
			}
			if bot.BuildError != "" || bot.Toolchain == "" {
				t.Fatalf("%s: build error %q, toolchain %q", src, bot.BuildError, bot.Toolchain)
			}
			// A JVM's or node's start on a loaded host is not what this
			// test is about: the move time leaves room for it.
			res, err := match.Run(context.Background(), match.Config{Game: tiles.Game{}, Rules: map[string]string{"turns": "60", "turnTimeout": "10s"}, Seed: 5,
				White: bot, Black: opponent, Backend: be, Limits: sandbox.DefaultLimits(), Dir: t.TempDir(), Labels: labels})
			if err != nil || len(res.Faults) != 0 || res.Turns != 60 {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
	if b.Builds() != 5 {
		t.Fatalf("%d builds for 5 bots", b.Builds())
	}
	dockertest.NoLeftovers(t, cli, labels)
}

// A broken source in each compiled language, a compile-time bomb, runaway
// template recursion and an include of a host path each end as a build
// error with the compiler's own line, within the build limit.
func TestCompilersRefuseBrokenAndHostileSources(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	table := langs.Default()
	lim := sandbox.DefaultLimits()
	lim.Memory = 512 * sandbox.MiB
	b := &build.Builder{Backend: docker.New(cli, image), Langs: table, Limits: lim, Timeout: 20 * time.Second, Labels: labels}
	for _, c := range []struct{ src, want string }{
		{"broken.c", "error:"},
		{"broken.cpp", "error:"},
		{"Broken.java", "error:"},
		{"bomb.c", ""}, // out of memory or out of time, whichever comes first
		{"recursion.cpp", "template instantiation depth"},
		{"hostpath.c", "/etc/shadow"},
	} {
		t.Run(c.src, func(t *testing.T) {
			t0 := time.Now()
			bot, err := b.Ready(context.Background(), source(t, table, c.src, testdata(t, c.src)))
			if err != nil {
				t.Fatal(err)
			}
			if bot.BuildError == "" || !strings.Contains(bot.BuildError, c.want) || time.Since(t0) > 60*time.Second {
				t.Fatalf("build error %q after %v, want %q", bot.BuildError, time.Since(t0), c.want)
			}
		})
	}
	dockertest.NoLeftovers(t, cli, labels)
}

// BenchmarkReadyCached is what a cached build adds to a match: the cache
// look-up, the artifact's hash and the launcher.
func BenchmarkReadyCached(b *testing.B) {
	cli, image := dockertest.Engine(b)
	table := langs.Default()
	bl := &build.Builder{Backend: docker.New(cli, image), Langs: table, Limits: sandbox.DefaultLimits(), Cache: b.TempDir()}
	p := filepath.Join(b.TempDir(), "walker.py")
	data, err := os.ReadFile(filepath.Join("testdata", "walker.py"))
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(p, data, 0o644)
	bot, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits(), IsSource: table.Knows})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bl.Ready(context.Background(), bot); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := bl.Ready(context.Background(), bot); err != nil {
			b.Fatal(err)
		}
	}
	if bl.Builds() != 1 {
		b.Fatalf("%d builds", bl.Builds())
	}
}

// A Python bot handed in as source plays Code Clash, where a fresh process
// runs every turn: the launcher passes the state file's path on.
func TestAPythonSourcePlaysCodeClash(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	labels := dockertest.Labels(t)
	be := docker.New(cli, image)
	root, _ := gobuild.ModuleRoot()
	text, err := os.ReadFile(filepath.Join(root, "examples", "python", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(text), "\n") // no #! line: source, not a script
	table := langs.Default()
	b := &build.Builder{Backend: be, Langs: table, Limits: sandbox.DefaultLimits(), Labels: labels}
	py, err := b.Ready(context.Background(), source(t, table, "random_bot.py", body))
	if err != nil || py.BuildError != "" {
		t.Fatalf("%v %q", err, py.BuildError)
	}
	opp, err := submission.Load(gobuild.MustStatic(t, "./examples/random"), submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := match.Run(context.Background(), match.Config{Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "20"}, Seed: 8,
		White: py, Black: opp, Backend: be, Limits: sandbox.DefaultLimits(), Dir: t.TempDir(), Labels: labels})
	if err != nil || len(res.Faults) != 0 || res.Reason == transcript.ReasonAborted {
		t.Fatalf("%v %+v", err, res)
	}
	dockertest.NoLeftovers(t, cli, labels)
}
