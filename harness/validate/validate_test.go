package validate

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/ziptest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/rules/tiles"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
)

type entry = ziptest.Entry

func zipOf(t *testing.T, dir, name string, entries ...entry) string {
	t.Helper()
	data := ziptest.Bytes(t, entries...)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	readme = entry{Name: "README.md", Data: []byte("# Bot\nAlgorithm: greedy search.\nBuild: go build -o bot .\nData file: fixture.dat, a counter.\nrandom-bot.json holds its history.\n")}
	source = entry{Name: "main.go", Data: []byte("package main\nfunc main() {}\n")}
)

func fixture(t *testing.T, mode string) entry {
	data, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/ccfixture"))
	if err != nil {
		t.Fatal(err)
	}
	return entry{Name: mode, Data: data, Mode: 0o755}
}

func gcc(t *testing.T, dir, out string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		if dockertest.Required() {
			t.Fatal("gcc is needed to build the dynamic fixtures")
		}
		t.Skip("no gcc")
	}
	cmd := exec.Command("gcc", append(args, "-o", out)...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// newerGlibc builds a C program and rewrites one of its GLIBC version needs to
// a version no glibc has yet.
func newerGlibc(t *testing.T, dir string) []byte {
	os.WriteFile(filepath.Join(dir, "hello.c"), []byte("#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}\n"), 0o644)
	bin := gcc(t, dir, "hello", "hello.c")
	loc := regexp.MustCompile(`GLIBC_2\.[0-9.]+`).FindIndex(bin)
	if loc == nil {
		t.Fatal("no GLIBC version need in the test binary")
	}
	repl := map[int]string{10: "GLIBC_2.99", 11: "GLIBC_3.0.0", 9: "GLIBC_3.0"}[loc[1]-loc[0]]
	if repl == "" {
		t.Fatalf("unexpected version string %q", bin[loc[0]:loc[1]])
	}
	copy(bin[loc[0]:], repl)
	return bin
}

func missingLibrary(t *testing.T, dir string) []byte {
	os.WriteFile(filepath.Join(dir, "lib.c"), []byte("int arena_missing(void){return 1;}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "use.c"), []byte("int arena_missing(void);\nint main(void){return arena_missing()-1;}\n"), 0o644)
	gcc(t, dir, "libarenamissing.so", "-shared", "-fPIC", "lib.c")
	return gcc(t, dir, "needslib", "use.c", "-L.", "-larenamissing")
}

func TestValidateNamesTheFailingCheck(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = time.Second
	be := docker.New(cli, image)
	facts, err := ProbeImage(context.Background(), be, lim)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Glibc == "" || !facts.Libraries["libc.so.6"] || !facts.HasCommand("python3") {
		t.Fatalf("probe: glibc %q, libc %v, python3 %v", facts.Glibc, facts.Libraries["libc.so.6"], facts.HasCommand("python3"))
	}
	// What "How to submit" says of the image is read from it: its OS, and
	// the libraries of each language as the image's build listed them.
	if facts.OS == "" || !strings.Contains(facts.LanguageLibraries[".py"], "numpy") || !strings.Contains(facts.LanguageLibraries[".cpp"], "g++") || !strings.Contains(facts.LanguageLibraries[".js"], "Node.js") {
		t.Errorf("probe: the OS %q, the languages' libraries %q", facts.OS, facts.LanguageLibraries)
	}
	dir := t.TempDir()
	build := t.TempDir()
	pe := append([]byte("MZ\x90\x00"), make([]byte, 64)...)
	cases := []struct {
		name    string
		zip     string
		check   string
		status  Status
		mention string
	}{
		{"a good submission", zipOf(t, dir, "good.zip", fixture(t, "legal"), source, readme), "", Pass, ""},
		{"a Windows executable", zipOf(t, dir, "win.zip", entry{Name: "bot.exe", Data: pe}, source, readme), "executable", Fail, "Windows executable"},
		{"a zip-slip entry", zipOf(t, dir, "slip.zip", entry{Name: "../../etc/cron.d/x", Data: []byte("x")}, source, readme), "archive", Fail, `escapes the archive`},
		{"a compression bomb", zipOf(t, dir, "bomb.zip", entry{Name: "zeros", Data: make([]byte, 64<<20)}, source, readme), "archive", Fail, "compression bomb"},
		{"a symlink entry", zipOf(t, dir, "link.zip", fixture(t, "legal"), entry{Name: "passwd", Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink | 0o777}, readme), "archive", Fail, "symbolic links"},
		{"no README", zipOf(t, dir, "noreadme.zip", fixture(t, "legal"), source), "readme", Fail, "no README"},
		{"two executables", zipOf(t, dir, "two.zip", fixture(t, "legal"), fixture(t, "shuffle"), source, readme), "executable", Fail, "2 ELF executables"},
		{"a newer glibc", zipOf(t, dir, "glibc.zip", entry{Name: "hello", Data: newerGlibc(t, build), Mode: 0o755}, source, readme), "glibc", Fail, "the runtime image has glibc " + facts.Glibc},
		{"a missing library", zipOf(t, dir, "lib.zip", entry{Name: "needslib", Data: missingLibrary(t, build), Mode: 0o755}, source, readme), "libraries", Fail, "libarenamissing.so"},
		{"a crash on setup step 4 only", zipOf(t, dir, "step4.zip", fixture(t, "crash-step4"), source, readme), "answers as white", Fail, "setup step 4 as white: crash"},
		{"a timeout only when fogged", zipOf(t, dir, "fog.zip", fixture(t, "slow-fog"), source, readme), "answers as black", Fail, "fogged (3 turns left): timeout"},
		{"two data files", zipOf(t, dir, "files.zip", fixture(t, "two-files"), source, readme), "answers as white", Fail, "data-file-violation"},
		{"a script the image can run", zipOf(t, dir, "py.zip", entry{Name: "bot.py", Data: []byte("#!/usr/bin/env python3\n"), Mode: 0o755}, readme), "interpreter", Pass, "python3"},
		{"a script the image cannot run", zipOf(t, dir, "rb.zip", entry{Name: "bot.rb", Data: []byte("#!/usr/bin/env ruby\n"), Mode: 0o755}, readme), "interpreter", Fail, "needs ruby"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Game: codeclash.Game{}, Intake: defaultIntake(), Backend: be, Limits: lim, Facts: facts, Seed: 1}
			if c.check == "" {
				opts.Opponent = opponent(t)
			}
			rep, err := Validate(context.Background(), c.zip, opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.check == "" {
				if !rep.Pass || rep.Usage == nil || rep.Usage.Turns < 16 {
					t.Fatalf("%+v", rep)
				}
				names := map[string]bool{}
				for _, ch := range rep.Checks {
					names[ch.Name] = true
				}
				for _, want := range []string{"answers as white", "answers as black", "match as white", "match as black"} {
					if !names[want] {
						t.Fatalf("no %q check: %+v", want, rep.Checks)
					}
				}
				return
			}
			var got *Check
			for i := range rep.Checks {
				if rep.Checks[i].Name == c.check {
					got = &rep.Checks[i]
				}
			}
			if got == nil || got.Status != c.status || !strings.Contains(got.Detail, c.mention) {
				t.Fatalf("check %q: %+v\nall: %+v", c.check, got, rep.Checks)
			}
			if c.status == Fail && rep.Pass {
				t.Fatal("a failing submission passed")
			}
			if c.status == Fail && strings.HasPrefix(c.check, "answers") {
				e := got.Evidence
				if e == nil || e.State == "" || e.Verdict == string(rules.OK) || e.WallMs <= 0 {
					t.Fatalf("no evidence for a behavioural failure: %+v", e)
				}
			}
		})
	}
}

func TestStaticChecksWithoutASandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := zipOf(t, dir, "ok.zip", fixture(t, "legal"), source, entry{Name: "README.md", Data: []byte("hello")})
	rep, err := Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Pass || rep.Warnings != 2 {
		t.Fatalf("want a pass with two README warnings: %+v", rep.Checks)
	}
	// A local backend runs the behavioural checks too (for bot authors).
	rep, err = Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake(), Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Seed: 1})
	if err != nil || !rep.Pass {
		t.Fatalf("%v %+v", err, rep)
	}
}

// TestValidateSaysWhyTheExecutableWasPicked: the executable check names the
// file that runs and the rule that picked it.
func TestValidateSaysWhyTheExecutableWasPicked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	engine := fixture(t, "engine")
	py := entry{Name: "bot.py", Data: []byte("#!/usr/bin/env python3\n"), Mode: 0o755}
	run := entry{Name: "run", Data: []byte("#!/bin/sh\nexec python3 bot.py\n"), Mode: 0o755}
	quiet := entry{Name: engine.Name, Data: engine.Data, Mode: 0o644}
	cases := []struct {
		name, zip, entry, detail string
	}{
		{"the only file with the run bit", zipOf(t, dir, "py.zip", py, quiet, readme), "bot.py", "bot.py is the only script with a #! line and the run bit set"},
		{"an ELF before a script", zipOf(t, dir, "elf.zip", py, engine, readme), "engine", `to run a script, call it run`},
		{"a file called run", zipOf(t, dir, "run.zip", run, py, engine, readme), "run", "run is the entry point by its name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Validate(context.Background(), c.zip, Options{Game: codeclash.Game{}, Intake: defaultIntake()})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Entry != c.entry {
				t.Fatalf("executable %q, want %q: %+v", rep.Entry, c.entry, rep.Checks)
			}
			for _, ch := range rep.Checks {
				if ch.Name == "executable" {
					if ch.Status != Pass || !strings.Contains(ch.Detail, c.detail) {
						t.Fatalf("%+v, want a pass saying %q", ch, c.detail)
					}
					return
				}
			}
			t.Fatalf("no executable check: %+v", rep.Checks)
		})
	}
}

func defaultIntake() submission.Limits { return submission.DefaultLimits() }

func opponent(t *testing.T) *submission.Bot {
	b, err := submission.Load(gobuild.MustStatic(t, "./examples/random"), submission.LoadOptions{Limits: submission.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateOtherGames(t *testing.T) {
	t.Parallel()
	be, lim, facts := probedEngine(t)
	root, _ := gobuild.ModuleRoot()
	pyBot, err := os.ReadFile(filepath.Join(root, "examples", "checkers", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	line, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := []struct {
		game, zip string
	}{
		{"checkers", zipOf(t, dir, "checkers.zip", entry{Name: "random_bot.py", Data: pyBot}, readme)},
		{"chess", zipOf(t, dir, "chess.zip", entry{Name: "legal", Data: line, Mode: 0o755}, source, readme)},
		{"acm6x6", zipOf(t, dir, "acm.zip", entry{Name: "acm6x6.legal", Data: line, Mode: 0o755}, source, readme)},
		{"tiles", zipOf(t, dir, "tiles.zip", entry{Name: "tiles.legal", Data: line, Mode: 0o755}, source, readme)},
	}
	for _, c := range cases {
		t.Run(c.game, func(t *testing.T) {
			g, err := rules.Lookup(c.game)
			if err != nil {
				t.Fatal(err)
			}
			opp := lineBotFor(t, c.game, line)
			var opts map[string]string
			if c.game == "acm6x6" {
				// Its 100 ms per move is the event's; this test is about
				// validating the game, not about a loaded machine's latency.
				opts = map[string]string{"moveTime": "2s"}
			}
			rep, err := Validate(context.Background(), c.zip, Options{Game: g, Rules: opts, Intake: defaultIntake(), Backend: be, Limits: lim, Facts: facts, Opponent: opp, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Pass || passedMatches(rep) != 2 {
				t.Fatalf("%+v", rep.Checks)
			}
			// A line game's first answers, whose clock covers the
			// program's start, are counted apart with their own limit.
			if lp := g.Protocol().Lines; lp != nil {
				l, _ := referee.LineTimes(*lp, opts)
				if u := rep.Usage; u == nil || u.StartLimitMs != float64((l.MoveTime+rules.ProgramStart).Milliseconds()) || u.LimitMs != float64(l.MoveTime.Milliseconds()) {
					t.Fatalf("usage %+v, want the first answers' limit %v + %v", rep.Usage, l.MoveTime, rules.ProgramStart)
				}
			}
		})
	}
}

// A line-game bot's first invalid line is shown with the dialogue that led
// to it and the position, terrain included, that it was asked in.
func TestValidateShowsTheDialogueOfAnInvalidLine(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	be := docker.New(cli, image)
	line, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	zip := zipOf(t, t.TempDir(), "tiles.zip", entry{Name: "tiles.garbage", Data: line, Mode: 0o755}, source, readme)
	rep, err := Validate(context.Background(), zip, Options{Game: tiles.Game{}, Intake: defaultIntake(), Backend: be,
		Limits: sandbox.DefaultLimits(), Opponent: lineBotFor(t, "tiles", line), Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var e *Evidence
	for _, ch := range rep.Checks {
		if ch.Name == "match as black" && ch.Status == Fail {
			e = ch.Evidence
		}
	}
	if rep.Pass || e == nil {
		t.Fatalf("no failing match as black: %+v", rep.Checks)
	}
	d := strings.Join(e.Dialogue, "\n")
	if !strings.HasPrefix(d, "> START\n> SIZE 12\n") || !strings.HasSuffix(d, "? TURN\n< resign please") || e.Verdict != "invalid-output" {
		t.Fatalf("dialogue:\n%s\nverdict %s", d, e.Verdict)
	}
	if !strings.Contains(e.Board, "T") || !strings.Contains(e.Board, "A") || !strings.Contains(e.Board, "turn 1 of 210") {
		t.Fatalf("board:\n%s", e.Board)
	}
}

// lineBotFor is the line fixture playing legally as the opponent.
func lineBotFor(t *testing.T, game string, data []byte) *submission.Bot {
	name := game + ".legal"
	return &submission.Bot{Name: "random", SHA256: submission.Sum(data),
		Program: sandbox.Program{Name: "random", Entry: name, Files: []sandbox.File{{Name: name, Data: data, Mode: 0o755}}}}
}

func TestArchiveFixForEveryKind(t *testing.T) {
	t.Parallel()
	fixes := map[submission.ErrorKind]string{
		submission.KindSymlink:        "replace the link with the file itself",
		submission.KindPathEscape:     "zip the folder from inside it (cd bot && zip -r ../bot.zip .)",
		submission.KindBomb:           "submit only the executable, its source and the README",
		submission.KindTooLarge:       "submit only the executable, its source and the README",
		submission.KindTooManyEntries: "submit only the executable, its source and the README",
		submission.KindEncrypted:      "zip without a password",
		submission.KindDuplicate:      "zip each file once",
		submission.KindBadName:        "build the ZIP again with a standard zip tool",
		submission.KindSpecialFile:    "build the ZIP again with a standard zip tool",
		submission.KindCompression:    "build the ZIP again with a standard zip tool",
		submission.KindNotZip:         "build the ZIP again with a standard zip tool",
		submission.KindCorrupt:        "build the ZIP again with a standard zip tool",
		submission.KindEmpty:          "build the ZIP again with a standard zip tool",
	}
	lim := submissiontest.Limits()
	seen := map[submission.ErrorKind]bool{}
	for _, c := range submissiontest.Cases(t, t.TempDir()) {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := fixes[c.Kind]
			if !ok {
				t.Fatalf("the reader refuses with kind %q, which this test gives no fix", c.Kind)
			}
			rep, err := Validate(context.Background(), c.Path, Options{Intake: lim})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Checks) != 1 || rep.Pass {
				t.Fatalf("want only a failing archive check, got %+v", rep)
			}
			got := rep.Checks[0]
			if got.Name != "archive" || got.Status != Fail || !strings.Contains(got.Detail, c.Rule) || got.Fix != want {
				t.Fatalf("check %+v, want archive failing with %q and fix %q", got, c.Rule, want)
			}
			// The fix comes from the kind, whatever the rule's text says.
			if fix := archiveFix(&submission.Error{Entry: "x", Rule: "symbolic link .. absolute bomb limit encrypted duplicate", Kind: c.Kind}); fix != want {
				t.Fatalf("archiveFix by kind %q: %q, want %q", c.Kind, fix, want)
			}
			seen[c.Kind] = true
		})
	}
	for k := range fixes {
		if !seen[k] {
			t.Errorf("no hostile submission of kind %q was tried", k)
		}
	}
}

// A submission handed in as source is built in the sandbox; a Python source
// with a syntax error fails the syntax check with Python's own message, and a
// sound one plays its matches.
func TestValidateASourceSubmission(t *testing.T) {
	t.Parallel()
	cli, image := dockertest.Engine(t)
	be := docker.New(cli, image)
	lim := sandbox.DefaultLimits()
	b := &build.Builder{Backend: be, Langs: langs.Default(), Limits: lim, Cache: t.TempDir()}
	root, _ := gobuild.ModuleRoot()
	text, err := os.ReadFile(filepath.Join(root, "examples", "tiles", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(text), "\n") // no #! line: source, not a script
	line, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/linefixture"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, source string
		pass         bool
		want         string
		file         string
	}{
		{"good", body, true, "", "random_bot.py"},
		{"bad", body + "\ndef broken(:\n", false, "SyntaxError", "random_bot.py"},
		{"c", "int main( { return 0; }\n", false, "build: bot.c:1:11: error: expected", "bot.c"},
		{"cpp", "int main() { return x; }\n", false, "build: bot.cpp:1:21: error:", "bot.cpp"},
		{"java", "public class Bot { void f( }\n", false, "build: Bot.java:1: error:", "Bot.java"},
	} {
		t.Run(c.name, func(t *testing.T) {
			zip := zipOf(t, dir, c.name+".zip", entry{Name: c.file, Data: []byte(c.source)}, readme)
			rep, err := Validate(context.Background(), zip, Options{Game: tiles.Game{}, Intake: defaultIntake(), Backend: be, Limits: lim,
				Builder: b, Opponent: lineBotFor(t, "tiles", line), Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, ch := range rep.Checks {
				if ch.Status == Fail {
					failed = append(failed, ch.Name+": "+ch.Detail)
					if ch.Evidence != nil {
						failed = append(failed, ch.Evidence.Output)
					}
				}
			}
			got := strings.Join(failed, "\n")
			if rep.Pass != c.pass || (c.want != "" && !strings.Contains(got, c.want)) {
				t.Fatalf("pass %v, failures:\n%s\nchecks %+v", rep.Pass, got, rep.Checks)
			}
		})
	}
}

// The documents a game's rules ask for fail a submission without them; an
// event may relax them to warnings, or ask them of a game whose rules do not.
func TestTheDocumentsRequiredFollowTheGameAndTheEvent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bare := filepath.Join(dir, "bot.py")
	if err := os.WriteFile(bare, []byte("#!/usr/bin/env python3\nprint('{}')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	status := func(g rules.Game, require []string) Status {
		t.Helper()
		rep, err := Validate(context.Background(), bare, Options{Game: g, Intake: defaultIntake(), Require: require})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Checks {
			if c.Name == "readme" {
				if (c.Status == Fail) == rep.Pass {
					t.Errorf("readme %s, yet the report passes: %v", c.Status, rep.Pass)
				}
				return c.Status
			}
		}
		t.Fatalf("no readme check: %+v", rep.Checks)
		return ""
	}
	chess, err := rules.Lookup("chess")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		game    rules.Game
		require []string
		want    Status
	}{
		{"Code Clash's own rules", codeclash.Game{}, nil, Fail},
		{"Code Clash relaxed", codeclash.Game{}, []string{}, Warn},
		{"Code Clash asking the source only", codeclash.Game{}, []string{rules.DocSource}, Warn},
		{"chess's own rules", chess, nil, Warn},
		{"chess asking a README", chess, []string{rules.DocReadme}, Fail},
	} {
		if got := status(c.game, c.require); got != c.want {
			t.Errorf("%s: a missing README is %s, want %s", c.name, got, c.want)
		}
	}
}

// The interpreter check reads a #! line as Linux does when the bot runs: it
// never calls a line fine that Linux cannot run.
func TestTheInterpreterCheckReadsTheLineAsLinuxDoes(t *testing.T) {
	t.Parallel()
	facts := &ImageFacts{Commands: map[string]bool{"python3": true, "/usr/bin/python3": true, "env": true, "/usr/bin/env": true}}
	for _, c := range []struct {
		line   string
		status Status
		says   string
	}{
		{"#!/usr/bin/env python3\n", Pass, "runs under python3"},
		{"#!/usr/bin/env python3\r\n", Pass, "runs under python3"}, // read as LF: see the executable check
		{"#!/usr/bin/python3 -u\n", Pass, "runs under /usr/bin/python3"},
		{"#!/usr/bin/env -S python3 -u\n", Pass, "runs under python3"},
		{"#!/usr/bin/env python3 -u\n", Fail, `Linux passes "python3 -u" to env as one word`},
		{"#!/usr/bin/env ruby\n", Fail, "needs ruby, which the runtime image does not have"},
		{"#!\n", Fail, "names no interpreter"},
	} {
		p := filepath.Join(t.TempDir(), "bot.py")
		if err := os.WriteFile(p, []byte(c.line+"print('{}')\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		rep, err := Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake(), Facts: facts, Require: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		var got *Check
		for i := range rep.Checks {
			if rep.Checks[i].Name == "interpreter" {
				got = &rep.Checks[i]
			}
		}
		if got == nil || got.Status != c.status || !strings.Contains(got.Detail, c.says) {
			t.Errorf("%q: %+v, want %s saying %q", c.line, got, c.status, c.says)
		}
	}
}

// The example Python bot written on Windows (CRLF line endings) runs as its
// author meant on the real engine, however it comes: an executable script,
// a plain file, with a byte order mark, in a ZIP made without Unix modes.
// Each passes and plays its full matches without a fault.
func TestAPythonBotWrittenOnWindowsPlays(t *testing.T) {
	t.Parallel()
	be, lim, facts := probedEngine(t)
	root, _ := gobuild.ModuleRoot()
	py, err := os.ReadFile(filepath.Join(root, "examples", "python", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	crlf := bytes.ReplaceAll(py, []byte("\n"), []byte("\r\n"))
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	windowsZip := ziptest.Bytes(t, ziptest.Entry{Name: "random_bot.py", Data: crlf, Edit: func(h *zip.FileHeader) { h.CreatorVersion = 0x0014 }},
		ziptest.Entry{Name: "README.md", Data: []byte("# Random\r\n\r\nAlgorithm: a random legal move. Build: nothing to build, python3 runs it.\r\n"),
			Edit: func(h *zip.FileHeader) { h.CreatorVersion = 0x0014 }})
	for name, p := range map[string]string{
		"an executable script":  write("exec.py", crlf, 0o755),
		"a plain file":          write("plain.py", crlf, 0o644),
		"a byte order mark":     write("bom.py", append([]byte{0xEF, 0xBB, 0xBF}, crlf...), 0o644),
		"a ZIP made on Windows": write("windows.zip", windowsZip, 0o644),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep, err := Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake(), Backend: be, Limits: lim,
				Facts: facts, Opponent: opponent(t), Seed: 4, Require: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range rep.Checks {
				if c.Name == "executable" && !strings.Contains(c.Detail, "written on Windows") {
					t.Errorf("the executable check does not say the script was written on Windows: %s", c.Detail)
				}
			}
			if !rep.Pass || passedMatches(rep) != 2 {
				t.Fatalf("%+v", rep.Checks)
			}
		})
	}
}

// The failure a report puts first is the one to fix first: a script that
// does not parse, a build that fails, a crash, each before the missing
// README, each with advice that fits it. The first two have nothing that
// could play (CannotPlay): no admission makes them play.
func TestTheFirstFailureIsTheOneToFixFirst(t *testing.T) {
	t.Parallel()
	backend := &local.Backend{Dir: t.TempDir()}
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 5 * time.Second
	builder := &build.Builder{Backend: backend, Langs: langs.Default(), Limits: lim, Timeout: time.Minute}
	for _, c := range []struct {
		name, file, src  string
		check, says, fix string
		cannotPlay       bool
	}{
		{"a syntax error", "bot.py", "#!/usr/bin/env python3\ndef main(:\n    pass\n", "answers as white", "bot.py, line 2: SyntaxError", "fix the syntax error at bot.py line 2", true},
		{"a syntax error in a source", "bot.py", "def main(:\n    pass\n", "syntax", "bot.py, line 1: SyntaxError", "fix the syntax error at bot.py line 1", true},
		{"a build error", "bot.c", "int main(void) { return oops; }\n", "build", "", "", true},
		{"a crash", "bot.py", "#!/usr/bin/env python3\nraise RuntimeError('boom')\n", "answers as white", "uncaught Python exception (RuntimeError: boom)", "fix the crash", false},
		{"a quiet error handler", "bot.py", "#!/usr/bin/env python3\nimport sys\ntry:\n    raise NotImplementedError\nexcept Exception:\n    sys.exit(3)\n", "answers as white",
			"printed nothing: its own error handler caught an error", "traceback.print_exc()", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(p, []byte(c.src), 0o755); err != nil {
				t.Fatal(err)
			}
			rep, err := Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake(), Backend: backend, Limits: lim,
				Builder: builder, Facts: &ImageFacts{Commands: map[string]bool{"python3": true}}, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			first := rep.First()
			if first == nil || first.Name != c.check || !strings.Contains(first.Detail, c.says) || !strings.Contains(first.Fix, c.fix) {
				t.Fatalf("first: %+v\nall: %+v", first, rep.Checks)
			}
			readme := false
			for _, ch := range rep.Checks {
				readme = readme || (ch.Name == "readme" && ch.Status == Fail)
			}
			if !readme {
				t.Errorf("the README's absence is not among the failures: %+v", rep.Checks)
			}
			if why := rep.CannotPlay(); (why != "") != c.cannotPlay {
				t.Errorf("CannotPlay says %q, want a reason: %v", why, c.cannotPlay)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "fix first: "+c.check) {
				t.Errorf("the text report does not say what to fix first:\n%s", text.String())
			}
		})
	}
}

// probedEngine is the test engine's docker backend with the default limits
// and the facts probed from its runtime image.
func probedEngine(t *testing.T) (*docker.Backend, sandbox.Limits, *ImageFacts) {
	t.Helper()
	cli, image := dockertest.Engine(t)
	be := docker.New(cli, image)
	lim := sandbox.DefaultLimits()
	facts, err := ProbeImage(context.Background(), be, lim)
	if err != nil {
		t.Fatal(err)
	}
	return be, lim, facts
}

// passedMatches counts the report's full matches that passed.
func passedMatches(rep *Report) int {
	n := 0
	for _, c := range rep.Checks {
		if strings.HasPrefix(c.Name, "match as") && c.Status == Pass {
			n++
		}
	}
	return n
}
