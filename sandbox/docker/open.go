package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/arenabots/arena/sandbox"
)

func init() {
	sandbox.Register("docker", Open)
	sandbox.RegisterDoctor("docker", sandbox.Doctor{Preflight: Preflight, Bench: benchSideBySide, Host: true})
}

// sweepEvery is how often an open backend with Sweep sweeps again: a killed
// run's last create request can complete after the sweep at the start, and
// a server runs for days.
var sweepEvery = 15 * time.Second

// Open is the docker backend's sandbox.Opener: it dials the engine, sweeps
// what killed runs left (when cfg.Sweep says so, then every sweepEvery while
// open) and checks the runtime image. Closing sweeps again, then lets the
// engine go.
func Open(ctx context.Context, cfg sandbox.Config) (sandbox.Backend, func() error, error) {
	if cfg.Image == "" {
		cfg.Image = sandbox.DefaultImage
	}
	cl, err := dialOf(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	sweep := func(ctx context.Context) error {
		if !cfg.Sweep {
			return nil
		}
		res, err := Sweep(ctx, cl, false)
		if err != nil {
			return fmt.Errorf("sweep containers left by an earlier run: %w", err)
		}
		if res.Containers+res.Volumes > 0 {
			cfg.Notify(fmt.Sprintf("removed %d containers and %d volumes left by an earlier run that was killed", res.Containers, res.Volumes))
		}
		return nil
	}
	if err := sweep(ctx); err != nil {
		// What is left costs disk and memory, not correctness: the next
		// sweep tries again.
		slog.Warn(err.Error())
	}
	b := New(cl, cfg.Image)
	b.UseRuntime(cfg.Runtime)
	if _, err := b.CheckImage(ctx); err != nil {
		cl.Close()
		return nil, nil, err
	}
	if _, err := b.Runtime(ctx); err != nil {
		cl.Close()
		return nil, nil, err
	}
	stop := func() {}
	if cfg.Sweep {
		stop = sandbox.SweepEvery(ctx, sweepEvery, sweep)
	}
	return b, func() error {
		stop()
		return errors.Join(sweep(context.WithoutCancel(ctx)), cl.Close())
	}, nil
}
