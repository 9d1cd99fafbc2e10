package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/images"
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
its versions, cgroups and storage driver, the runtime image is present, a
hardened container starts with the limits that were asked (checked from inside),
an out-of-memory kill is reported as such, turn deadlines are exact, and this
host's timers are precise. Each check is ok, warn or fail, with a fix.

Exits 1 when a check that official matches need fails.`,
		Flags: []cli.Flag{
			imageFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print the checks as JSON"},
			&cli.BoolFlag{Name: "bench", Usage: "instead of the checks, measure what a turn costs: bare fork/exec, local backend, docker backend, a sandbox reset, container start"},
			&cli.IntFlag{Name: "runs", Value: 200, Usage: "turns per measurement with --bench"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("bench") {
				return benchAction(c)
			}
			checks := []docker.Check{}
			cli, err := docker.Connect(dockerConn(c))
			if err != nil {
				checks = append(checks, docker.Check{Name: "engine", Status: docker.Fail, Detail: err.Error(), Fix: "check --docker-host and the TLS flags"})
			} else {
				defer cli.Close()
				checks = append(checks, docker.Preflight(c.Context, cli, c.String("image"))...)
			}
			checks = append(checks, timerCheck())
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

func benchAction(c *cli.Context) error {
	if c.Int("runs") < 10 {
		return usagef("--runs must be at least 10")
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
