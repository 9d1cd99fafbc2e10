package docker

import "testing"

// The organizer's page says where the containers run: on this machine only
// when the engine is reached through a socket here, and under which runtime.
func TestTheBackendSaysWhereItPlays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ host, runtime, want string }{
		{"unix:///var/run/docker.sock", "", "on this machine, in Docker containers"},
		{"unix:///var/run/docker.sock", "runsc", "on this machine, in Docker containers under runsc"},
		{"tcp://10.0.0.5:2376", "", "in Docker containers on the engine at tcp://10.0.0.5:2376"},
	} {
		if got := where(c.host, c.runtime); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.host, c.runtime, got, c.want)
		}
	}
}
