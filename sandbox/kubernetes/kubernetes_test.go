package kubernetes_test

import (
	"context"
	"testing"

	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

// The whole conformance suite on a real cluster: every hostile fixture,
// sessions, the pool's reset and isolation cases.
func TestConformance(t *testing.T) {
	b := clustertest.Backend(t)
	cs := clustertest.Client(t)
	sandboxtest.Run(t, sandboxtest.Backend{
		Isolated:  true,
		Fresh:     true,
		Raw:       b,
		Labels:    func(t *testing.T) map[string]string { return dockertest.Labels(t) },
		Leftovers: func(t *testing.T, labels map[string]string) { clustertest.NoLeftovers(t, cs, labels) },
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
				clustertest.NoLeftovers(t, cs, labels)
			})
			return bx
		},
	})
}
