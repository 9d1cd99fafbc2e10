package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/arenabots/arena/harness/transcript"
)

// The kinds of game a tournament's processes count under the server's kind
// label: a coordinator's recorded games, and a worker's played ones.
const (
	KindTournament = "tournament"
	KindWorker     = "worker"
)

// exposed is a process's registry, with the Go runtime's and the process's
// collectors, and the handler that serves it.
type exposed struct {
	reg *prometheus.Registry
}

// newExposed is a registry holding the process's collectors and cs.
func newExposed(cs ...prometheus.Collector) exposed {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	return exposed{reg: reg}
}

// Registry is where the metrics are registered.
func (x exposed) Registry() *prometheus.Registry { return x.reg }

// Handler serves the metrics in Prometheus' text format.
func (x exposed) Handler() http.Handler {
	return promhttp.HandlerFor(x.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// turnBuckets are a turn's wall time and the host's wait in seconds: from
// a millisecond to the longest turn limits.
var turnBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Turn is one turn's times, in milliseconds, as its transcript records.
type Turn struct{ WallMs, HostWaitMs float64 }

// TurnsOf are the times of a transcript's turns; a turn line that does not
// decode is left out (the transcript's reader judges the evidence, not the
// metrics).
func TurnsOf(lines []transcript.Line) []Turn {
	var turns []Turn
	for _, l := range lines {
		if l.Type != transcript.TypeTurn {
			continue
		}
		var t transcript.Turn
		if l.Decode(&t) == nil {
			turns = append(turns, Turn{WallMs: t.WallMs, HostWaitMs: t.HostWaitMs})
		}
	}
	return turns
}

// turnTimes are the turn histograms, by kind: every process that plays or
// records games exposes them.
type turnTimes struct {
	wall, hostWait *prometheus.HistogramVec
}

// newTurnTimes defines arena_turn_seconds and arena_turn_host_wait_seconds.
func newTurnTimes() turnTimes {
	return turnTimes{
		wall: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "arena_turn_seconds", Help: "Each turn's wall time as measured next to the bot, of the games recorded (kind worker: played by this worker), by kind.",
			Buckets: turnBuckets,
		}, []string{"kind"}),
		hostWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "arena_turn_host_wait_seconds", Help: "How long the host kept a bot waiting for a CPU in each turn (the turn's deadline moved past it), of the games recorded (kind worker: played by this worker), by kind.",
			Buckets: turnBuckets,
		}, []string{"kind"}),
	}
}

// collectors are the histograms, to register.
func (t turnTimes) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.wall, t.hostWait}
}

// observe adds a game's turns under kind.
func (t turnTimes) observe(kind string, turns []Turn) {
	w, h := t.wall.WithLabelValues(kind), t.hostWait.WithLabelValues(kind)
	for _, x := range turns {
		w.Observe(x.WallMs / 1000)
		h.Observe(x.HostWaitMs / 1000)
	}
}

// recorded are the games a process records, by kind and outcome, with
// their turns' times: the event server's and a tournament coordinator's.
type recorded struct {
	games *prometheus.CounterVec
	turns turnTimes
}

// newRecorded defines arena_games_recorded_total and the turn histograms.
func newRecorded() recorded {
	return recorded{
		games: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arena_games_recorded_total", Help: "Games recorded since the process started, by kind (the event server's validation, scrimmage, ladder, final; a coordinator's tournament) and outcome (white, black, draw, aborted).",
		}, []string{"kind", "outcome"}),
		turns: newTurnTimes(),
	}
}

// collectors are the counter and the histograms, to register.
func (r recorded) collectors() []prometheus.Collector {
	return append([]prometheus.Collector{r.games}, r.turns.collectors()...)
}

// game counts a game recorded, of kind, won by winner ("white", "black",
// "draw" or "aborted"), with its turns.
func (r recorded) game(kind, winner string, turns []Turn) {
	r.games.WithLabelValues(kind, winner).Inc()
	r.turns.observe(kind, turns)
}

// emitStates sends a gauge of desc for each state of counts.
func emitStates(ch chan<- prometheus.Metric, desc *prometheus.Desc, counts map[string]int) {
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), state)
	}
}
