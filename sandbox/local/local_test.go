package local_test

import (
	"context"
	"testing"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	b := &local.Backend{Dir: t.TempDir()}
	if got, want := b.Capabilities(), (sandbox.Capabilities{Reusable: true}); got != want {
		t.Fatalf("the backend declares %+v, want %+v", got, want)
	}
	sandboxtest.Run(t, sandboxtest.Backend{
		Raw: b,
		Open: func(t *testing.T, p sandbox.Program, l sandbox.Limits) sandbox.Box {
			bx, err := b.Open(context.Background(), sandbox.Spec{Program: p, Limits: l})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() {
				if err := bx.Close(context.Background()); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			return bx
		},
	})
}
