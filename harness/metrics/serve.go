package metrics

import (
	"context"
	"errors"
	"github.com/arenabots/arena/internal/setting"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve serves h on /metrics at addr (HOST:PORT; port 0 picks a free one)
// until stop, logging where ("serving metrics", as the event server does).
// An address with no host (":9100") is the loopback's alone: metrics name
// workers, games and teams, and reach another machine only where a host
// is named. The address is taken at once: an error is one of
// --metrics-listen.
func Serve(ctx context.Context, addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if log == nil {
		log = slog.Default()
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, setting.Errorf(setting.MetricsListen, "{setting}: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("the metrics server stopped", "err", err)
		}
	}()
	log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil {
			log.Warn("the metrics server did not shut down cleanly", "err", err)
		}
	}, nil
}
