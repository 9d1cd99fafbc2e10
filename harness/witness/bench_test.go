package witness

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/arenabots/arena/harness/eventlog"
)

// BenchmarkCosign measures a witness's latency for one checkpoint, over
// HTTP as a log's server asks: the log grows by two entries (a game's
// pairing and result) between checkpoints, and each is proven from the one
// before; the witness checks the signature and the proof, writes its state
// (SQLite, synchronous) and cosigns.
func BenchmarkCosign(b *testing.B) {
	log := newLog(b, "arena/cup")
	w, err := Open(b.TempDir(), "team-ant", []string{log.vkey})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	srv := httptest.NewServer(w)
	defer srv.Close()
	ctx := context.Background()
	signed, size := log.grow(2, "")
	if _, err := Submit(ctx, srv.Client(), srv.URL, w.VerifierKey(), 0, nil, signed); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		next, n := log.grow(2, "")
		proof, err := eventlog.Consistency(ctx, log.db, size, n)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := Submit(ctx, srv.Client(), srv.URL, w.VerifierKey(), size, proof, next); err != nil {
			b.Fatal(err)
		}
		size = n
	}
}
