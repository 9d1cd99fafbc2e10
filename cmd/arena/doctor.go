package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/doctor"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/sandbox"
)

func imageFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "image", Value: sandbox.DefaultImage, Usage: "runtime image bots run in", EnvVars: []string{"ARENA_IMAGE"}}
}

// runtimeFlag names the engine's runtime bots run under; usage says what
// the command takes when it is left out.
func runtimeFlag(usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: "runtime", Aliases: []string{"runtime-class"}, Usage: "the engine's OCI runtime bots run under: runc, or runsc for gVisor's second wall; on Kubernetes, the RuntimeClass (default: " + usage + ")", EnvVars: []string{"ARENA_RUNTIME"}}
}

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that this host can run official matches",
		Description: `Runs the preflight an organizer should run before an event: the engine answers,
its versions, cgroups and storage driver, the runtime bots run under (--runtime:
runc, or runsc for gVisor, a second wall against kernel bugs) and what it
protects against, the runtime image is present and what
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
turn by bots that run a fresh process per turn. When the engine has both runc
and a gVisor runtime, the container rows and the languages are measured under
each, side by side (the RUNTIME column).

With --sandbox kubernetes it checks the cluster of --kube-config instead: the API
server and its version, arena's rights in --kube-namespace (asked with
SelfSubjectAccessReview), a hardened Pod admitted unchanged (a server-side dry
run, read back), the RuntimeClass, a NetworkPolicy denying the bots' traffic, a
hardened Pod's limits read back from inside, whether a bot's Pod reaches
another Pod, its node, the API server or the internet (a Pod that can is a
failure, whatever the policy says), out-of-memory detection and turn
deadlines. --bench then measures a Pod's creation until it runs, the attach
stream's first byte, a box's open and delete and a turn, beside Docker's rows
when this host's engine has the image.

Exits 1 when a check that official matches need fails.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sandbox", Value: "docker", Usage: "what to check: docker (this host's engine) or kubernetes (the cluster of --kube-config, in --kube-namespace)"},
			imageFlag(),
			runtimeFlag("the engine's, usually runc"),
			&cli.BoolFlag{Name: "json", Usage: "print the checks as JSON"},
			&cli.StringFlag{Name: "out", Value: ".", Usage: "the directory matches and tournaments will write to: its free space is checked", TakesFile: true},
			&cli.StringFlag{Name: "languages", Usage: "languages file whose toolchains to check (default: the built-in table; arena languages prints it)", TakesFile: true},
			&cli.BoolFlag{Name: "bench", Usage: "instead of the checks, measure what a turn costs: bare fork/exec, local backend, docker backend, a sandbox reset, container start, and a hello world of each language"},
			&cli.IntFlag{Name: "runs", Value: doctor.DefaultRuns, Usage: "turns per measurement with --bench"},
			&cli.IntFlag{Name: "hello-runs", Value: doctor.DefaultHelloRuns, Usage: "starts of each language's hello world with --bench (0: leave the languages out)"},
		},
		Action: func(c *cli.Context) error {
			langs, err := languages(c)
			if err != nil {
				return err
			}
			kind := c.String("sandbox")
			if kind != "docker" && kind != "kubernetes" {
				return usagef("--sandbox: %q is not docker or kubernetes", kind)
			}
			settings, err := backendSettings(appContext(c), kind)
			if err != nil {
				return err
			}
			cfg := doctor.Config{Sandbox: sandbox.Config{Kind: kind, Image: c.String("image"), Runtime: c.String("runtime"), Backend: settings},
				Host:      sandbox.Config{Kind: sandbox.DefaultKind, Image: c.String("image"), Backend: dockerConn(c)},
				Languages: langs, Out: c.String("out"), Runs: c.Int("runs"), HelloRuns: c.Int("hello-runs")}
			if c.Bool("bench") {
				return benchAction(c, cfg)
			}
			checks := doctor.Check(c.Context, cfg)
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(checks); err != nil {
					return err
				}
			} else {
				printChecks(c.App.Writer, checks)
			}
			if n := doctor.Failures(checks); n > 0 {
				if c.Bool("json") {
					return silent(exitFailed)
				}
				return failf("%s failed; official matches need them to pass", words.Plural(n, "check"))
			}
			return nil
		},
	}
}

func printChecks(w io.Writer, checks []sandbox.Check) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	for _, c := range checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, strings.ToUpper(string(c.Status)), c.Detail)
		if c.Fix != "" && c.Status != sandbox.OK {
			fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
		}
	}
	tw.Flush()
}

// doctorBenchFlags name the flags of the Config fields the bench reads.
var doctorBenchFlags = map[string]string{"Runs": "--runs", "HelloRuns": "--hello-runs"}

func benchAction(c *cli.Context, cfg doctor.Config) error {
	r, err := doctor.Bench(c.Context, cfg)
	var bad *doctor.ConfigError
	if errors.As(err, &bad) {
		return usagef("%s %s", doctorBenchFlags[bad.Field], bad.Problem)
	}
	if err != nil {
		return err
	}
	if len(r.Unknown) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "arena: not measured: %s (arena has no hello world in them)\n", strings.Join(r.Unknown, ", "))
	}
	for _, s := range r.Failed {
		fmt.Fprintf(c.App.ErrWriter, "arena: not measured: %s\n", s)
	}
	if err := printTimings(c, r.Timings); err != nil {
		return err
	}
	if len(r.Failed) > 0 {
		return failf("%s could not be measured (see above)", words.Plural(len(r.Failed), "language"))
	}
	return nil
}

func printTimings(c *cli.Context, timings []sandbox.Timing) error {
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(timings)
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHAT\tRUNTIME\tRUNS\tP50\tP99\tP50 / BARE\tP50 - BARE")
	for _, t := range timings {
		ratio, over, rt := "", "", t.Runtime
		if t.XBare > 0 {
			ratio, over = fmt.Sprintf("%.2fx", t.XBare), fmt.Sprintf("%+.2f ms", t.OverMs)
		}
		if rt == "" {
			rt = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f ms\t%.2f ms\t%s\t%s\n", t.Name, rt, t.Runs, t.P50Ms, t.P99Ms, ratio, over)
	}
	return tw.Flush()
}
