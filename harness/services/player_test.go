package services

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// TestTheLadderTakesItsShare: after a pair, the ladder waits so that its
// pairs take share of the time.
func TestTheLadderTakesItsShare(t *testing.T) {
	for _, c := range []struct {
		share float64
		want  time.Duration
	}{{1, 0}, {0, 0}, {0.5, time.Minute}, {0.25, 3 * time.Minute}, {0.75, 20 * time.Second}} {
		if got := ladderPause(time.Minute, c.share); got != c.want {
			t.Errorf("share %g: pause %v after a minute's pair, want %v", c.share, got, c.want)
		}
		if got := ladderPause(time.Minute, c.share); c.share > 0 && c.share <= 1 {
			if took := float64(time.Minute) / float64(time.Minute+got); math.Abs(took-c.share) > 1e-9 {
				t.Errorf("share %g: the ladder took %g of the time", c.share, took)
			}
		}
	}
}

// A pair's rating or a scrimmage's end that fails because the player was
// stopped is no error (undone, it is played again at the next start); one
// that fails otherwise stops the player with its reason.
func TestAStopWhileRecordingIsNoError(t *testing.T) {
	t.Parallel()
	live, stopped := context.Background(), canceled()
	failed := errors.New("disk full")
	if err := recorded(stopped, context.Canceled, "rate ladder pair 47"); err != nil {
		t.Errorf("stopped while rating: %v", err)
	}
	if err := recorded(live, failed, "rate ladder pair 47"); err == nil || err.Error() != "rate ladder pair 47: disk full" {
		t.Errorf("a failure of its own: %v", err)
	}
	if err := recorded(live, nil, "x"); err != nil {
		t.Errorf("nothing failed: %v", err)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
