package event

import "testing"

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
