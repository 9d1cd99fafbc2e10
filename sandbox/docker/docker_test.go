package docker_test

import (
	"context"
	"testing"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/enginetest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	cli, image := dockertest.Engine(t)
	conformance(t, cli, docker.New(cli, image), false)
}

// TestConformanceUnderGVisor runs the whole suite again with every box under
// gVisor's runsc, on an engine of its own that has it: the same verdicts,
// the same isolation.
func TestConformanceUnderGVisor(t *testing.T) {
	t.Parallel()
	_, image := dockertest.Engine(t)
	e := enginetest.StartGVisor(t)
	e.Load(t, image)
	cli, err := docker.Dial(context.Background(), docker.Conn{Host: e.Host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	b := docker.New(cli, image)
	b.UseRuntime(enginetest.GVisor)
	rt, err := b.Runtime(context.Background())
	if err != nil || !rt.GVisor {
		t.Fatalf("runtime %+v, %v", rt, err)
	}
	conformance(t, cli, b, true)
}

// conformance runs the suite on b; gvisor says its boxes run under gVisor.
func conformance(t *testing.T, cli *client.Client, b *docker.Backend, gvisor bool) {
	sandboxtest.Run(t, sandboxtest.Backend{
		Fresh:          gvisor,
		OOMTakesTheBox: gvisor,
		Isolated:       true,
		Raw:            b,
		Labels:         func(t *testing.T) map[string]string { return dockertest.Labels(t) },
		Leftovers:      func(t *testing.T, labels map[string]string) { dockertest.NoLeftovers(t, cli, labels) },
		Open: func(t *testing.T, p sandbox.Program, l sandbox.Limits) sandbox.Box {
			labels := dockertest.Labels(t)
			bx, err := b.Open(context.Background(), sandbox.Spec{Program: p, Limits: l, Labels: labels})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() {
				if err := bx.Close(context.Background()); err != nil {
					t.Errorf("close: %v", err)
				}
				dockertest.NoLeftovers(t, cli, labels)
			})
			return bx
		},
	})
}
