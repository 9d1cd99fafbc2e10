package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/doctor"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// distribFlags let a tournament spread its games over workers.
func distribFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "listen", Usage: "spread the games over workers (arena worker): run a NATS JetStream server on HOST:PORT, TLS only, admitting the workers enrolled with arena enroll; its store in DIR/nats (port 0: any free port; the address is printed)"},
		&cli.StringFlag{Name: "nats-cert", Usage: "with --listen: the server's TLS certificate (PEM) instead of one from the tournament's own authority", TakesFile: true},
		&cli.StringFlag{Name: "nats-key", Usage: "with --nats-cert: its private key (PEM)", TakesFile: true},
		&cli.StringSliceFlag{Name: "nats-name", Usage: "with --listen: another host name or address workers reach this machine at, for its certificate (default: this machine's name and addresses)"},
		&cli.StringFlag{Name: "nats", Usage: "spread the games over workers through an existing NATS JetStream server or cluster at this URL"},
		&cli.StringFlag{Name: "nats-creds", Usage: "with --nats: the coordinator's NATS credentials file", TakesFile: true},
		&cli.StringFlag{Name: "nats-ca", Usage: "with --nats: the CA certificate the cluster's TLS certificate chains to (default: the system's)", TakesFile: true},
		&cli.DurationFlag{Name: "ack-wait", Value: distrib.DefaultAckWait, Usage: "with workers: how long a game may go without news from its worker before another worker gets it"},
		&cli.Float64Flag{Name: "check-fraction", Value: runner.DefaultCheckFraction, Usage: fmt.Sprintf("with workers: the fraction of each worker's results this machine checks by playing the game again itself, after its first %d (always checked); 0 to 1 (docs/scale.md)", runner.FirstChecked)},
	}
}

// metricsFlag serves a process's Prometheus metrics (docs/operations.md).
func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics-listen", Usage: "serve Prometheus metrics on /metrics at HOST:PORT (docs/operations.md; arena --log-level info logs the address)", DefaultText: "none"}
}

// remoteOf is what distribFlags say of the workers of the tournament or
// event in dir.
func remoteOf(c *cli.Context, dir string) (runner.Remote, error) {
	checks := runner.Checks{Fraction: c.Float64("check-fraction")}
	if err := checks.Validate(); err != nil {
		return runner.Remote{}, usagef("--check-fraction: %v", err)
	}
	return runner.Remote{Dir: dir, Listen: c.String("listen"), Cert: c.String("nats-cert"), Key: c.String("nats-key"),
		Names: c.StringSlice("nats-name"), URL: c.String("nats"), Creds: c.String("nats-creds"), CA: c.String("nats-ca"),
		AckWait: c.Duration("ack-wait"), Checks: checks,
		Notify: func(msg string) { fmt.Fprintln(c.App.ErrWriter, "arena:", msg) }}, nil
}

// coordinator opens the tournament's queue when --listen or --nats asks for
// workers (runner.Coordinate); nil when the games are played here.
func coordinator(c *cli.Context, dir string) (*runner.Coordinator, error) {
	r, err := remoteOf(c, dir)
	if err != nil || !r.Enabled() {
		return nil, err
	}
	co, err := runner.Coordinate(c.Context, r)
	var bad *tournament.ConfigError
	if errors.As(err, &bad) {
		return nil, usagef("--listen/--nats: %v", err)
	}
	return co, err
}

func enrollCommand() *cli.Command {
	return &cli.Command{
		Name:      "enroll",
		Usage:     "admit a worker machine to a tournament and write its credentials",
		UsageText: "arena enroll --out DIR [--url URL] [--creds FILE] NAME",
		Description: `Makes a key for the worker NAME, keeps its public half in DIR/workers/NAME.pub
and writes its credentials (the key, the tournament's name and the
certificate authority its coordinator's server is checked against) to
NAME.creds, readable by its owner only. Copy that file to the worker's
machine and start 'arena worker --creds NAME.creds --join URL' there.

The key lets the worker take this tournament's games and hand in its own
results, nothing else, and signs every transcript it plays: the coordinator
counts a result only when it replays and is signed by the key its worker was
enrolled with. A coordinator that runs admits new workers within seconds;
removing DIR/workers/NAME.pub revokes one.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the tournament directory", Required: true},
			&cli.StringFlag{Name: "url", Usage: "the coordinator's address to put in the credentials (arena worker --join overrides it)"},
			&cli.StringFlag{Name: "creds", Usage: "where to write the credentials (default: NAME.creds here)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("want one worker NAME")
			}
			name := c.Args().First()
			if err := roster.CheckName(name); err != nil {
				return usagef("%v", err)
			}
			path := c.String("creds")
			if path == "" {
				path = name + ".creds"
			}
			if _, err := os.Stat(path); err == nil {
				return usagef("%s exists; give another --creds file", path)
			}
			dir := c.String("out")
			cr, err := distrib.Enroll(tournament.WorkersDir(dir), runner.QueueName(dir), name, c.String("url"))
			if err != nil {
				return err
			}
			if err := cr.Write(path); err != nil {
				// The key was never handed out: take the enrolment back.
				os.Remove(filepath.Join(tournament.WorkersDir(dir), name+".pub"))
				return err
			}
			fmt.Fprintf(c.App.Writer, "enrolled %s in %s; its credentials: %s (keep them secret; on its machine: arena worker --creds %s --join URL)\n",
				name, runner.QueueName(dir), path, filepath.Base(path))
			return nil
		},
	}
}

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:      "worker",
		Usage:     "play a coordinator's tournament games on this machine",
		UsageText: "arena worker --creds FILE [--join URL] [--concurrency N] [--sandbox docker|local] [--image IMAGE]",
		Description: `Joins the games queue of a tournament that 'arena tournament --listen' (or
--nats) coordinates, with the credentials 'arena enroll' wrote for this
machine, and plays its games here, --concurrency at once, each in this
machine's sandbox with the boxes reused between games.

Before it joins it runs the doctor's engine checks and refuses to play if one fails
or if its arena or runtime image differs from the coordinator's; then it
measures this machine (doctor --bench's turn figures), which goes with every
result into the tournament's report.

A game is done only once its match directory and result are with the
coordinator, which re-judges it and checks its signature before it counts.
A worker rides out a coordinator's restart or a network cut (it reconnects);
one that stops (Ctrl-C) hands its games back, and one that is killed loses
nothing (its games go to another worker once their ack wait runs out). It
exits when the coordinator says the tournament is over.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "creds", Usage: "this worker's credentials (arena enroll)", Required: true, TakesFile: true},
			&cli.StringFlag{Name: "join", Usage: "the coordinator's URL, as it printed it (default: the one in the credentials)"},
			&cli.StringFlag{Name: "nats-creds", Usage: "with a coordinator on an organizer's NATS cluster: this worker's NATS credentials file (the arena credentials then only sign)", TakesFile: true},
			&cli.StringFlag{Name: "nats-ca", Usage: "with --nats-creds: the CA certificate the cluster's TLS certificate chains to (default: the system's)", TakesFile: true},
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "games played at once: about the cores less one for bots that think, half the cores for bots that answer at once (docs/scale.md)"},
			&cli.IntFlag{Name: "bench-runs", Value: 50, Usage: "turns per measurement of this machine before it joins (0: do not measure)"},
			&cli.StringFlag{Name: "sandbox", Value: "docker", Usage: "where bots run: docker (isolated) or local (plain processes, UNSAFE)"},
			metricsFlag(),
			imageFlag(),
			runtimeFlag("the engine's, usually runc; it must be the coordinator's"),
		},
		Action: runWorker,
	}
}

func runWorker(c *cli.Context) error {
	if c.Int("bench-runs") != 0 && c.Int("bench-runs") < 10 {
		return usagef("--bench-runs must be 0 or at least 10")
	}
	creds, err := distrib.ReadCredentials(c.String("creds"))
	if err != nil {
		return usagef("--creds: %v", err)
	}
	if c.String("join") == "" && creds.URL == "" {
		return usagef("--join URL: the credentials name no coordinator")
	}
	backend, closer, err := openBackend(c, sandboxConfig(c), true)
	if err != nil {
		return err
	}
	defer closer()
	j := runner.Join{Creds: creds, URL: c.String("join"), NATSCreds: c.String("nats-creds"), NATSCA: c.String("nats-ca"),
		Backend: backend, Slots: c.Int("concurrency"), ArenaVersion: arenaVersion(),
		Notify: func(msg string) { fmt.Fprintln(c.App.ErrWriter, "arena:", msg) }}
	if backend.Name() == "docker" {
		j.Check, j.Bench = doctorChecks(c), benchFigures(c, c.Int("bench-runs"))
	}
	if addr := c.String("metrics-listen"); addr != "" {
		m, stop, err := runner.ServeWorkerMetrics(c.Context, addr, j.Slots, slog.Default())
		if err != nil {
			return err
		}
		defer stop()
		j.Metrics = m
	}
	over, err := runner.Work(c.Context, j)
	var bad *tournament.ConfigError
	var suspended *runner.SuspendedError
	switch {
	case errors.As(err, &bad):
		return usagef("%v", err)
	case errors.Is(err, runner.ErrNotAdmitted), errors.As(err, &suspended):
		return failf("%v", err)
	case err != nil:
		return err
	}
	if over {
		fmt.Fprintf(c.App.ErrWriter, "arena: the tournament is over; worker %s stops\n", creds.Worker)
	}
	return nil
}

// doctorChecks are the doctor's engine checks for a worker (doctor.EngineChecks):
// the failed ones are printed, and refuse the machine.
func doctorChecks(c *cli.Context) func(context.Context) error {
	return func(ctx context.Context) error {
		err := doctor.EngineChecks(ctx, doctor.Config{Sandbox: sandbox.Config{Image: c.String("image"), Runtime: c.String("runtime"), Backend: dockerConn(c)}})
		var failed *doctor.FailedError
		if errors.As(err, &failed) {
			printChecks(c.App.ErrWriter, failed.Checks)
			return fmt.Errorf("this machine fails %s (above)", words.Plural(failed.Failures(), "doctor check"))
		}
		return err
	}
}

// benchFigures are doctor --bench's turn figures, runs turns each (0: none).
func benchFigures(c *cli.Context, runs int) func(context.Context) ([]tournament.Figure, error) {
	if runs == 0 {
		return nil
	}
	return func(ctx context.Context) ([]tournament.Figure, error) {
		cl, err := engine(c)
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		fmt.Fprintf(c.App.ErrWriter, "arena: measuring this machine (%d turns per figure)\n", runs)
		timings, err := docker.Bench(ctx, cl, c.String("image"), c.String("runtime"), runs)
		var out []tournament.Figure
		for _, t := range timings {
			out = append(out, tournament.Figure{Name: t.Name, P50Ms: t.P50Ms, P99Ms: t.P99Ms})
		}
		return out, err
	}
}

func workersCommand() *cli.Command {
	return &cli.Command{
		Name:  "workers",
		Usage: "the worker machines of a tournament or an event: who is enrolled, who is suspended, and letting one in again",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the enrolled workers and the suspended ones, with why",
				UsageText: "arena workers list DIR",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef("workers list takes one argument: the tournament's or the event's directory")
					}
					dir := c.Args().First()
					wdir := tournament.WorkersDir(dir)
					var game func(int) string // a tournament's own numbers
					if _, err := os.Stat(filepath.Join(dir, event.ConfigFile)); err == nil {
						game = event.JobName // an event's jobs, by kind and pair
					}
					enrolled, err := roster.Enrolled(wdir)
					if err != nil {
						return err
					}
					out, err := roster.Suspended(wdir)
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "WORKER\tSTATE")
					for _, w := range roster.Names(enrolled) {
						state := "admitted"
						if s, ok := out[w]; ok {
							state = s.Named(game)
						}
						fmt.Fprintf(tw, "%s\t%s\n", w, state)
					}
					if len(enrolled) == 0 {
						fmt.Fprintln(tw, "(no worker enrolled: arena enroll --out DIR NAME)")
					}
					return tw.Flush()
				},
			},
			{
				Name:      "readmit",
				Usage:     "let a suspended worker in again, once what was wrong with it is mended",
				UsageText: "arena workers readmit DIR NAME",
				Description: `A worker whose result was refused for what it claimed (another game than the
one it was sent, a transcript that does not replay or is not signed by its
enrolled key, an archive that cannot be read) is suspended at once: the
queue lets it in no more, and it stops with the reason. Once its machine or
its arena is mended, this lets it in again: a running coordinator admits it
within seconds.`,
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return usagef("workers readmit takes two arguments: the tournament's or the event's directory, and the worker's name")
					}
					s, err := roster.Readmit(tournament.WorkersDir(c.Args().Get(0)), c.Args().Get(1))
					if err != nil {
						return failf("%v", err)
					}
					_, err = fmt.Fprintf(c.App.Writer, "worker %s is admitted again (it was suspended at %s: %s)\n", s.Worker, s.At.UTC().Format(time.RFC3339), s.Reason)
					return err
				},
			},
		},
	}
}
