package web

import (
	"context"
	"net/http"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/tournament"
)

// measured counts route's requests and times them in s's metrics.
func measured(rt Route, h http.Handler, m *metrics.Event) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		m.Request(rt.Pattern, code, time.Since(start), rt.Direct && sw.streamed)
	})
}

// statusWriter keeps the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	code     int
	streamed bool // flushed: an event stream, whose time is its life
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush lets an event stream through.
func (w *statusWriter) Flush() {
	w.streamed = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap is what http.ResponseController reaches through.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveMetrics makes the server's metrics (with the worker queue's, when
// workers play), tells the store and the server of them, and serves them
// on /metrics at o.MetricsAddr until stop.
func serveMetrics(ctx context.Context, o Options, st *event.Store, s *Server, queue *distrib.Queue) (stop func(), err error) {
	m := metrics.NewEvent(func(ctx context.Context) (metrics.Gauges, error) {
		g, err := st.Gauges(ctx)
		if err != nil {
			return g, err
		}
		g.Live, g.Spectators = s.Live.Counts()
		if !o.Workers.Enabled() {
			return g, nil
		}
		g.Workers, err = tournament.WorkerCounts(o.EventDir)
		return g, err
	}, o.Log)
	if queue != nil {
		m.WatchQueue(func() metrics.QueueStats { return queue.Stats().QueueStats() })
	}
	st.Metrics, s.Metrics = m, m
	return metrics.Serve(ctx, o.MetricsAddr, m.Handler(), o.Log)
}
