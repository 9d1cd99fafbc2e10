package docker_test

import (
	"context"
	"testing"

	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	cli, image := dockertest.Engine(t)
	b := docker.New(cli, image)
	sandboxtest.Run(t, sandboxtest.Backend{
		Isolated:  true,
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
