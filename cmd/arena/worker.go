package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// workersDir is where a tournament keeps its enrolled workers' keys and its
// certificate authority.
func workersDir(dir string) string { return filepath.Join(dir, "workers") }

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
// started. Workers enrolled or revoked while it runs are admitted or cut off
// within seconds.
func coordinator(c *cli.Context, dir string) (*distrib.Queue, func(), error) {
	listen, url := c.String("listen"), c.String("nats")
	if listen == "" && url == "" {
		return nil, func() {}, nil
	}
	if listen != "" && url != "" {
		return nil, nil, usagef("--listen and --nats: choose one")
	}
	if (c.String("nats-cert") == "") != (c.String("nats-key") == "") {
		return nil, nil, usagef("--nats-cert and --nats-key go together")
	}
	name := tournamentName(dir)
	wdir := workersDir(dir)
	enrolled, err := distrib.Enrolled(wdir)
	if err != nil {
		return nil, nil, err
	}
	var srv *distrib.Server
	var nc *nats.Conn
	if listen != "" {
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return nil, nil, usagef("--listen: want HOST:PORT, got %q", listen)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 {
			return nil, nil, usagef("--listen: bad port %q", port)
		}
		tlsConf, err := serverTLS(c, wdir, host)
		if err != nil {
			return nil, nil, err
		}
		if err := os.MkdirAll(filepath.Join(dir, "nats"), 0o755); err != nil {
			return nil, nil, err
		}
		if srv, err = distrib.StartServer(distrib.ServerOptions{Dir: filepath.Join(dir, "nats"), Host: host, Port: p,
			TLS: tlsConf, Tournament: name, Workers: enrolled}); err != nil {
			return nil, nil, err
		}
		url = srv.URL()
		if nc, err = srv.Connect("arena coordinator"); err != nil {
			srv.Close()
			return nil, nil, err
		}
	} else {
		opts := []nats.Option{nats.Name("arena coordinator"), nats.MaxReconnects(-1)}
		if f := c.String("nats-creds"); f != "" {
			opts = append(opts, nats.UserCredentials(f))
		}
		if f := c.String("nats-ca"); f != "" {
			opts = append(opts, nats.RootCAs(f))
		}
		if nc, err = nats.Connect(url, opts...); err != nil {
			return nil, nil, fmt.Errorf("connect to %s: %w", url, err)
		}
	}
	ctx, stopWatch := context.WithCancel(context.WithoutCancel(c.Context))
	watched := make(chan struct{})
	closer := func() {
		stopWatch()
		<-watched
		nc.Close()
		if srv != nil {
			srv.Close()
		}
	}
	q, err := distrib.Open(c.Context, nc, name, c.Duration("ack-wait"))
	if err == nil {
		err = q.AddWorkers(c.Context, distrib.Names(enrolled))
	}
	if err != nil {
		close(watched)
		closer()
		return nil, nil, err
	}
	go func() {
		defer close(watched)
		watchEnrolment(ctx, c, wdir, q, srv, enrolled)
	}()
	w := c.App.ErrWriter
	fmt.Fprintf(w, "arena: games go to workers at %s (tournament %s)\n", url, name)
	if len(enrolled) == 0 {
		fmt.Fprintf(w, "arena: no worker is enrolled yet; for each machine: arena enroll --out %s NAME, then there: arena worker --creds NAME.creds --join %s\n", dir, url)
	} else {
		fmt.Fprintf(w, "arena: enrolled: %s; on each: arena worker --creds NAME.creds --join %s\n", strings.Join(distrib.Names(enrolled), ", "), url)
	}
	return q, closer, nil
}

// serverTLS is the certificate the coordinator's server shows: the
// organizer's own, or one its tournament's authority issues for this
// machine's names and addresses.
func serverTLS(c *cli.Context, wdir, host string) (*tls.Config, error) {
	if cert := c.String("nats-cert"); cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, c.String("nats-key"))
		if err != nil {
			return nil, fmt.Errorf("--nats-cert/--nats-key: %w", err)
		}
		return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}, nil
	}
	ca, err := distrib.LoadOrCreateCA(wdir)
	if err != nil {
		return nil, err
	}
	return ca.ServerTLS(append(distrib.LocalHosts(host), c.StringSlice("nats-name")...))
}

// watchEnrolment admits workers enrolled after the start and cuts off those
// revoked (their .pub removed), every two seconds.
func watchEnrolment(ctx context.Context, c *cli.Context, wdir string, q *distrib.Queue, srv *distrib.Server, known map[string]string) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := distrib.Enrolled(wdir)
		if err != nil {
			slog.Warn("read the enrolled workers", "err", err)
			continue
		}
		if maps.Equal(now, known) {
			continue
		}
		if err := q.AddWorkers(ctx, distrib.Names(now)); err != nil {
			slog.Warn("admit the enrolled workers", "err", err)
			continue
		}
		if srv != nil {
			if err := srv.SetWorkers(now); err != nil {
				slog.Warn("admit the enrolled workers", "err", err)
				continue
			}
		}
		for _, n := range distrib.Names(now) {
			if known[n] == "" {
				fmt.Fprintf(c.App.ErrWriter, "arena: worker %s enrolled\n", n)
			}
		}
		for _, n := range distrib.Names(known) {
			if now[n] == "" {
				fmt.Fprintf(c.App.ErrWriter, "arena: worker %s revoked\n", n)
			}
		}
		known = now
	}
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
			if err := distrib.CheckName(name); err != nil {
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
			cr, err := distrib.Enroll(workersDir(dir), tournamentName(dir), name, c.String("url"))
			if err != nil {
				return err
			}
			if err := cr.Write(path); err != nil {
				// The key was never handed out: take the enrolment back.
				os.Remove(filepath.Join(workersDir(dir), name+".pub"))
				return err
			}
			fmt.Fprintf(c.App.Writer, "enrolled %s in %s; its credentials: %s (keep them secret; on its machine: arena worker --creds %s --join URL)\n",
				name, tournamentName(dir), path, filepath.Base(path))
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
			imageFlag(),
		},
		Action: runWorker,
	}
}

func runWorker(c *cli.Context) error {
	if c.Int("concurrency") < 1 {
		return usagef("--concurrency must be at least 1")
	}
	if c.Int("bench-runs") != 0 && c.Int("bench-runs") < 10 {
		return usagef("--bench-runs must be 0 or at least 10")
	}
	creds, err := distrib.ReadCredentials(c.String("creds"))
	if err != nil {
		return usagef("--creds: %v", err)
	}
	url := c.String("join")
	if url == "" {
		url = creds.URL
	}
	if url == "" {
		return usagef("--join URL: the credentials name no coordinator")
	}
	key, err := creds.SigningKey()
	if err != nil {
		return err
	}
	ew := c.App.ErrWriter
	backend, closer, err := openBackend(c, c.String("sandbox"), c.String("image"), true)
	if err != nil {
		return err
	}
	defer closer()
	machine, err := describeMachine(c, backend)
	if err != nil {
		return err
	}
	opts, err := creds.Options()
	if err != nil {
		return err
	}
	if f := c.String("nats-creds"); f != "" {
		opts = creds.ClusterOptions(f, c.String("nats-ca"))
	} else if c.IsSet("nats-ca") {
		return usagef("--nats-ca goes with --nats-creds (a coordinator's own server is checked against the credentials' authority)")
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return fmt.Errorf("join %s: %w", url, err)
	}
	defer nc.Close()
	q, err := distrib.Join(c.Context, nc, creds.Tournament, creds.Worker)
	if err != nil {
		return err
	}
	if err := admitted(c, q, backend); err != nil {
		return err
	}
	pool := sandbox.NewPool(backend)
	defer pool.Close(context.WithoutCancel(c.Context))
	scratch, err := os.MkdirTemp("", "arena-worker-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	var over atomic.Bool
	stop, err := q.OnFinished(func() { over.Store(true); cancel() })
	if err != nil {
		return err
	}
	defer stop()
	tw := &tournament.Worker{Queue: q, Backend: pool, Scratch: scratch, Signer: key}
	fmt.Fprintf(ew, "arena: worker %s plays %s's games, %d at once\n", creds.Worker, creds.Tournament, c.Int("concurrency"))
	w := &distrib.Worker{Queue: q, Slots: c.Int("concurrency"), Play: tw.Play, Machine: machine}
	if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if over.Load() {
		fmt.Fprintf(ew, "arena: the tournament is over; worker %s stops\n", creds.Worker)
	}
	return nil
}

// admitted checks that this worker plays as the coordinator would: the same
// arena and the same runtime image.
func admitted(c *cli.Context, q *distrib.Queue, backend sandbox.Backend) error {
	// The coordinator says them once its bots are ready (built from source,
	// maybe): wait for them.
	var data []byte
	for waited := false; ; waited = true {
		var err error
		if data, err = q.Facts(c.Context); err == nil {
			break
		}
		if c.Context.Err() != nil {
			return c.Context.Err()
		}
		if !waited {
			fmt.Fprintf(c.App.ErrWriter, "arena: waiting for the coordinator to start the tournament (%v)\n", err)
		}
		select {
		case <-c.Context.Done():
			return c.Context.Err()
		case <-time.After(time.Second):
		}
	}
	var theirs tournament.Facts
	if err := json.Unmarshal(data, &theirs); err != nil {
		return fmt.Errorf("the tournament's facts: %w", err)
	}
	mine, err := tournament.FactsOf(c.Context, theirs.Game, arenaVersion(), backend)
	if err != nil {
		return err
	}
	if err := theirs.Admit(mine); err != nil {
		return failf("%v", err)
	}
	return nil
}

// describeMachine runs the doctor's checks on a Docker worker (refusing to
// play when one fails) and measures the machine.
func describeMachine(c *cli.Context, backend sandbox.Backend) ([]byte, error) {
	host, _ := os.Hostname()
	m := tournament.Machine{Host: host, CPUs: runtime.NumCPU(), Sandbox: backend.Name()}
	d, err := backend.Describe(c.Context)
	if err != nil {
		return nil, err
	}
	m.ImageID, m.Engine = d["imageId"], d["engineVersion"]
	if backend.Name() == "docker" {
		cl, err := engine(c)
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		checks := docker.Preflight(c.Context, cl, c.String("image"))
		if n := countStatus(checks, docker.Fail); n > 0 {
			printChecks(c.App.ErrWriter, checks)
			return nil, failf("this machine fails %s (above); a worker must pass them all", plural(n, "doctor check"))
		}
		if runs := c.Int("bench-runs"); runs > 0 {
			fmt.Fprintf(c.App.ErrWriter, "arena: measuring this machine (%d turns per figure)\n", runs)
			timings, err := docker.Bench(c.Context, cl, c.String("image"), runs)
			if err != nil {
				return nil, fmt.Errorf("measure this machine: %w", err)
			}
			for _, t := range timings {
				m.Bench = append(m.Bench, tournament.Figure{Name: t.Name, P50Ms: t.P50Ms, P99Ms: t.P99Ms})
			}
		}
	}
	return json.Marshal(m)
}
