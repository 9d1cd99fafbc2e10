package web

import (
	"net/http"
	"time"

	"github.com/arenabots/arena/harness/metrics"
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
