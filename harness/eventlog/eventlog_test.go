package eventlog_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/internal/sqlitedb"
)

func open(t testing.TB) *sqlitedb.DB {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "log.db"), "_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(eventlog.Schema); err != nil {
		t.Fatal(err)
	}
	return db
}

func keys(t testing.TB, origin string) (eventlog.Signer, string) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, v, err := eventlog.Keys(origin, key)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func entry(i int) []byte { return []byte(fmt.Sprintf(`{"kind":"game","game":%d}`, i)) }

// A log that grows: every checkpoint is signed by its key, its root is the
// one a verifier computes from the entries alone, each one extends the
// one before (consistency), an entry's inclusion proof checks offline,
// and an entry appended twice under its key is there once.
func TestALogGrowsAndEveryCheckpointExtendsTheLast(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	signer, vkey := keys(t, "arena.example/cup-final")
	var all [][]byte
	var checkpoints []eventlog.Checkpoint
	for _, batch := range []int{1, 2, 5, 250, 7, 300} {
		for range batch {
			i := len(all)
			n, added, err := eventlog.Append(ctx, db, fmt.Sprintf("game:%d", i), entry(i))
			if err != nil || !added || n != int64(i) {
				t.Fatalf("append %d: index %d, added %v, %v", i, n, added, err)
			}
			all = append(all, entry(i))
		}
		signed, err := eventlog.Sign(ctx, db, signer, "2026-01-01T00:00:00Z")
		if err != nil {
			t.Fatal(err)
		}
		c, err := eventlog.Verify(signed, vkey)
		if err != nil {
			t.Fatal(err)
		}
		root, err := eventlog.RootOf(all)
		if err != nil {
			t.Fatal(err)
		}
		if c.Size != int64(len(all)) || c.Hash != root {
			t.Fatalf("checkpoint of %d, %s; the entries' own root: %d, %s", c.Size, c.Hash, len(all), root)
		}
		if len(checkpoints) > 0 {
			prev := checkpoints[len(checkpoints)-1]
			if old, err := eventlog.RootOf(all[:prev.Size]); err != nil || old != prev.Hash {
				t.Fatalf("the log of %d does not extend its checkpoint of %d", c.Size, prev.Size)
			}
		}
		checkpoints = append(checkpoints, c)
		// Every entry's proof against this checkpoint checks offline.
		for _, i := range []int64{0, c.Size / 2, c.Size - 1} {
			proof, err := eventlog.Proof(ctx, db, i, signed, all[i])
			if err != nil {
				t.Fatal(err)
			}
			if got, _, err := eventlog.CheckProof(proof, all[i], vkey); err != nil || got != i {
				t.Fatalf("entry %d's proof: %d, %v", i, got, err)
			}
			if extra, err := eventlog.ProofExtra(proof); err != nil || !bytes.Equal(extra, all[i]) {
				t.Fatalf("entry %d's proof carries %q, %v", i, extra, err)
			}
			if _, _, err := eventlog.CheckProof(proof, entry(int(i)+1), vkey); err == nil {
				t.Fatalf("entry %d's proof holds for another entry", i)
			}
		}
	}
	if n, added, err := eventlog.Append(ctx, db, "game:3", []byte("another")); err != nil || added || n != 3 {
		t.Errorf("an entry appended again under its key: index %d, added %v, %v", n, added, err)
	}
	if _, _, err := eventlog.Append(ctx, db, "big", make([]byte, eventlog.MaxEntry)); err == nil {
		t.Error("an entry of 64 KiB was appended")
	}
}

// A checkpoint is refused by another key, or once its text is changed; a
// log whose entries were rewritten under its checkpoint is refused a new
// one.
func TestACheckpointHoldsOnlyForItsKeyAndItsTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	signer, vkey := keys(t, "arena.example/final")
	_, otherKey := keys(t, "arena.example/final")
	for i := range 3 {
		if _, _, err := eventlog.Append(ctx, db, fmt.Sprint(i), entry(i)); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := eventlog.Sign(ctx, db, signer, "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Verify(signed, otherKey); err == nil {
		t.Error("a checkpoint verified with another key")
	}
	forged := bytes.Replace(signed, []byte("\n3\n"), []byte("\n2\n"), 1)
	if _, err := eventlog.Verify(forged, vkey); err == nil {
		t.Error("a checkpoint whose size was changed verified")
	}
	// An entry appended since, rewritten behind the log's back: no
	// checkpoint signs it.
	if _, _, err := eventlog.Append(ctx, db, "3", entry(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE log_entries SET data = ? WHERE n = 3`, entry(33)); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Sign(ctx, db, signer, "2026-01-01T00:01:00Z"); err == nil || !strings.Contains(err.Error(), "was changed") {
		t.Errorf("a log with a rewritten entry was signed: %v", err)
	}
	if _, err := db.Exec(`UPDATE log_entries SET data = ? WHERE n = 3`, entry(3)); err != nil {
		t.Fatal(err)
	}
	// The tree under the last checkpoint rewritten: refused too.
	if _, err := db.Exec(`UPDATE log_hashes SET hash = ? WHERE i = ?`, make([]byte, 32), tlog.StoredHashIndex(1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlog.Sign(ctx, db, signer, "2026-01-01T00:01:00Z"); err == nil || !strings.Contains(err.Error(), "does not extend") {
		t.Errorf("a log whose signed tree was rewritten was signed: %v", err)
	}
}

// Tiles are served as tlog-tiles names them, only within the tree's size,
// and a verifier rebuilds the tree from them alone.
func TestTilesRebuildTheTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	const size = 600
	var all [][]byte
	for i := range size {
		if _, _, err := eventlog.Append(ctx, db, fmt.Sprint(i), entry(i)); err != nil {
			t.Fatal(err)
		}
		all = append(all, entry(i))
	}
	paths := eventlog.Tiles(size)
	want := []string{"tile/0/000", "tile/entries/000", "tile/0/001", "tile/entries/001", "tile/0/002.p/88", "tile/entries/002.p/88", "tile/1/000.p/2"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("tiles of %d: %q, want %q", size, paths, want)
	}
	var got [][]byte
	for _, p := range paths {
		if !strings.HasPrefix(p, "tile/entries/") {
			continue
		}
		data, err := eventlog.Tile(ctx, db, size, p)
		if err != nil {
			t.Fatal(err)
		}
		for len(data) > 0 {
			n := int(binary.BigEndian.Uint16(data))
			got = append(got, data[2:2+n])
			data = data[2+n:]
		}
	}
	if len(got) != size || !bytes.Equal(got[599], all[599]) {
		t.Fatalf("%d entries read back from the tiles", len(got))
	}
	// The hash tiles give the tree's root as the entries do.
	tiles := map[string][]byte{}
	for _, p := range paths {
		data, err := eventlog.Tile(ctx, db, size, p)
		if err != nil {
			t.Fatal(err)
		}
		tiles[p] = data
	}
	root, err := eventlog.RootOf(all)
	if err != nil {
		t.Fatal(err)
	}
	r := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, tileReader(tiles))
	if h, err := tlog.TreeHash(size, r); err != nil || h != root {
		t.Fatalf("the root from the tiles: %s, %v; want %s", h, err, root)
	}
	for _, p := range []string{"tile/0/003", "tile/0/002", "tile/0/002.p/87", "tile/entries/002.p/89", "tile/8/0/000", "../etc"} {
		if _, err := eventlog.Tile(ctx, db, size, p); err == nil {
			t.Errorf("tile %s of a tree of %d was served", p, size)
		}
	}
}

// tileReader reads the tiles a log served, as tlog's verifier asks.
type tileReader map[string][]byte

func (tileReader) Height() int { return eventlog.TileHeight }
func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, ok := r[eventlog.TilePath(t, false)]
		if !ok {
			return nil, fmt.Errorf("no tile %s", eventlog.TilePath(t, false))
		}
		out[i] = data
	}
	return out, nil
}
func (tileReader) SaveTiles([]tlog.Tile, [][]byte) {}
