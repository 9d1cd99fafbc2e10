package event

import (
	"strings"
	"testing"
)

func TestCapacityFollowsTheCoresAndTheBotsCPU(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cores int
		cpus  float64
		want  Capacity
	}{
		{2, 1, Capacity{1, 1}},
		{1, 1, Capacity{1, 1}}, // the least that serves: oversubscribed
		{4, 1, Capacity{2, 2}},
		{8, 1, Capacity{4, 4}},
		{8, 2, Capacity{2, 2}},
		{16, 0.5, Capacity{16, 16}},
		{3, 1, Capacity{1, 2}},
		{0, 1, Capacity{1, 1}},
	} {
		if got := DefaultCapacity(c.cores, c.cpus); got != c.want {
			t.Errorf("%d cores, %g CPU a bot: %+v, want %+v", c.cores, c.cpus, got, c.want)
		}
	}
	if w := DefaultCapacity(2, 1).Oversubscribed(2, 1); w != "" {
		t.Errorf("the default oversubscribes: %s", w)
	}
	w := (Capacity{Validators: 2, Games: 2}).Oversubscribed(2, 1)
	if !strings.Contains(w, "4 bots of 1 CPU each (4 cores) on 2 cores") || !strings.Contains(w, "2 validations and 2 games at once") || !strings.Contains(w, "1 validation and 1 game fit") {
		t.Errorf("warning: %q", w)
	}
}
