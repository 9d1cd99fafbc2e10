package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

type imaged struct {
	sandbox.Backend
	id string
}

func (b imaged) Describe(context.Context) (map[string]string, error) {
	return map[string]string{"backend": "docker", "image": "arena-runtime:latest", "imageId": b.id}, nil
}

// A disputed turn runs where the match ran unless told otherwise, and a
// runtime image that changed since is said.
func TestRerunSandboxAndImageDrift(t *testing.T) {
	t.Parallel()
	h := transcript.Header{Sandbox: map[string]string{"backend": "docker", "image": "arena-runtime:v1", "imageId": "sha256:aaa", "runtime": "runsc"}}
	if c := Sandbox(h, sandbox.Config{}); c.Kind != "docker" || c.Image != "arena-runtime:v1" || c.Runtime != "runsc" {
		t.Fatalf("recorded: %+v", c)
	}
	if c := Sandbox(h, sandbox.Config{Image: "other", Runtime: "runc"}); c.Kind != "docker" || c.Image != "other" || c.Runtime != "runc" {
		t.Fatalf("given: %+v", c)
	}
	// The recorded runtime is the recorded backend's: another backend
	// runs without it.
	if c := Sandbox(h, sandbox.Config{Kind: "local"}); c.Kind != "local" || c.Runtime != "" {
		t.Fatalf("local: %+v", c)
	}
	for _, c := range []struct {
		b    sandbox.Backend
		h    transcript.Header
		want string
	}{
		{imaged{id: "sha256:aaa"}, h, ""},
		{imaged{id: "sha256:bbb"}, h, "is sha256:bbb now; the match ran on sha256:aaa"},
		{local.New(), h, "the local sandbox runs no runtime image; the match ran on sha256:aaa"},
		{imaged{id: "sha256:bbb"}, transcript.Header{}, ""},
	} {
		got, err := ImageDrift(context.Background(), c.b, c.h)
		if err != nil || (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("got %q (%v), want %q", got, err, c.want)
		}
	}
}
