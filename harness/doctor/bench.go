package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox"
)

// BenchReport is what Bench measured, and what it could not.
type BenchReport struct {
	// Timings are the bench rows of cfg.Sandbox's kind (sandbox.Doctor;
	// the docker backend's begin with a bare fork/exec), then a build row
	// and a turn row for each language measured.
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

// Bench measures what a turn costs on this host: the bench of cfg.Sandbox's
// kind (sandbox.Doctor.Bench; the docker backend's measures a no-op bot
// bare, through the local backend, through the docker backend, a sandbox
// reset and a container start, cfg.Runs turns each, under each runtime the
// engine has side by side), then, unless cfg.HelloRuns is 0, a hello world
// of each language of the table built once in the sandbox with the table's
// commands and started cfg.HelloRuns times as a turn, under each runtime
// measured: a JVM's or an interpreter's start is paid every turn by bots
// that run a fresh process per turn. A kind whose boxes run elsewhere is
// measured beside this host's (benchBeside). A bad cfg is a *ConfigError; a
// backend that could not be reached, or a measurement that breaks, an
// error.
func Bench(ctx context.Context, cfg Config) (*BenchReport, error) {
	if cfg.Runs < minRuns {
		return nil, &ConfigError{Field: "Runs", Problem: fmt.Sprintf("must be at least %d", minRuns)}
	}
	if cfg.HelloRuns < 0 {
		return nil, &ConfigError{Field: "HelloRuns", Problem: "must not be negative"}
	}
	d, err := sandbox.DoctorOf(cfg.Sandbox.Kind)
	if err != nil {
		return nil, err
	}
	if !d.Host {
		return benchBeside(ctx, cfg, d)
	}
	timings, err := d.Bench(ctx, cfg.Sandbox, cfg.Runs, true)
	if err != nil {
		return nil, err
	}
	r := &BenchReport{Timings: timings}
	if cfg.HelloRuns > 0 {
		bare, runtimes := timings[0].P50Ms, runtimesOf(timings)
		for _, rt := range runtimes {
			sc := cfg.Sandbox
			sc.Runtime = rt
			more, unknown, failed, err := benchLanguages(ctx, sc, cfg.languages(), cfg.HelloRuns, bare)
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

// runtimesOf are the runtimes the rows that ran a box name, in order.
func runtimesOf(timings []sandbox.Timing) []string {
	var out []string
	for _, t := range timings {
		if t.Runtime != "" && !slices.Contains(out, t.Runtime) {
			out = append(out, t.Runtime)
		}
	}
	return out
}

// benchBeside measures a kind whose boxes run elsewhere (a cluster's) and,
// when this host's backend (sandbox.DefaultKind) opens with the image, the
// same rows on this host first, under its own runtime, side by side. The
// languages are not measured.
func benchBeside(ctx context.Context, cfg Config, d sandbox.Doctor) (*BenchReport, error) {
	r := &BenchReport{}
	host := cfg.Host
	if host.Kind == "" {
		host.Kind = sandbox.DefaultKind
	}
	if host.Image == "" {
		host.Image = cfg.Sandbox.Image
	}
	if hd, err := sandbox.DoctorOf(host.Kind); err == nil && hd.Host {
		if _, release, err := sandbox.Open(ctx, host); err == nil {
			release()
			if r.Timings, err = hd.Bench(ctx, host, cfg.Runs, false); err != nil {
				return nil, fmt.Errorf("%s: %w", host.Kind, err)
			}
		}
	}
	more, err := d.Bench(ctx, cfg.Sandbox, cfg.Runs, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Sandbox.Kind, err)
	}
	r.Timings = append(r.Timings, more...)
	return r, nil
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
// in a sandbox of the backend sc names, with the table's commands, then
// starts it runs times in one box, as a turn: what a fresh process of that
// language costs per turn (a JVM's start, an interpreter's). Each language
// gives a build row (one run) and a turn row; bare, the bare fork/exec p50
// in ms, gives the turn rows their ratio. A language arena has no hello
// world in is named in unknown; one whose hello world does not build or
// run, in failed.
func benchLanguages(ctx context.Context, sc sandbox.Config, langs langs.Languages, runs int, bare float64) (out []sandbox.Timing, unknown, failed []string, err error) {
	backend, release, err := sandbox.Open(ctx, sc)
	if err != nil {
		return nil, nil, nil, err
	}
	defer release()
	runtime := sc.Runtime
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
