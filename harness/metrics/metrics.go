// Package metrics holds arena's Prometheus metrics, each named, explained
// and bucketed once, for the event server, a tournament's coordinator and
// a worker to expose on /metrics (docs/operations.md says what each means,
// which process exposes it and what to alert on).
//
// It must never label a metric by anything a client chooses (a team's
// name, a token, a path it made up): its labels are routes, kinds, states
// and outcomes, sets the code bounds; and observing must never block a
// request or a game.
package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Event are an event server's metrics.
type Event struct {
	exposed
	recorded

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	dbWrite  prometheus.Histogram
}

// Gauges are what the server reads of its state at each scrape: the
// submissions by their validation's state, the scrimmages waiting, the
// final's games by state, the database's size.
type Gauges struct {
	Submissions map[string]int // by state: queued, running, passed, failed...
	Scrimmages  map[string]int // by state: queued, playing
	Final       map[string]int // the final's games: total, done, unplayed, pending
	DBBytes     int64
	Workers     map[string]int // by state: admitted, suspended
	// Live are the games this server plays now, by kind, and Spectators
	// the streams following them (the live pages, the projectors').
	Live       map[string]int
	Spectators int
}

// NewEvent makes an event server's metrics; gauges is read at each scrape
// (an error is logged, and the scrape goes on without them).
func NewEvent(gauges func(context.Context) (Gauges, error), log *slog.Logger) *Event {
	e := &Event{recorded: newRecorded()}
	e.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_http_requests_total", Help: "HTTP requests answered, by route (its pattern) and status code.",
	}, []string{"route", "code"})
	e.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "arena_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route; event streams are left out.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route"})
	e.dbWrite = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "arena_db_write_seconds", Help: "Time of a write transaction of the event's database (a game recorded, an organizer's action).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5},
	})
	e.exposed = newExposed(append(e.recorded.collectors(), e.requests, e.latency, e.dbWrite,
		&gaugeCollector{read: gauges, log: log})...)
	return e
}

// Request counts a request answered on route with code, taking took.
func (e *Event) Request(route string, code int, took time.Duration, stream bool) {
	if e == nil {
		return
	}
	e.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	if !stream {
		e.latency.WithLabelValues(route).Observe(took.Seconds())
	}
}

// Game counts a game recorded, of kind, won by winner ("white", "black",
// "draw" or "aborted"), with its turns.
func (e *Event) Game(kind, winner string, turns []Turn) {
	if e != nil {
		e.game(kind, winner, turns)
	}
}

// Write observes a write transaction's time.
func (e *Event) Write(took time.Duration) {
	if e != nil {
		e.dbWrite.Observe(took.Seconds())
	}
}

// gaugeCollector reads the server's state at each scrape.
type gaugeCollector struct {
	read func(context.Context) (Gauges, error)
	log  *slog.Logger
}

var (
	submissionsDesc = prometheus.NewDesc("arena_submissions", "Submissions by their validation's state (queued and running: the validation queue).", []string{"state"}, nil)
	scrimmagesDesc  = prometheus.NewDesc("arena_scrimmages", "Scrimmages by state (queued: waiting to be played).", []string{"state"}, nil)
	finalDesc       = prometheus.NewDesc("arena_final_games", "The final's games: total, done, unplayed (aborted on every try), pending.", []string{"state"}, nil)
	dbDesc          = prometheus.NewDesc("arena_db_bytes", "The event database's size on disk, its write-ahead log included.", nil, nil)
	workersDesc     = prometheus.NewDesc("arena_workers", "Enrolled worker machines by state (admitted, suspended).", []string{"state"}, nil)
	liveDesc        = prometheus.NewDesc("arena_live_games", "Games this server plays now, followed live, by kind (final, ladder, scrimmage).", []string{"kind"}, nil)
	spectatorsDesc  = prometheus.NewDesc("arena_live_spectators", "Streams following live games now: the games' pages and the projectors.", nil, nil)
)

func (c *gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{submissionsDesc, scrimmagesDesc, finalDesc, dbDesc, workersDesc, liveDesc, spectatorsDesc} {
		ch <- d
	}
}

func (c *gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := c.read(ctx)
	if err != nil {
		if c.log != nil {
			c.log.Warn("metrics: the server's state could not be read", "err", err)
		}
		return
	}
	emitStates(ch, submissionsDesc, g.Submissions)
	emitStates(ch, scrimmagesDesc, g.Scrimmages)
	emitStates(ch, finalDesc, g.Final)
	emitStates(ch, workersDesc, g.Workers)
	ch <- prometheus.MustNewConstMetric(dbDesc, prometheus.GaugeValue, float64(g.DBBytes))
	emitStates(ch, liveDesc, g.Live)
	ch <- prometheus.MustNewConstMetric(spectatorsDesc, prometheus.GaugeValue, float64(g.Spectators))
}

// QueueStats are a worker queue's figures (distrib.Queue's Stats).
type QueueStats struct {
	Waiting, Held int
	Stuck         int // of those held, the games that look stuck now (stuck.go)
	HandedOut     uint64
	Strikes       map[string]int // by worker: enrolled names, the organizer's
	Results       map[string]int // by what they were: taken, stale, forged, lost
}

var (
	queueGamesDesc   = prometheus.NewDesc("arena_worker_queue_games", "Games of the worker queue: waiting for a worker, held by one now.", []string{"state"}, nil)
	handedOutDesc    = prometheus.NewDesc("arena_worker_handouts_total", "Games handed to workers since the server started.", nil, nil)
	strikesDesc      = prometheus.NewDesc("arena_worker_strikes_total", "What each worker sent that the protocol never sends, since the server started (ten within ten minutes suspend it).", []string{"worker"}, nil)
	queueResultsDesc = prometheus.NewDesc("arena_worker_results_total", "Results workers handed in, by what they were: taken (judged by their tournament), stale, forged, lost (an archive that did not hold); refused counts those taken that their tournament refused for what they claimed (the worker suspended).", []string{"verdict"}, nil)
)

// WatchQueue adds a worker queue's figures, read at each scrape.
func (e *Event) WatchQueue(read func() QueueStats) {
	e.reg.MustRegister(queueCollector(read))
}

// queueCollector reads a worker queue's figures at each scrape: the event
// server's and a tournament coordinator's.

type queueCollector func() QueueStats

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueGamesDesc, handedOutDesc, strikesDesc, queueResultsDesc, stuckDesc} {
		ch <- d
	}
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	s := c()
	ch <- prometheus.MustNewConstMetric(queueGamesDesc, prometheus.GaugeValue, float64(s.Waiting), "waiting")
	ch <- prometheus.MustNewConstMetric(queueGamesDesc, prometheus.GaugeValue, float64(s.Held), "held")
	ch <- prometheus.MustNewConstMetric(handedOutDesc, prometheus.CounterValue, float64(s.HandedOut))
	ch <- stuckMetric(s)
	for w, n := range s.Strikes {
		ch <- prometheus.MustNewConstMetric(strikesDesc, prometheus.CounterValue, float64(n), w)
	}
	for v, n := range s.Results {
		ch <- prometheus.MustNewConstMetric(queueResultsDesc, prometheus.CounterValue, float64(n), v)
	}
}
