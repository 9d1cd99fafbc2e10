package sandboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// cancelledOpens holds the backend to its promise that an Open which fails
// leaves nothing behind, when the failure is its context ending at any
// moment of the open: before the engine or the cluster is asked, while it
// makes the box (it may finish making it after the caller gave up), while
// the box is filled and started. A server shutting down, a match abandoned
// and a tournament's deadline all end an Open this way.
func cancelledOpens(t *testing.T, b Backend, prog sandbox.Program) {
	lim := Limits()
	labels := b.Labels(t)
	for _, after := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond,
		30 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), after)
		bx, err := b.Raw.Open(ctx, sandbox.Spec{Program: prog, Limits: lim, Labels: labels})
		cancel()
		if err == nil {
			// It was open before the context ended: it is closed as any box is.
			if err := bx.Close(context.Background()); err != nil {
				t.Errorf("an open that finished within %v: close: %v", after, err)
			}
		}
	}
	b.Leftovers(t, labels)
}
