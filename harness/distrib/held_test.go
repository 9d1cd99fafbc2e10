package distrib_test

import (
	"testing"
	"time"

	"github.com/arenabots/arena/harness/distrib"
)

// A held game is stuck past half its deadline, or, once enough games were
// timed, far past their median and the floor; not before.
func TestTheStuckRule(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	held := func(d, deadline time.Duration) distrib.Holding {
		return distrib.Holding{Game: 1, Worker: "w", Since: at.Add(-d), Deadline: deadline}
	}
	for _, c := range []struct {
		why    string
		h      distrib.Holding
		median time.Duration
		timed  int
		stuck  bool
	}{
		{"just handed out", held(time.Second, time.Hour), 2 * time.Second, 50, false},
		{"past the factor but under the floor", held(distrib.StuckFloor-time.Second, time.Hour), time.Second, 50, false},
		{"past the floor and the factor", held(distrib.StuckFloor+time.Second, time.Hour), time.Second, 50, true},
		{"past the floor, under the factor", held(4*time.Minute, time.Hour), time.Minute, 50, false},
		{"past the factor of a long median", held(6*time.Minute, time.Hour), time.Minute, 50, true},
		{"too few timed: only half the deadline counts", held(10*time.Minute, time.Hour), time.Second, distrib.StuckSamples - 1, false},
		{"past half its deadline", held(31*time.Minute, time.Hour), 0, 0, true},
		{"no deadline told, none timed", held(5*time.Hour, 0), 0, 0, false},
	} {
		if got := c.h.Stuck(at, c.median, c.timed); got != c.stuck {
			t.Errorf("%s: stuck %v, want %v", c.why, got, c.stuck)
		}
	}
	if left, ok := held(10*time.Minute, time.Hour).DeadlineIn(at); !ok || left != 50*time.Minute {
		t.Errorf("deadline in %v (%v), want 50m", left, ok)
	}
	if _, ok := held(time.Minute, 0).DeadlineIn(at); ok {
		t.Error("a game with no deadline told has one")
	}
}
