package eventlog_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/arenabots/arena/harness/eventlog"
)

// BenchmarkAGameLogged is what logging one game costs the server: its
// entry appended and a checkpoint signed, in one transaction, on a log of
// a 300-team final's size (about 7,000 entries).
func BenchmarkAGameLogged(b *testing.B) {
	ctx := context.Background()
	db := open(b)
	signer, _ := keys(b, "arena.example/bench")
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 7000 {
		if _, _, err := eventlog.Append(ctx, tx, fmt.Sprint(i), entry(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := eventlog.Append(ctx, tx, fmt.Sprint("g", i), entry(7000+i)); err != nil {
			b.Fatal(err)
		}
		if _, err := eventlog.Sign(ctx, tx, signer, "2026-01-01T00:00:00Z"); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
