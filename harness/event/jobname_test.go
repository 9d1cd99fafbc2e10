package event

import (
	"testing"
	"time"
)

// JobName is what the pages call a game sent to workers.
func TestJobNames(t *testing.T) {
	t.Parallel()
	for job, want := range map[int]string{
		1<<40 + 4*5 + 1:  "scrimmage 5, game 1",
		2<<40 + 4*12 + 2: "ladder pair 12, game 2",
		3<<40 + 34:       "the final, game 34",
		7:                "game 7",
	} {
		if got := JobName(job); got != want {
			t.Errorf("job %d: %q, want %q", job, got, want)
		}
	}
}

// About says a duration as an organizer plans with it.
func TestAbout(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "unknown", 40 * time.Second: "about 40 s", 5 * time.Second: "about 5.0 s", 90 * time.Second: "about 90 s",
		12 * time.Minute: "about 12 min", 43 * time.Hour: "about 43 h", 150 * time.Minute: "about 2.5 h",
		// Not "about 0.0 s": a spread of games of a few ms.
		30 * time.Millisecond: "about 30 ms", 400 * time.Microsecond: "about 1 ms", 200 * time.Millisecond: "about 0.2 s",
	} {
		if got := About(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
	if g := RoundRobinGames(300, 2); g != 89700 {
		t.Errorf("300 teams, 2 games a pair: %d games", g)
	}
}
