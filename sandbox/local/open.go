package local

import (
	"context"

	"github.com/arenabots/arena/sandbox"
)

func init() {
	sandbox.Register("local", func(_ context.Context, cfg sandbox.Config) (sandbox.Backend, func() error, error) {
		cfg.Notify("WARNING: " + Warning)
		return New(), func() error { return nil }, nil
	})
}
