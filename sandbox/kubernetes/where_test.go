package kubernetes

import "testing"

// The organizer's page says where the Pods go: the namespace, and the
// RuntimeClass when one is set.
func TestTheBackendSaysWhereItPlays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		place Place
		want  string
	}{
		{Place{Namespace: "cup"}, "in Pods on the cluster (namespace cup)"},
		{Place{Namespace: "arena", RuntimeClass: "gvisor"}, "in Pods on the cluster (namespace arena, RuntimeClass gvisor)"},
	} {
		if got := (&Backend{place: c.place}).Where(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.place, got, c.want)
		}
	}
}
