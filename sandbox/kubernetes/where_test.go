package kubernetes

import "testing"

// The organizer's page says where the Pods go: the namespace, and the
// RuntimeClass when one is set, and the warm Pods kept.
func TestTheBackendSaysWhereItPlays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		place Place
		warm  int
		want  string
	}{
		{Place{Namespace: "cup"}, 0, "in Pods on the cluster (namespace cup)"},
		{Place{Namespace: "arena", RuntimeClass: "gvisor"}, 2, "in Pods on the cluster (namespace arena, RuntimeClass gvisor, 2 warm Pods of each shape in the room games leave)"},
	} {
		if got := (&Backend{place: c.place, Warm: c.warm}).Where(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.place, got, c.want)
		}
	}
}
