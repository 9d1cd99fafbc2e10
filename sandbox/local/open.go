package local

import (
	"context"
	"fmt"

	"github.com/arenabots/arena/sandbox"
)

func init() {
	sandbox.Register("local", func(_ context.Context, cfg sandbox.Config) (sandbox.Backend, func() error, error) {
		if cfg.Backend != nil {
			return nil, nil, fmt.Errorf("the local sandbox takes no backend settings, got %T (another kind's?)", cfg.Backend)
		}
		if cfg.Runtime != "" {
			return nil, nil, fmt.Errorf("the local sandbox runs plain processes and has no runtime: runtime %s needs the docker sandbox", cfg.Runtime)
		}
		cfg.Notify("WARNING: " + Warning)
		return New(), func() error { return nil }, nil
	})
}
