package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/kubernetes"
)

// BenchReport is what Bench measured, and what it could not.
type BenchReport struct {
	// Timings are docker.Bench's rows (a bare fork/exec first), then a
	// build row and a turn row for each language measured.
	Timings []sandbox.Timing
	// Unknown are the languages of the table arena has no hello world in:
	// not measured.
	Unknown []string
	// Failed say, for each language whose hello world did not build or did
	// not say hello, ".ext: why": not measured.
	Failed []string
}

// ConfigError is a Config Bench cannot measure with.
type ConfigError struct {
	// Field is the Config field at fault ("Runs"), Problem what is wrong
	// with it ("must be at least 10").
	Field, Problem string
}

func (e *ConfigError) Error() string { return "doctor: " + e.Field + " " + e.Problem }

// Bench measures what a turn costs on this host: docker.Bench's rows (a
// no-op bot bare, through the local backend, through the docker backend, a
// sandbox reset and a container start, cfg.Runs turns each), then, unless
// cfg.HelloRuns is 0, a hello world of each language of the table built once
// in the sandbox with the table's commands and started cfg.HelloRuns times as
// a turn: a JVM's or an interpreter's start is paid every turn by bots that
// run a fresh process per turn. A bad cfg is a *ConfigError; an engine that
// does not answer, or a measurement that breaks, an error.
func Bench(ctx context.Context, cfg Config) (*BenchReport, error) {
	if cfg.Runs < minRuns {
		return nil, &ConfigError{Field: "Runs", Problem: fmt.Sprintf("must be at least %d", minRuns)}
	}
	if cfg.HelloRuns < 0 {
		return nil, &ConfigError{Field: "HelloRuns", Problem: "must not be negative"}
	}
	if cfg.Sandbox == "kubernetes" {
		return benchCluster(ctx, cfg)
	}
	cli, err := docker.Dial(ctx, cfg.Engine)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	timings, err := docker.Bench(ctx, cli, cfg.Image, cfg.Runtime, cfg.Runs)
	if err != nil {
		return nil, err
	}
	bare := timings[0].P50Ms
	runtimes, err := benchRuntimes(ctx, cli, cfg.Runtime)
	if err != nil {
		return nil, err
	}
	for _, rt := range runtimes[1:] {
		more, err := docker.BenchRuntime(ctx, cli, cfg.Image, rt, cfg.Runs, bare)
		if err != nil {
			return nil, fmt.Errorf("runtime %s: %w", rt, err)
		}
		timings = append(timings, more...)
	}
	r := &BenchReport{Timings: timings}
	if cfg.HelloRuns > 0 {
		for _, rt := range runtimes {
			more, unknown, failed, err := benchLanguages(ctx, cli, cfg.Image, rt, cfg.languages(), cfg.HelloRuns, bare)
			if err != nil {
				return nil, err
			}
			r.Timings = append(r.Timings, more...)
			r.Unknown = unknown
			for _, f := range failed {
				if len(runtimes) > 1 {
					f = rt + ": " + f
				}
				r.Failed = append(r.Failed, f)
			}
		}
	}
	return r, nil
}

// benchCluster measures a box on the cluster (kubernetes.Bench) and, when
// this host's engine answers and has the image, the same rows on Docker
// first (docker.Bench), side by side. The languages are measured on
// Docker only.
func benchCluster(ctx context.Context, cfg Config) (*BenchReport, error) {
	r := &BenchReport{}
	if cli, err := docker.Dial(ctx, cfg.Engine); err == nil {
		defer cli.Close()
		if _, err := docker.New(cli, cfg.Image).CheckImage(ctx); err == nil {
			// Docker's own runtime: a RuntimeClass names no runtime of the engine.
			if r.Timings, err = docker.Bench(ctx, cli, cfg.Image, "", cfg.Runs); err != nil {
				return nil, fmt.Errorf("docker: %w", err)
			}
		}
	}
	more, err := kubernetes.Bench(ctx, cfg.sandbox(), cfg.Runs)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	r.Timings = append(r.Timings, more...)
	return r, nil
}

// benchRuntimes are the runtimes the bench measures side by side: the one
// asked for first, then runc and every gVisor runtime the engine has, so an
// organizer sees what the second wall costs before choosing it.
func benchRuntimes(ctx context.Context, cli *client.Client, asked string) ([]string, error) {
	info, err := cli.Info(ctx)
	if err != nil {
		return nil, err
	}
	first, err := docker.ResolveRuntime(info, asked)
	if err != nil {
		return nil, err
	}
	out := []string{first.Name}
	for _, name := range append([]string{"runc"}, docker.GVisorRuntimes(info)...) {
		if _, err := docker.ResolveRuntime(info, name); err == nil && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
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
func benchLanguages(ctx context.Context, cli *client.Client, image, runtime string, langs build.Languages, runs int, bare float64) (out []sandbox.Timing, unknown, failed []string, err error) {
	backend := docker.New(cli, image)
	backend.UseRuntime(runtime)
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
		build, turn := sandbox.TimingOf(ext+" hello world build", []time.Duration{took}, 0), sandbox.TimingOf(ext+" hello world turn", d, bare)
		build.Runtime, turn.Runtime = runtime, runtime
		out = append(out, build, turn)
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
