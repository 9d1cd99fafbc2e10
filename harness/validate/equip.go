package validate

import (
	"context"
	"fmt"
)

// Equip readies o for the behaviour checks on o.Backend: it reads what the
// runtime image offers and takes the built-in random bot as the full matches'
// opponent. A game without a built-in random bot has its full matches
// skipped; note says so. Every caller that validates with a sandbox (the
// command line, the event server) equips its options here, so they check the
// same things.
func Equip(ctx context.Context, o *Options) (note string, err error) {
	if o.Backend == nil {
		return "", nil
	}
	if o.Facts, err = ProbeImage(ctx, o.Backend, o.Limits); err != nil {
		return "", fmt.Errorf("read the runtime image: %w", err)
	}
	if o.Opponent, err = Opponent(o.Game); err != nil {
		return fmt.Sprintf("%v; the full matches are skipped", err), nil
	}
	return "", nil
}
