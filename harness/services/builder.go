package services

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/sandbox"
)

// NewBuilder builds the event's source submissions on backend under lim, with
// the event's languages (dir is the event's directory) and build timeout,
// keeping builds in cache ("" for none).
func NewBuilder(c event.Config, dir string, backend sandbox.Backend, lim sandbox.Limits, cache string) (*build.Builder, error) {
	table := langs.Default()
	if f := c.LanguagesFile(dir); f != "" {
		var err error
		if table, err = langs.Load(f); err != nil {
			return nil, fmt.Errorf("%s: languages: %w", filepath.Join(dir, event.ConfigFile), err)
		}
	}
	return &build.Builder{Backend: backend, Langs: table, Limits: lim, Timeout: time.Duration(c.Limits.BuildTimeout), Cache: cache}, nil
}
