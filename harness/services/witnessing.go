package services

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/witness"
)

// Witnessing asks the event's witnesses to cosign the final log's
// checkpoint as it grows (C2SP tlog-witness), and keeps their
// cosignatures with it: the log's checkpoint is then served and published
// cosigned.
type Witnessing struct {
	Store     *event.Store
	Witnesses []event.Witness
	Client    *http.Client
	Log       *slog.Logger
	// Every is how often the log's checkpoint is looked at (0: 5 s).
	Every time.Duration
}

// Run asks every Every until ctx ends; a witness that cannot be reached
// is warned about and asked again at the next round.
func (w *Witnessing) Run(ctx context.Context) error {
	every := w.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, wit := range w.Witnesses {
			if err := w.Ask(ctx, wit); err != nil && ctx.Err() == nil {
				w.Log.Warn("a witness did not cosign the final's log", "witness", wit.URL, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Ask asks wit to cosign the log's checkpoint that may be shown now, when
// it has not yet: from the size it cosigned last, or, when it knows
// another (a witness's state lost here, or a checkpoint it was asked for
// before its answer was kept), from the size it says.
func (w *Witnessing) Ask(ctx context.Context, wit event.Witness) error {
	for range 2 {
		signed, size, old, proof, err := w.Store.WitnessRequest(ctx, wit.URL)
		if err != nil || signed == nil || old >= size {
			// Up to date; or it cosigned a larger tree than may be shown
			// now (a freeze set from a time already past): asked again
			// once the reveal shows more.
			return err
		}
		cosig, err := witness.Submit(ctx, w.Client, wit.URL, wit.Key, old, proof, signed)
		var conflict *witness.ConflictError
		if errors.As(err, &conflict) {
			if conflict.Known > size {
				return errors.New("the witness cosigned a larger tree of this log than the server holds: the log was cut short")
			}
			if err := w.Store.Witnessed(ctx, wit.URL, conflict.Known, nil); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		return w.Store.Witnessed(ctx, wit.URL, size, cosig)
	}
	return errors.New("the witness's size changed while it was asked")
}
