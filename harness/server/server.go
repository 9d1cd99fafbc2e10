// Package server starts an event's server: it reads the event's
// configuration, opens its store and the sandbox, builds every service
// once (the validators, the ladder and scrimmages, the final, the workers'
// coordinator, the metrics) and hands them to package web's pages, then
// serves them until its context ends and stops them all in order.
//
// It is the one place these are built and started: package web must never
// start a service itself, and this package must never answer a request
// itself (pages, the API and their rules are web's).
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/ladder"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/harness/web"
	"github.com/arenabots/arena/internal/setting"
	"github.com/arenabots/arena/internal/static"
	"github.com/arenabots/arena/sandbox"
)

// Options configure a running event server.
type Options struct {
	// EventDir holds event.toml, the database, uploads and validations.
	EventDir string
	// Addr is where to listen (host:port).
	Addr string
	// TLSCert and TLSKey, both set, serve HTTPS.
	TLSCert, TLSKey string
	// TrustProxy names the reverse proxies in front (ParseProxies: a hop
	// count, or their addresses); "": none, X-Forwarded-* are ignored.
	TrustProxy string
	// Validators is how many validations run at once; 0 follows the host
	// (event.DefaultCapacity of its cores and the bots' CPU limit).
	Validators int
	// Games is how many scrimmages and ladder pairs are played at once; 0
	// follows the host, as Validators.
	Games int
	// Workers, when enabled, sends every game (scrimmages, the ladder, the
	// final) to arena workers enrolled in EventDir (its Dir is EventDir).
	Workers runner.Remote
	// Sandbox is the backend validations and games run on.
	Sandbox sandbox.Config
	// BuildCache is the directory of built bots ("" for none).
	BuildCache string
	Log        *slog.Logger
	// Ready, when set, is told the address the server listens on.
	Ready func(addr string)
	// MetricsAddr, when set, serves Prometheus metrics on /metrics at this
	// address (host:port), apart from the public site.
	MetricsAddr string
	// ArenaVersion goes into every transcript's header.
	ArenaVersion string
}

// capacity settles how many validations and games run at once: what o says,
// else what the sandbox's host fits (a setting above that is taken, with a
// warning).
func (o *Options) capacity(ctx context.Context, backend sandbox.Backend, botCPUs float64) error {
	cores := runtime.NumCPU()
	d, err := backend.Describe(ctx)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(d["cpus"]); err == nil && n > 0 {
		cores = n
	}
	def := event.DefaultCapacity(cores, botCPUs)
	set := event.Capacity{Validators: o.Validators, Games: o.Games}
	if set.Validators < 1 {
		set.Validators = def.Validators
	}
	if set.Games < 1 {
		set.Games = def.Games
	}
	if w := set.Oversubscribed(cores, botCPUs); w != "" && set != def {
		o.Log.Warn("the host is oversubscribed: " + w)
	}
	o.Validators, o.Games = set.Validators, set.Games
	o.Log.Info("at once", "validations", set.Validators, "games", set.Games, "cores", cores, "cpusPerBot", botCPUs)
	return nil
}

// Serve runs the event in o.EventDir until ctx ends: it reads event.toml
// (refusing a bad one), opens the sandbox (removing what a killed server
// left), queues again the validations a stop interrupted, validates uploads
// and serves the pages and the API. It returns once every validation under
// way has stopped and the backend is released.
func Serve(ctx context.Context, o Options) (err error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	cfg, err := event.LoadConfig(o.EventDir)
	if err != nil {
		return err
	}
	resolved, err := cfg.Settings().Resolve()
	if err != nil {
		return err
	}
	st, err := event.Open(o.EventDir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	st.Log = o.Log
	defer readAhead(ctx, st, o.Log)()
	openings, err := cfg.LadderOpenings(o.EventDir)
	if err != nil {
		return err
	}
	sb, backend, release, err := openSandbox(ctx, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, release()) }()
	if err := o.capacity(ctx, backend, resolved.Limits.CPUs); err != nil {
		return err
	}

	vo, err := equipValidation(ctx, o, cfg, resolved, backend)
	if err != nil {
		return err
	}
	s := newSite(st, cfg, vo.Builder, o.Log)
	s.PlaysOn = backend.Where
	// Before the backend is released.
	defer probeLanguages(ctx, backend, resolved.Limits, vo.Builder, s, o.Log)()
	if s.Proxies, err = web.ParseProxies(o.TrustProxy); err != nil {
		return setting.Errorf(setting.TrustProxy, "{setting}: %w", err)
	}
	s.Secure = o.TLSCert != ""
	v := &services.Validator{Store: st, Options: vo, Workers: max(o.Validators, 1), KeepFiles: cfg.Validation.KeepFiles, Changed: s.Changed, Log: o.Log}
	s.Wake = v.Wake
	key, err := st.Signer()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers, stopWorkers, err := coordinate(ctx, o, s)
	if err != nil {
		return err
	}
	defer stopWorkers()
	player := &services.Player{Store: st, Settings: resolved, Backend: backend, Image: sb.Image, Builder: vo.Builder,
		Intake: cfg.Intake(), Opponent: vo.Opponent, ArenaVersion: o.ArenaVersion, Signer: key, Changed: s.TeamChanged, Log: o.Log,
		Ladder: cfg.Ladder.Enabled, LogGames: cfg.Log.Ladder, LadderShare: cfg.Ladder.Share, Matchmaking: &ladder.Options{Near: ladder.DefaultOptions.Near, Far: cfg.Ladder.Far}, Open: cfg.Open, Seed: 1, Slots: o.Games, Workers: workers,
		Openings: openings, LadderEvidence: cfg.LadderEvidence(), Watch: s.Watch}
	s.WakePlayer = player.Wake
	finals, err := finalRunner(ctx, o, st, cfg, resolved, backend, sb.Image, vo.Builder, workers, s)
	if err != nil {
		return err
	}
	s.Rerunner = &services.Rerunner{Store: st, Game: resolved.Game, Backend: backend, Builder: vo.Builder, Intake: cfg.Intake(),
		Opponent: vo.Opponent, Repeat: 3}

	if o.MetricsAddr != "" {
		stop, err := serveMetrics(ctx, o, st, s, workers)
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	srv := httpServer(s, o.Log)
	defer finals.Wait()
	if err := resumeFinal(ctx, st, finals, o.Log); err != nil {
		return err
	}
	go s.Follow(ctx)
	loops := []func(context.Context) error{v.Run, player.Run}
	if workers != nil {
		loops = append(loops, workers.Exchange.Collect)
	}
	if ws := cfg.Log.WitnessList(); len(ws) > 0 {
		// Each checkpoint of the final's log is cosigned by the witnesses
		// as it is signed.
		w := &services.Witnessing{Store: st, Witnesses: ws, Client: &http.Client{Timeout: 30 * time.Second}, Log: o.Log}
		loops = append(loops, w.Run)
	}
	loops = append(loops, servePages(srv, ln, o))
	o.Log.Info("serving the event", "game", cfg.Game, "addr", "http"+map[bool]string{true: "s"}[s.Secure]+"://"+ln.Addr().String(), "dir", o.EventDir)
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}
	return runUntil(ctx, cancel, loops, func() error {
		shut, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		s.CloseStreams()
		return srv.Shutdown(shut)
	})
}

// openSandbox opens the backend o.Sandbox names, sweeping away what a
// killed server left and logging the backend's notes; sb is the
// configuration it was opened with, release releases it.
func openSandbox(ctx context.Context, o Options) (sb sandbox.Config, backend sandbox.Backend, release func() error, err error) {
	sb = o.Sandbox
	sb.Sweep = true
	if sb.Notify == nil {
		sb.Notify = func(msg string) { o.Log.Info(msg) }
	}
	backend, release, err = sandbox.Open(ctx, sb)
	return sb, backend, release, err
}

// equipValidation makes the options validations run with: the event's
// game, rules, intake and limits on backend, its builder, and what
// validate.Equip adds (a warning it has is logged).
func equipValidation(ctx context.Context, o Options, cfg event.Config, resolved settings.Resolved, backend sandbox.Backend) (validate.Options, error) {
	builder, err := services.NewBuilder(cfg, o.EventDir, backend, resolved.Limits, o.BuildCache)
	if err != nil {
		return validate.Options{}, err
	}
	vo := validate.Options{Game: resolved.Game, Rules: resolved.Rules, Intake: cfg.Intake(), Backend: backend,
		Limits: resolved.Limits, Builder: builder, Require: cfg.Validation.Require}
	note, err := validate.Equip(ctx, &vo)
	if err != nil {
		return validate.Options{}, err
	}
	if note != "" {
		o.Log.Warn(note)
	}
	return vo, nil
}

// newSite makes the event's pages with the builder's languages and the
// arena binary teams download.
func newSite(st *event.Store, cfg event.Config, builder *build.Builder, log *slog.Logger) *web.Server {
	s := web.New(st, cfg, log)
	s.Languages = builder.Langs
	s.Arena = teamArena(log)
	return s
}

// finalRunner makes the runner of the event's final, its games sent to
// workers when they play and watched on s, and lets s start it.
func finalRunner(ctx context.Context, o Options, st *event.Store, cfg event.Config, resolved settings.Resolved, backend sandbox.Backend,
	image string, builder *build.Builder, workers *services.Workers, s *web.Server) (*services.FinalRunner, error) {
	final, err := services.NewFinal(st, cfg, resolved, backend, image, builder, o.ArenaVersion)
	if err != nil {
		return nil, err
	}
	final.Workers, final.Watch = workers, s.Watch
	finals := services.NewFinalRunner(ctx, st, final, o.Log)
	s.StartFinal = finals.Start
	return finals, nil
}

// resumeFinal starts again a final that a stop interrupted before its end.
func resumeFinal(ctx context.Context, st *event.Store, finals *services.FinalRunner, log *slog.Logger) error {
	run, ok, err := st.FinalRun(ctx)
	if err != nil {
		return err
	}
	if !ok || !run.Running() {
		return nil
	}
	log.Info("the final was stopped before its end: it resumes")
	return finals.Start(run)
}

// servePages is the loop that serves srv on ln, over HTTPS when o has a
// certificate; a shutdown ends it without an error.
func servePages(srv *http.Server, ln net.Listener, o Options) func(context.Context) error {
	return func(context.Context) error {
		var err error
		if o.TLSCert != "" {
			err = srv.ServeTLS(ln, o.TLSCert, o.TLSKey)
		} else {
			err = srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		return err
	}
}

// probeLanguages reads the languages' versions in the runtime image, for
// "How to submit": seconds of the image's time, off the way of the start.
// The function it returns waits for it.
func probeLanguages(ctx context.Context, backend sandbox.Backend, limits sandbox.Limits, builder *build.Builder, s *web.Server, log *slog.Logger) (wait func()) {
	var probe sync.WaitGroup
	probe.Add(1)
	go func() {
		defer probe.Done()
		f, err := validate.ProbeImageWith(ctx, backend, limits, validate.ToolchainQueries(builder.Langs))
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("read the languages' versions in the runtime image", "err", err)
			}
			return
		}
		s.SetImage(f)
	}()
	return probe.Wait
}

// coordinate starts the coordinator of the workers o enables (nil: none),
// its tally shown on s; stop stops it.
func coordinate(ctx context.Context, o Options, s *web.Server) (w *services.Workers, stop func(), err error) {
	if !o.Workers.Enabled() {
		return nil, func() {}, nil
	}
	r := o.Workers
	r.Dir = o.EventDir
	co, err := runner.Coordinate(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	w = &services.Workers{Exchange: co.Shared(), Key: runner.WorkerKey(o.EventDir)}
	s.Queue, s.Tally = w.Exchange.Queue, &services.Tally{}
	w.Exchange.Judged = s.Tally.Judged
	return w, co.Close, nil
}

// readAhead reads the event's database into the kernel's cache while the
// server starts, and no longer than it runs: the function it returns stops
// it and waits.
func readAhead(ctx context.Context, st *event.Store, log *slog.Logger) (stop func()) {
	readCtx, stopReading := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		n, err := st.ReadAhead(readCtx)
		if err != nil && readCtx.Err() == nil {
			// Pages are then read from the disk as they are asked for.
			log.Warn("reading the event's database ahead", "err", err)
			return
		}
		log.Debug("read the event's database ahead", "bytes", n, "took", time.Since(start))
	}()
	return func() {
		stopReading()
		<-done
	}
}

// httpServer is the server of s's pages. It has no ReadTimeout: every body
// is read at a pace (paced), which an upload of the largest size keeps, and
// a slow client does not.
func httpServer(s *web.Server, log *slog.Logger) *http.Server {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 0, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if s.Secure {
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return srv
}

// runUntil runs each of loops until ctx ends or one returns; then it
// cancels the rest, shuts the server down and waits for every loop, joining
// their errors.
func runUntil(ctx context.Context, cancel func(), loops []func(context.Context) error, shutdown func() error) error {
	done := make(chan error, len(loops))
	for _, loop := range loops {
		go func() { done <- loop(ctx) }()
	}
	var first error
	waiting := len(loops)
	select {
	case <-ctx.Done():
	case first = <-done:
		waiting--
	}
	cancel()
	err := errors.Join(first, shutdown())
	for range waiting {
		err = errors.Join(err, <-done)
	}
	return err
}

// serveMetrics makes the server's metrics (with the worker queue's, when
// workers play), tells the store and the server of them, and serves them
// on /metrics at o.MetricsAddr until stop.
func serveMetrics(ctx context.Context, o Options, st *event.Store, s *web.Server, workers *services.Workers) (stop func(), err error) {
	var queue *distrib.Queue
	if workers != nil {
		queue = workers.Exchange.Queue
	}
	m := metrics.NewEvent(func(ctx context.Context) (metrics.Gauges, error) {
		g, err := st.Gauges(ctx)
		if err != nil {
			return g, err
		}
		g.Live, g.Spectators = s.Live.Counts()
		if !o.Workers.Enabled() {
			return g, nil
		}
		g.Workers, err = runner.WorkerCounts(o.EventDir)
		return g, err
	}, o.Log)
	if queue != nil {
		m.WatchQueue(func() metrics.QueueStats { return queue.Stats().QueueStats() })
	}
	st.Metrics, s.Metrics = m, m
	return metrics.Serve(ctx, o.MetricsAddr, m.Handler(), o.Log)
}

// TeamBinary is the name of the team's build of arena (go build -tags team,
// make builds it into bin/ beside arena): what the site offers teams.
const TeamBinary = "arena-team"

// teamArena is the arena the site offers teams: the team's build found beside
// the server or in PATH (the commands a report suggests, without the server
// and the cluster's client), else the server's own executable, said in the
// log.
func teamArena(log *slog.Logger) string {
	if p, err := static.Find(TeamBinary); err == nil {
		return p
	}
	self, err := os.Executable()
	if err != nil {
		log.Warn("the site offers no arena binary", "err", err)
		return ""
	}
	log.Warn("the site offers teams the server's own arena, with the server and the cluster's client in it: build "+TeamBinary+" beside it (make)", "arena", self)
	return self
}
