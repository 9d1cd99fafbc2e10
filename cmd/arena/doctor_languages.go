package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// languageCheck is the name of a language's row: "language .java".
func languageCheck(ext string) string { return "language " + ext }

// toolchainQueries asks the image probe, for each language of the table,
// for the programs its commands start and its version.
func toolchainQueries(langs build.Languages) []validate.ToolchainQuery {
	var out []validate.ToolchainQuery
	for _, ext := range langs.Exts() {
		l := langs[ext]
		out = append(out, validate.ToolchainQuery{Name: ext, Programs: programs(l), Version: l.Version})
	}
	return out
}

// programs lists the programs a language's commands start (the version
// command's, the build's, the syntax check's, then the run's): the first
// word of each simple command, leaving out what the build leaves itself
// ({dir}/bot, ./bot) and variable assignments.
func programs(l build.Language) []string {
	var out []string
	for _, cmd := range []string{l.Version, l.Build, l.Check, l.Run} {
		for _, part := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune("&|;()", r) }) {
			for _, word := range strings.Fields(part) {
				if strings.Contains(word, "=") {
					continue // FOO=bar before the program
				}
				if !strings.ContainsAny(word, "{}$`'\"") && (!strings.Contains(word, "/") || strings.HasPrefix(word, "/")) && !slices.Contains(out, word) {
					out = append(out, word)
				}
				break
			}
		}
	}
	return out
}

// imagePackages says, for the built-in languages, what the runtime image's
// Dockerfile installs for them.
var imagePackages = map[string]string{
	".py":   "python3",
	".c":    "gcc and libc6-dev",
	".cpp":  "g++",
	".java": "default-jdk-headless (javac, jar and java)",
	".js":   "nodejs",
}

// languageRow says what the image offers a language: its toolchain's
// version, or what is missing with a fix. A missing toolchain is a
// warning: bots handed in as that language would not build or run.
func languageRow(l build.Language, tc validate.Toolchain, found bool) docker.Check {
	c := docker.Check{Name: languageCheck(l.Ext), Status: docker.OK, Detail: tc.Version}
	if found && tc.OK() {
		return c
	}
	c.Status = docker.Warn
	var parts []string
	switch {
	case !found:
		parts = append(parts, "the image probe did not ask about it")
	default:
		if len(tc.Missing) > 0 {
			parts = append(parts, "no "+strings.Join(tc.Missing, ", ")+" in the image")
		}
		if tc.Error != "" {
			parts = append(parts, tc.Error)
		} else if tc.Version != "" {
			parts = append(parts, tc.Version)
		}
	}
	c.Detail = strings.Join(parts, "; ")
	def, builtIn := build.Default()[l.Ext]
	if pkgs := imagePackages[l.Ext]; builtIn && pkgs != "" && def.Version == l.Version {
		c.Fix = fmt.Sprintf("bots handed in as %s source would not build or run: rebuild the runtime image with arena image build (its Dockerfile installs %s)", l.Ext, pkgs)
	} else {
		c.Fix = fmt.Sprintf("bots handed in as %s source would not build or run: install the toolchain (%s) in the runtime image, e.g. with a Dockerfile FROM it, or drop %s from the languages file", l.Ext, strings.Join(programs(l), ", "), l.Ext)
	}
	return c
}

// languageRows are the rows of every language of the table, from what the
// image probe found (f nil: the probe did not run, the rows are skipped
// with why).
func languageRows(langs build.Languages, f *validate.ImageFacts, why string) []docker.Check {
	var out []docker.Check
	for _, ext := range langs.Exts() {
		if f == nil {
			out = append(out, docker.Check{Name: languageCheck(ext), Status: docker.Skip, Detail: why})
			continue
		}
		tc, found := f.Toolchains[ext]
		out = append(out, languageRow(langs[ext], tc, found))
	}
	return out
}

// helloWorlds are programs that print "hello" and exit, by extension: what
// doctor --bench builds and starts in the sandbox. A Java class is named as
// its file.
var helloWorlds = map[string]string{
	".py":  "print(\"hello\")\n",
	".c":   "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
	".cpp": "#include <iostream>\nint main() { std::cout << \"hello\" << std::endl; return 0; }\n",
	".java": "public class Hello {\n    public static void main(String[] args) {\n" +
		"        System.out.println(\"hello\");\n    }\n}\n",
	".js": "console.log(\"hello\");\n",
}

// helloBot is the hello world of ext, handed in as source.
func helloBot(ext string) (*submission.Bot, bool) {
	src, ok := helloWorlds[ext]
	if !ok {
		return nil, false
	}
	name := "Hello" + ext
	return &submission.Bot{Name: "hello" + strings.ReplaceAll(ext, ".", "-"),
		Program:     sandbox.Program{Name: "hello" + ext, Files: []sandbox.File{{Name: name, Data: []byte(src), Mode: 0o644}}},
		SourceEntry: name}, true
}

// benchLanguages builds the hello world of each language of the table once
// in the sandbox, with the table's commands, then starts it runs times in
// one box, as a turn: what a fresh process of that language costs per turn
// (a JVM's start, an interpreter's). Each language gives a build row (one
// run) and a turn row; bare, the bare fork/exec p50 in ms, gives the turn
// rows their ratio. A language arena has no hello world in is named in
// unknown; one whose hello world does not build or run, in failed.
func benchLanguages(ctx context.Context, cli *client.Client, image string, langs build.Languages, runs int, bare float64) (out []docker.Timing, unknown, failed []string, err error) {
	backend := docker.New(cli, image)
	lim := sandbox.DefaultLimits()
	b := &build.Builder{Backend: backend, Langs: langs, Limits: lim}
	for _, ext := range langs.Exts() {
		bot, ok := helloBot(ext)
		if !ok {
			unknown = append(unknown, ext)
			continue
		}
		t := time.Now()
		ready, err := b.Ready(ctx, bot)
		if err != nil {
			return out, unknown, failed, err
		}
		took := time.Since(t)
		if ready.BuildError != "" {
			failed = append(failed, ext+": the hello world did not build: "+oneLine(ready.BuildError))
			continue
		}
		d, why, err := startHello(ctx, backend, ready.Program, lim, runs)
		if err != nil {
			return out, unknown, failed, err
		}
		if why != "" {
			failed = append(failed, ext+": "+why)
			continue
		}
		out = append(out, timingOf(ext+" hello world build", []time.Duration{took}, 0))
		out = append(out, timingOf(ext+" hello world turn", d, bare))
	}
	return out, unknown, failed, nil
}

// startHello runs a built hello world runs times in one box and returns
// each turn's time, or why the hello world did not say hello.
func startHello(ctx context.Context, backend sandbox.Backend, prog sandbox.Program, lim sandbox.Limits, runs int) ([]time.Duration, string, error) {
	box, err := backend.Open(ctx, sandbox.Spec{Program: prog, Limits: lim})
	if err != nil {
		return nil, "", err
	}
	defer box.Close(context.WithoutCancel(ctx))
	var d []time.Duration
	for range runs {
		t := time.Now()
		r, err := box.Run(ctx, sandbox.Turn{Args: []string{sandbox.GameDirToken + "/state.json"}})
		if err != nil {
			return nil, "", err
		}
		took := time.Since(t)
		if r.ExitCode != 0 || r.StartError != "" || string(r.Stdout.Data) != "hello\n" {
			return nil, fmt.Sprintf("the hello world did not say hello (exit %d, timed out %v, stdout %q, stderr %q%s)",
				r.ExitCode, r.TimedOut, r.Stdout.Data, oneLine(string(r.Stderr.Data)), withStartError(r.StartError)), nil
		}
		d = append(d, took)
	}
	return d, "", nil
}

func withStartError(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}

// timingOf summarises durations as the bench's rows do; bare > 0 adds the
// comparison with a bare fork/exec.
func timingOf(name string, d []time.Duration, bare float64) docker.Timing {
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	t := docker.Timing{Name: name, Runs: len(d), P50Ms: ms(d[len(d)/2]), P99Ms: ms(d[len(d)*99/100])}
	if bare > 0 {
		t.XBare, t.OverMs = t.P50Ms/bare, t.P50Ms-bare
	}
	return t
}

// oneLine puts a compiler's or a program's output on one line, cut short.
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	out := strings.Join(lines, " | ")
	if len(out) > 300 {
		out = out[:300] + "..."
	}
	return out
}
