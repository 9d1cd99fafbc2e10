package runner

import (
	"strings"
	"testing"
)

// A worker plays only as the coordinator would: the same arena, the same
// sandbox, the same runtime image.
func TestAWorkerMustShareTheCoordinatorsFacts(t *testing.T) {
	t.Parallel()
	coord := Facts{Game: "codeclash", Sandbox: "docker", ImageID: "sha256:aaa", Runtime: "runc", ArenaVersion: "1.2.0"}
	if err := coord.Admit(coord); err != nil {
		t.Fatalf("the same facts refused: %v", err)
	}
	for _, c := range []struct {
		mine Facts
		want string
	}{
		{Facts{Sandbox: "docker", ImageID: "sha256:bbb", Runtime: "runc", ArenaVersion: "1.2.0"}, "runtime image is sha256:bbb, the coordinator's sha256:aaa"},
		{Facts{Sandbox: "docker", ImageID: "sha256:aaa", Runtime: "runc", ArenaVersion: "1.1.9"}, "runs arena 1.1.9, the coordinator 1.2.0"},
		{Facts{Sandbox: "local", ArenaVersion: "1.2.0"}, "sandbox is local, the tournament's docker"},
		{Facts{Sandbox: "docker", ImageID: "sha256:aaa", Runtime: "runsc", ArenaVersion: "1.2.0"}, "runs bots under runtime runsc, the coordinator under runc (start the worker under runtime runc)"},
	} {
		err := coord.Admit(c.mine)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.mine, err, c.want)
		}
	}
}
