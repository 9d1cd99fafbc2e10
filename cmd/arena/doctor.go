package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docker/docker/client"
	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/images"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

func imageFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "image", Value: images.DefaultRuntime, Usage: "runtime image bots run in", EnvVars: []string{"ARENA_IMAGE"}}
}

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that this host can run official matches",
		Description: `Runs the preflight an organizer should run before an event: the engine answers,
its versions, cgroups and storage driver, the runtime image is present and what
it offers bots (glibc, interpreters, python3 and the numpy, pandas and tabulate
modules with their versions, read from inside as arena validate reads them),
the toolchain of each language bots may be handed in as (the languages table:
the built-in one or --languages FILE) with its version, as the table's version
command prints it in a sandbox of the image, a hardened container starts with
the limits that were asked (checked from inside), an out-of-memory kill is
reported as such, turn deadlines are exact, and this host's timers are precise.
Each check is ok, warn or fail, with a fix.

With --bench it measures instead what a turn costs, and for each language a
hello world built once in the sandbox with the table's commands, then started
--hello-runs times as a turn: a JVM's or an interpreter's start is paid every
turn by bots that run a fresh process per turn.

Exits 1 when a check that official matches need fails.`,
		Flags: []cli.Flag{
			imageFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the checks as JSON"},
			&cli.StringFlag{Name: "out", Value: ".", Usage: "the directory matches and tournaments will write to: its free space is checked", TakesFile: true},
			&cli.StringFlag{Name: "languages", Usage: "languages file whose toolchains to check (default: the built-in table; arena languages prints it)", TakesFile: true},
			&cli.BoolFlag{Name: "bench", Usage: "instead of the checks, measure what a turn costs: bare fork/exec, local backend, docker backend, a sandbox reset, container start, and a hello world of each language"},
			&cli.IntFlag{Name: "runs", Value: 200, Usage: "turns per measurement with --bench"},
			&cli.IntFlag{Name: "hello-runs", Value: 20, Usage: "starts of each language's hello world with --bench (0: leave the languages out)"},
		},
		Action: func(c *cli.Context) error {
			langs, err := languages(c)
			if err != nil {
				return err
			}
			if c.Bool("bench") {
				return benchAction(c, langs)
			}
			checks := []docker.Check{}
			cli, err := docker.Connect(dockerConn(c))
			if err != nil {
				checks = append(checks, docker.Check{Name: "engine", Status: docker.Fail, Detail: err.Error(), Fix: "check --docker-host and the TLS flags"})
			} else {
				defer cli.Close()
				checks = withImageOffers(c.Context, cli, c.String("image"), langs, docker.Preflight(c.Context, cli, c.String("image")))
			}
			checks = append(checks, timerCheck(), spaceCheck(c.String("out")))
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(checks); err != nil {
					return err
				}
			} else {
				printChecks(c.App.Writer, checks)
			}
			if n := countStatus(checks, docker.Fail); n > 0 {
				if c.Bool("json") {
					return silent(exitFailed)
				}
				return failf("%s failed; official matches need them to pass", plural(n, "check"))
			}
			return nil
		},
	}
}

func countStatus(checks []docker.Check, s docker.Status) int {
	n := 0
	for _, c := range checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

func printChecks(w io.Writer, checks []docker.Check) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	for _, c := range checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, strings.ToUpper(string(c.Status)), c.Detail)
		if c.Fix != "" && c.Status != docker.OK {
			fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
		}
	}
	tw.Flush()
}

// imageOffersCheck is the name of the row saying what the runtime image offers.
const imageOffersCheck = "image offers"

// withImageOffers adds, after the runtime image's row, what the image offers
// bots, then a row for each language of langs: a probe of the image when it
// is there, skips otherwise.
func withImageOffers(ctx context.Context, cli *client.Client, image string, langs build.Languages, checks []docker.Check) []docker.Check {
	at := slices.IndexFunc(checks, func(c docker.Check) bool { return c.Name == "runtime image" })
	rows := append([]docker.Check{{Name: imageOffersCheck, Status: docker.Skip, Detail: "needs the runtime image"}},
		languageRows(langs, nil, "needs the runtime image")...)
	if at < 0 {
		return append(checks, rows...)
	}
	if checks[at].Status == docker.OK {
		rows = probeImageOffers(ctx, cli, image, langs)
	}
	return slices.Insert(checks, at+1, rows...)
}

// probeImageOffers runs the image probe of arena validate in a sandbox of
// the image, asking it about the toolchain of each language of langs too:
// the image offers row, then one row per language.
func probeImageOffers(ctx context.Context, cli *client.Client, image string, langs build.Languages) []docker.Check {
	facts, err := validate.ProbeImageWith(ctx, docker.New(cli, image), sandbox.DefaultLimits(), toolchainQueries(langs))
	if err != nil {
		return append([]docker.Check{{Name: imageOffersCheck, Status: docker.Warn, Detail: "the image probe failed: " + err.Error(),
			Fix: "arena validate cannot check submissions against this image either; see the hardened container check"}},
			languageRows(langs, nil, "needs the image probe")...)
	}
	return append([]docker.Check{offersCheck(facts, packagers())}, languageRows(langs, facts, "")...)
}

// packagers are the registered games whose adapters need something of the
// image, by name.
func packagers() map[string]rules.Packager {
	out := map[string]rules.Packager{}
	for _, name := range rules.Names() {
		if g, err := rules.Lookup(name); err == nil {
			if p, ok := g.(rules.Packager); ok {
				out[name] = p
			}
		}
	}
	return out
}

// offersCheck says what the image offers bots: glibc, its shared libraries,
// its interpreters, python3 and the Python modules of the event's bots with
// their versions. A missing module, or a game's need the image does not
// meet, is a warning: the matches that need them would fault.
func offersCheck(f *validate.ImageFacts, games map[string]rules.Packager) docker.Check {
	c := docker.Check{Name: imageOffersCheck, Status: docker.OK}
	var parts, missing []string
	parts = append(parts, fmt.Sprintf("glibc %s, %d shared libraries", f.Glibc, len(f.Libraries)))
	if f.HasCommand("python3") {
		py := "python3"
		if v := f.Versions["python3"]; v != "" {
			py += " " + v
		}
		var mods []string
		for _, m := range validate.PythonModules {
			if !f.HasCommand("python3-" + m) {
				missing = append(missing, m)
				continue
			}
			mods = append(mods, strings.TrimSpace(m+" "+f.Versions["python3-"+m]))
		}
		if len(mods) > 0 {
			py += " with " + strings.Join(mods, ", ")
		}
		if len(missing) > 0 {
			py += "; no " + strings.Join(missing, ", ")
		}
		parts = append(parts, py)
	} else {
		parts = append(parts, "no python3")
		missing = append([]string{"python3"}, validate.PythonModules...)
	}
	var names []string
	for k := range f.Commands {
		if !strings.Contains(k, "/") && !strings.HasPrefix(k, "python3-") {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	parts = append(parts, "interpreters "+strings.Join(names, ", "))
	c.Detail = strings.Join(parts, "; ")

	var unmet []string
	gameNames := make([]string, 0, len(games))
	for name := range games {
		gameNames = append(gameNames, name)
	}
	slices.Sort(gameNames)
	for _, name := range gameNames {
		var lacks []string
		for _, n := range games[name].Needs() {
			if !f.HasCommand(n) {
				lacks = append(lacks, n)
			}
		}
		if len(lacks) > 0 {
			unmet = append(unmet, name+" needs "+strings.Join(lacks, ", "))
		}
	}
	if len(unmet) > 0 {
		c.Detail += "; " + strings.Join(unmet, "; ")
	}
	if len(missing) > 0 || len(unmet) > 0 {
		c.Status = docker.Warn
		c.Fix = "the event's Python bots import numpy, pandas and tabulate: rebuild the image with arena image build (its Dockerfile installs python3, python3-numpy, python3-pandas and python3-tabulate)"
	}
	return c
}

// timerCheck measures how late a 1 ms sleep wakes up on this host.
func timerCheck() docker.Check {
	const n = 200
	late := make([]time.Duration, n)
	for i := range late {
		t := time.Now()
		time.Sleep(time.Millisecond)
		late[i] = time.Since(t) - time.Millisecond
	}
	slices.Sort(late)
	p50, p99 := late[n/2], late[n*99/100]
	c := docker.Check{Name: "host timers", Status: docker.OK,
		Detail: fmt.Sprintf("a 1 ms sleep wakes %v late at p50, %v at p99", p50.Round(time.Microsecond), p99.Round(time.Microsecond))}
	if p99 > 10*time.Millisecond {
		c.Status = docker.Warn
		c.Fix = "the host is overloaded or its timers are coarse; avoid sub-second turn limits here"
	}
	return c
}

// spaceCheck reports the free space of the directory evidence goes to: a
// tournament keeps up to 64 MiB of data files per game and waits below 1 GiB.
func spaceCheck(dir string) docker.Check {
	c := docker.Check{Name: "free space", Status: docker.OK}
	free, err := tournament.FreeSpace(dir)
	if err != nil {
		c.Status, c.Detail, c.Fix = docker.Warn, err.Error(), "name the output directory with --out"
		return c
	}
	c.Detail = fmt.Sprintf("%s free in %s", units.BytesSize(float64(free)), dir)
	if free < 4<<30 {
		c.Status = docker.Warn
		c.Fix = "a tournament keeps up to 64 MiB of evidence per game (--evidence-budget) and starts no game below 1 GiB free (--min-free); free some space or write elsewhere"
	}
	return c
}

func benchAction(c *cli.Context, langs build.Languages) error {
	if c.Int("runs") < 10 {
		return usagef("--runs must be at least 10")
	}
	if c.Int("hello-runs") < 0 {
		return usagef("--hello-runs must not be negative")
	}
	cl, err := engine(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	timings, err := docker.Bench(c.Context, cl, c.String("image"), c.Int("runs"))
	if err != nil {
		return err
	}
	var failed []string
	if c.Int("hello-runs") > 0 {
		var more []docker.Timing
		var unknown []string
		more, unknown, failed, err = benchLanguages(c.Context, cl, c.String("image"), langs, c.Int("hello-runs"), timings[0].P50Ms)
		if err != nil {
			return err
		}
		timings = append(timings, more...)
		if len(unknown) > 0 {
			fmt.Fprintf(c.App.ErrWriter, "arena: not measured: %s (arena has no hello world in them)\n", strings.Join(unknown, ", "))
		}
		for _, s := range failed {
			fmt.Fprintf(c.App.ErrWriter, "arena: not measured: %s\n", s)
		}
	}
	if err := printTimings(c, timings); err != nil {
		return err
	}
	if len(failed) > 0 {
		return failf("%s could not be measured (see above)", plural(len(failed), "language"))
	}
	return nil
}

func printTimings(c *cli.Context, timings []docker.Timing) error {
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(timings)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tRUNS\tP50\tP99\tP50 / BARE\tP50 - BARE")
	for _, t := range timings {
		ratio, over := "", ""
		if t.XBare > 0 {
			ratio, over = fmt.Sprintf("%.2fx", t.XBare), fmt.Sprintf("%+.2f ms", t.OverMs)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f ms\t%.2f ms\t%s\t%s\n", t.Name, t.Runs, t.P50Ms, t.P99Ms, ratio, over)
	}
	return tw.Flush()
}
