package sandboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// admitted holds the backend to its admission (sandbox.Backend.Admit): a
// game's two boxes open under the context it returns and run a turn each;
// released (twice: the second does nothing), the room is given back, so
// that the next game of the same shape is admitted at once (a wait for
// room that ends with its context: the room's own test).
func admitted(t *testing.T, b Backend, prog sandbox.Program) {
	lim := Limits()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for game := 1; game <= 2; game++ {
		actx, release, err := b.Raw.Admit(ctx, 2, lim)
		if err != nil {
			t.Fatalf("game %d: admit its two boxes: %v", game, err)
		}
		spec := sandbox.Spec{Program: prog, Limits: lim}
		if b.Labels != nil {
			spec.Labels = b.Labels(t)
		}
		for side := range 2 {
			bx, err := b.Raw.Open(actx, spec)
			if err != nil {
				release()
				t.Fatalf("game %d: open box %d under its admission: %v", game, side+1, err)
			}
			if r := turn(t, bx, "ok", 0); r.ExitCode != 0 || answer(r) != "ok" {
				t.Errorf("game %d, box %d: a turn under its admission: exit %d, answer %q", game, side+1, r.ExitCode, answer(r))
			}
			if err := bx.Close(ctx); err != nil {
				t.Errorf("game %d, box %d: close: %v", game, side+1, err)
			}
		}
		release()
		release()
		if b.Leftovers != nil {
			b.Leftovers(t, spec.Labels)
		}
	}
}
