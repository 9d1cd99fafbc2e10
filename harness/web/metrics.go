package web

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	wdir := tournament.WorkersDir(o.EventDir)
	m := metrics.NewEvent(func(ctx context.Context) (metrics.Gauges, error) {
		g, err := st.Gauges(ctx)
		if err != nil {
			return g, err
		}
		if o.Workers.Enabled() {
			admitted, err := distrib.Admitted(wdir)
			if err != nil {
				return g, err
			}
			out, err := distrib.Suspended(wdir)
			if err != nil {
				return g, err
			}
			g.Workers = map[string]int{"admitted": len(admitted), "suspended": len(out)}
		}
		return g, nil
	}, o.Log)
	if queue != nil {
		m.WatchQueue(func() metrics.QueueStats {
			q := queue.Stats()
			return metrics.QueueStats{Waiting: q.Waiting, Held: q.Held, HandedOut: q.HandedOut, Strikes: q.Strikes, Results: q.Results}
		})
	}
	st.Metrics, s.Metrics = m, m
	ln, err := net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.Log.Warn("the metrics server stopped", "err", err)
		}
	}()
	o.Log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}, nil
}
