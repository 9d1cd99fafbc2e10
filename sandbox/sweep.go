package sandbox

import (
	"context"
	"log/slog"
	"time"
)

// SweepEvery runs sweep every interval until the returned stop is called
// (stop waits for a sweep under way), warning of each that fails: what a
// killed run's last create request left after a backend's first sweep, on
// a server that runs for days.
func SweepEvery(ctx context.Context, interval time.Duration, sweep func(context.Context) error) (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if err := sweep(context.WithoutCancel(ctx)); err != nil {
					slog.Warn(err.Error())
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-stopped
	}
}
