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
	b := docker.New(cli, image)
	if got, least := b.Capabilities(), gvisorCapabilities; got != least {
		t.Fatalf("before the engine was asked about its runtime the backend declares %+v, want the least it may have, %+v", got, least)
	}
	rt, err := b.Runtime(context.Background())
	if err != nil || rt.GVisor {
		t.Fatalf("runtime %+v, %v", rt, err)
	}
	conformance(t, cli, b, false)
}

// What the backend declares under each runtime: a box under runc is reset
// and reused, and survives its bot's out-of-memory kill; one under gVisor
// serves one game, and the kill may take it.
var (
	runcCapabilities   = sandbox.Capabilities{Isolated: true, Reusable: true}
	gvisorCapabilities = sandbox.Capabilities{Isolated: true, OOMTakesTheBox: true}
)

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

// conformance checks what b declares, and runs the suite on b, which holds
// it to that; gvisor says its boxes run under gVisor.
func conformance(t *testing.T, cli *client.Client, b *docker.Backend, gvisor bool) {
	want := runcCapabilities
	if gvisor {
		want = gvisorCapabilities
	}
	if got := b.Capabilities(); got != want {
		t.Fatalf("the backend declares %+v, want %+v", got, want)
	}
	sandboxtest.Run(t, sandboxtest.Backend{
		Raw:       b,
		Labels:    func(t *testing.T) map[string]string { return dockertest.Labels(t) },
		Leftovers: func(t *testing.T, labels map[string]string) { dockertest.NoLeftovers(t, cli, labels) },
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
