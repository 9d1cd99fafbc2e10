package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// What became of a game a worker took (Worker.Released).
const (
	HandedIn   = "handed_in"   // its result reached the coordinator
	GivenUp    = "given_up"    // the coordinator could not be reached in time: its hold runs out
	HandedBack = "handed_back" // the worker stopped while playing it
)

// Worker are a worker machine's metrics (arena worker): the games it
// plays and their turns under kind worker, its host faults, what became of
// its results, and its machine's measured figures.
type Worker struct {
	exposed

	turns    turnTimes
	played   *prometheus.CounterVec
	faults   prometheus.Counter
	released *prometheus.CounterVec
	refused  prometheus.Counter
	playing  prometheus.Gauge
	slots    prometheus.Gauge
	bench    *prometheus.GaugeVec
	// last is when the worker last took a game (or started), in Unix
	// nanoseconds.
	last atomic.Int64
}

// NewWorker makes the metrics of a worker that plays slots games at once.
func NewWorker(slots int) *Worker {
	w := &Worker{turns: newTurnTimes()}
	w.last.Store(time.Now().UnixNano())
	w.played = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_worker_games_played_total", Help: "Games this worker played to their end since it started, by result (white, black, draw, aborted: by this host or sandbox), before the coordinator judged them.",
	}, []string{"result"})
	w.faults = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "arena_worker_host_faults_total", Help: "Games this machine could not play: aborted by its host or sandbox, or not started (a bot not fetched, a match that failed). The coordinator plays each again.",
	})
	w.released = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arena_worker_results_sent_total", Help: "What became of the games this worker took, by outcome: handed_in (the result reached the coordinator), given_up (it could not be reached in time), handed_back (the worker stopped).",
	}, []string{"outcome"})
	w.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "arena_worker_results_refused_total", Help: "Results the coordinator refused, as it told this worker when it suspended it (the worker then stops).",
	})
	w.playing = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "arena_worker_games_playing", Help: "Games this worker holds now: playing them, or handing in their results.",
	})
	w.slots = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "arena_worker_slots", Help: "Games this worker plays at once (--concurrency).",
	})
	w.bench = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "arena_worker_bench_seconds", Help: "This machine's measured turn times before it joined (doctor --bench's figures), by figure and quantile (0.5, 0.99); absent when it was not measured.",
	}, []string{"figure", "quantile"})
	since := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "arena_worker_seconds_since_last_game", Help: "Seconds since this worker last took a game (since it started, before its first).",
	}, func() float64 { return time.Since(time.Unix(0, w.last.Load())).Seconds() })
	w.slots.Set(float64(slots))
	w.exposed = newExposed(append(w.turns.collectors(), w.played, w.faults, w.released, w.refused, w.playing, w.slots, w.bench, since)...)
	return w
}

// Measured sets a figure of the machine's measurement, in milliseconds.
func (w *Worker) Measured(figure string, p50Ms, p99Ms float64) {
	if w == nil {
		return
	}
	w.bench.WithLabelValues(figure, "0.5").Set(p50Ms / 1000)
	w.bench.WithLabelValues(figure, "0.99").Set(p99Ms / 1000)
}

// Took counts a game taken from the queue: held until Released.
func (w *Worker) Took() {
	if w == nil {
		return
	}
	w.last.Store(time.Now().UnixNano())
	w.playing.Inc()
}

// Released counts a game taken no longer held, with what became of it
// (HandedIn, GivenUp, HandedBack).
func (w *Worker) Released(outcome string) {
	if w == nil {
		return
	}
	w.playing.Dec()
	w.released.WithLabelValues(outcome).Inc()
}

// Played counts a game played to its end, with its result ("white",
// "black", "draw", or "aborted" by this host) and its transcript's turns.
func (w *Worker) Played(result string, turns []Turn) {
	if w == nil {
		return
	}
	w.played.WithLabelValues(result).Inc()
	w.turns.observe(KindWorker, turns)
}

// HostFault counts a game this machine could not play.
func (w *Worker) HostFault() {
	if w != nil {
		w.faults.Inc()
	}
}

// Refused counts a result the coordinator refused.
func (w *Worker) Refused() {
	if w != nil {
		w.refused.Inc()
	}
}
