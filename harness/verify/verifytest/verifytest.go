// Package verifytest writes published finals by hand for the verifier's
// tests: a log of any entries, signed by a new key. It is for tests only:
// it must never be imported by arena itself.
package verifytest

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// Bundle writes a bundle of these entries, its log signed by a new key of
// origin, with standings of no row, and returns its directory, the key a
// verifier is given and the log's signer.
func Bundle(t testing.TB, origin string, entries ...event.LogEntry) (dir, key string, signer note.Signer) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "log.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(eventlog.Schema); err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(nil)
	signer, key, err = eventlog.Keys(origin, priv)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := eventlog.Append(ctx, db, fmt.Sprint(i), data); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := eventlog.Sign(ctx, db, signer, "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := eventlog.WriteStatic(ctx, db, int64(len(entries)), signed, filepath.Join(dir, "log")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, event.BundleStandings), []byte(`{"standings":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, key, signer
}
