package runner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sys/unix"
)

// gameReserve is what one game may write beyond its data-file blobs: the
// transcript, result.json and the viewer page.
const gameReserve = 32 << 20

// unbudgeted is what a game without an evidence budget is assumed to write.
const unbudgeted = 1 << 30

// SpaceWaiter is implemented by a Progress that shows why no game starts: the
// tournament directory has less free space than the games need.
type SpaceWaiter interface {
	WaitingForSpace(dir string, free, need int64)
}

// FreeSpace is the space an unprivileged writer may still use in dir.
func FreeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// spaceNeeded is the free space below which no game starts: MinFree, plus
// what every game played at once may write at most.
func (o *Options) spaceNeeded() int64 {
	per := int64(unbudgeted)
	if b := o.Config.Evidence.Budget; b > 0 {
		per = b
	}
	return o.MinFree + int64(o.Concurrency)*(per+gameReserve)
}

// waitForSpace returns once the tournament directory has the space a game
// needs, saying that it waits while it does not; it checks again every
// SpacePoll. A stop ends the wait with the context's error.
func (o *Options) waitForSpace(ctx context.Context) error {
	if o.MinFree <= 0 {
		return nil // the check is off
	}
	need := o.spaceNeeded()
	told := false
	for {
		free, err := FreeSpace(o.Dir)
		if err != nil {
			return err
		}
		if free >= need {
			if told {
				slog.Info("tournament: free space is back, games start again", "dir", o.Dir, "free", free)
			}
			return nil
		}
		if !told {
			slog.Warn("tournament: not enough free space to start a game; waiting", "dir", o.Dir, "free", free, "need", need)
			if w, ok := o.Progress.(SpaceWaiter); ok {
				w.WaitingForSpace(o.Dir, free, need)
			}
			told = true
		}
		poll := o.SpacePoll
		if poll <= 0 {
			poll = 5 * time.Second
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(poll):
		}
	}
}
