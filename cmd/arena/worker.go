package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/sandbox"
)

// distribFlags let a tournament spread its games over workers.
func distribFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "listen", Usage: "spread the games over workers (arena worker): run a NATS JetStream server on HOST:PORT, its store in DIR/nats (port 0: any free port; the address is printed)"},
		&cli.StringFlag{Name: "nats", Usage: "spread the games over workers through an existing NATS JetStream server or cluster at this URL"},
		&cli.DurationFlag{Name: "ack-wait", Value: distrib.DefaultAckWait, Usage: "with workers: how long a game may go without news from its worker before another worker gets it"},
	}
}

// tournamentName is the queue's name: the tournament directory's.
func tournamentName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Base(dir)
	}
	return filepath.Base(abs)
}

// coordinator opens the tournament's queue when --listen or --nats asks for
// workers; nil when the games are played here. The closer stops what it
// started.
func coordinator(c *cli.Context, dir string) (*distrib.Queue, func(), error) {
	listen, url := c.String("listen"), c.String("nats")
	if listen == "" && url == "" {
		return nil, func() {}, nil
	}
	if listen != "" && url != "" {
		return nil, nil, usagef("--listen and --nats: choose one")
	}
	var srv *distrib.Server
	if listen != "" {
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return nil, nil, usagef("--listen: want HOST:PORT, got %q", listen)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return nil, nil, usagef("--listen: bad port %q", port)
		}
		if err := os.MkdirAll(filepath.Join(dir, "nats"), 0o755); err != nil {
			return nil, nil, err
		}
		if srv, err = distrib.StartServer(filepath.Join(dir, "nats"), host, p); err != nil {
			return nil, nil, err
		}
		url = srv.URL()
	}
	nc, err := nats.Connect(url, nats.Name("arena coordinator"))
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		return nil, nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	closer := func() {
		nc.Close()
		if srv != nil {
			srv.Close()
		}
	}
	name := tournamentName(dir)
	q, err := distrib.Open(c.Context, nc, name, c.Duration("ack-wait"))
	if err != nil {
		closer()
		return nil, nil, err
	}
	fmt.Fprintf(c.App.ErrWriter, "arena: games go to workers: arena worker --join %s --tournament %s\n", url, name)
	return q, closer, nil
}

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:      "worker",
		Usage:     "play a coordinator's tournament games on this machine",
		UsageText: "arena worker --join URL --tournament NAME [--concurrency N] [--sandbox docker|local] [--image IMAGE]",
		Description: `Joins the games queue of a tournament that 'arena tournament --listen' (or
--nats) coordinates, and plays its games here, --concurrency at once, each in
this machine's sandbox with the boxes reused between games. A game is done
only once its match directory and result are with the coordinator, which
re-judges it before it counts; a worker that stops (Ctrl-C) hands its games
back, and one that is killed loses nothing (its games go to another worker
once their ack wait runs out).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "join", Usage: "the coordinator's NATS URL", Required: true},
			&cli.StringFlag{Name: "tournament", Usage: "the tournament's name, as the coordinator printed it", Required: true},
			&cli.StringFlag{Name: "name", Usage: "this worker's name in results (default: the host name and pid)"},
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "games played at once"},
			&cli.StringFlag{Name: "sandbox", Value: "docker", Usage: "where bots run: docker (isolated) or local (plain processes, UNSAFE)"},
			imageFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.Int("concurrency") < 1 {
				return usagef("--concurrency must be at least 1")
			}
			name := c.String("name")
			if name == "" {
				host, _ := os.Hostname()
				name = fmt.Sprintf("%s-%d", host, os.Getpid())
			}
			backend, closer, err := openBackend(c, c.String("sandbox"), c.String("image"), true)
			if err != nil {
				return err
			}
			defer closer()
			pool := sandbox.NewPool(backend)
			defer pool.Close(context.WithoutCancel(c.Context))
			nc, err := nats.Connect(c.String("join"), nats.Name("arena worker "+name))
			if err != nil {
				return fmt.Errorf("join %s: %w", c.String("join"), err)
			}
			defer nc.Close()
			q, err := distrib.Join(c.Context, nc, c.String("tournament"))
			if err != nil {
				return err
			}
			scratch, err := os.MkdirTemp("", "arena-worker-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(scratch)
			tw := &tournament.Worker{Queue: q, Backend: pool, Scratch: scratch}
			fmt.Fprintf(c.App.ErrWriter, "arena: worker %s plays %s's games, %d at once\n", name, c.String("tournament"), c.Int("concurrency"))
			w := &distrib.Worker{Queue: q, Name: name, Slots: c.Int("concurrency"), Play: tw.Play}
			if err := w.Run(c.Context); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
}
