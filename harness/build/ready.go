package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/harness/submission"
)

// NoCache is the Cache setting that turns the build cache off.
const NoCache = "none"

// CacheDir is where built bots are kept: dir as given, "" for the default
// (arena/builds in the user's cache directory), or NoCache for none ("").
func CacheDir(dir string) (string, error) {
	switch dir {
	case NoCache:
		return "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("the build cache: %w (name a directory for it)", err)
		}
		return filepath.Join(base, "arena", "builds"), nil
	}
	return dir, nil
}

// ReadyAll readies every bot, in place, before the first game: each bot
// handed in as source is built once (or taken from the cache), and one that
// does not build keeps its BuildError (it loses its games). done, when set,
// is told of each bot that was built, as it is returned. The error is the
// sandbox's or the cache's.
func (b *Builder) ReadyAll(ctx context.Context, bots []*submission.Bot, done func(*submission.Bot)) error {
	for i, bot := range bots {
		if !Needs(bot) {
			continue
		}
		built, err := b.Ready(ctx, bot)
		if err != nil {
			return err
		}
		bots[i] = built
		if done != nil {
			done(built)
		}
	}
	return nil
}
