// Package eventlog is an event's transparency log: an append-only Merkle
// tree of small entries (RFC 6962 hashing, kept as Go's checksum database
// keeps its own: golang.org/x/mod/sumdb/tlog), with checkpoints signed as
// C2SP signed notes (tlog-checkpoint) and read as C2SP tlog-tiles, so that
// any static web server can host a copy and anyone can check that a later
// log extends an earlier one.
//
// The log lives in tables of the event's own database (Schema), written in
// the caller's transaction: an entry is appended with what it records, or
// not at all.
//
// It must never change or drop an entry once appended, accept an entry of
// 64 KiB or more (the tiles' limit), or sign a checkpoint of a tree that
// does not extend the last one it signed.
package eventlog

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Schema makes the log's tables: its entries, the tree's stored hashes,
// every checkpoint signed (with the witnesses' cosignatures it gathered),
// and the size of the last checkpoint each witness cosigned.
const Schema = `
CREATE TABLE IF NOT EXISTS log_entries (n INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS log_hashes (i INTEGER PRIMARY KEY, hash BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS log_checkpoints (size INTEGER PRIMARY KEY, at TEXT NOT NULL, note BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS log_witnesses (url TEXT PRIMARY KEY, size INTEGER NOT NULL);
`

// MaxEntry is one more than the most an entry may weigh (tlog-tiles:
// an entry's length is two bytes).
const MaxEntry = 1 << 16

// TileHeight is the height of every tile (tlog-tiles: 8).
const TileHeight = 8

// Querier runs statements: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// hashReader reads the tree's stored hashes from q.
func hashReader(ctx context.Context, q Querier) tlog.HashReaderFunc {
	return func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, idx := range indexes {
			var b []byte
			if err := q.QueryRowContext(ctx, `SELECT hash FROM log_hashes WHERE i = ?`, idx).Scan(&b); err != nil {
				return nil, fmt.Errorf("the log's stored hash %d: %w", idx, err)
			}
			if len(b) != tlog.HashSize {
				return nil, fmt.Errorf("the log's stored hash %d is %d bytes", idx, len(b))
			}
			copy(out[i][:], b)
		}
		return out, nil
	}
}

// Size is how many entries the log holds.
func Size(ctx context.Context, q Querier) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM log_entries`).Scan(&n)
	return n, err
}

// Logged are the keys of every entry appended.
func Logged(ctx context.Context, q Querier) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT key FROM log_entries`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}

// Append adds an entry under key (which names what it records: one entry a
// key) in q, which should be the transaction that records what it says,
// and returns its index. An entry of key already there is not appended
// again: its index is returned, and added is false.
func Append(ctx context.Context, q Querier, key string, data []byte) (index int64, added bool, err error) {
	if len(data) >= MaxEntry {
		return 0, false, fmt.Errorf("a log entry of %d bytes: at most %d", len(data), MaxEntry-1)
	}
	err = q.QueryRowContext(ctx, `SELECT n FROM log_entries WHERE key = ?`, key).Scan(&index)
	if err == nil {
		return index, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	n, err := Size(ctx, q)
	if err != nil {
		return 0, false, err
	}
	hashes, err := tlog.StoredHashes(n, data, hashReader(ctx, q))
	if err != nil {
		return 0, false, err
	}
	base := tlog.StoredHashCount(n)
	for i, h := range hashes {
		if _, err := q.ExecContext(ctx, `INSERT INTO log_hashes (i, hash) VALUES (?, ?)`, base+int64(i), h[:]); err != nil {
			return 0, false, err
		}
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO log_entries (n, key, data) VALUES (?, ?, ?)`, n, key, data); err != nil {
		return 0, false, err
	}
	return n, true, nil
}

// Entry is entry n.
func Entry(ctx context.Context, q Querier, n int64) ([]byte, error) {
	var data []byte
	err := q.QueryRowContext(ctx, `SELECT data FROM log_entries WHERE n = ?`, n).Scan(&data)
	return data, err
}

// Checkpoint is a tree head: the log's origin, its size and root hash.
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   tlog.Hash
}

// Text is the checkpoint's note text (C2SP tlog-checkpoint).
func (c Checkpoint) Text() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash[:]))
}

// ParseCheckpoint reads a checkpoint's note text.
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 4 || !strings.HasSuffix(text, "\n") {
		return Checkpoint{}, errors.New("a checkpoint is three lines at least: origin, size, root hash")
	}
	var c Checkpoint
	c.Origin = strings.TrimSuffix(lines[0], "\n")
	size, err := strconv.ParseInt(strings.TrimSuffix(lines[1], "\n"), 10, 64)
	if c.Origin == "" || err != nil || size < 0 || strconv.FormatInt(size, 10) != strings.TrimSuffix(lines[1], "\n") {
		return Checkpoint{}, fmt.Errorf("a checkpoint's origin and size: %q, %q", lines[0], lines[1])
	}
	c.Size = size
	h, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(lines[2], "\n"))
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("a checkpoint's root hash %q", lines[2])
	}
	copy(c.Hash[:], h)
	return c, nil
}

// Head is the log's tree head as q holds it now.
func Head(ctx context.Context, q Querier, origin string) (Checkpoint, error) {
	n, err := Size(ctx, q)
	if err != nil {
		return Checkpoint{}, err
	}
	h, err := tlog.TreeHash(n, hashReader(ctx, q))
	if err != nil {
		return Checkpoint{}, err
	}
	return Checkpoint{Origin: origin, Size: n, Hash: h}, nil
}

// Sign signs the log's head as q holds it now and keeps the signed note
// (once per size: a size already signed returns the note signed then),
// after checking that the tree extends the last checkpoint signed.
func Sign(ctx context.Context, q Querier, signer note.Signer, at string) ([]byte, error) {
	head, err := Head(ctx, q, signer.Name())
	if err != nil {
		return nil, err
	}
	var last []byte
	err = q.QueryRowContext(ctx, `SELECT note FROM log_checkpoints ORDER BY size DESC LIMIT 1`).Scan(&last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := recheck(ctx, q, 0, head.Size); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		prev, err := openUnverified(last)
		if err != nil {
			return nil, fmt.Errorf("the last checkpoint signed: %w", err)
		}
		if prev.Size == head.Size {
			return last, nil
		}
		h, err := tlog.TreeHash(prev.Size, hashReader(ctx, q))
		if err != nil {
			return nil, err
		}
		if prev.Size > head.Size || h != prev.Hash {
			return nil, fmt.Errorf("the log of %d entries does not extend its last checkpoint (%d entries, root %s): it was changed", head.Size, prev.Size, prev.Hash)
		}
		if err := recheck(ctx, q, prev.Size, head.Size); err != nil {
			return nil, err
		}
	}
	signed, err := note.Sign(&note.Note{Text: head.Text()}, signer)
	if err != nil {
		return nil, err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO log_checkpoints (size, at, note) VALUES (?, ?, ?)`, head.Size, at, signed); err != nil {
		return nil, err
	}
	return signed, nil
}

// recheck hashes entries from to to anew and compares what the tree
// stored for them: what a checkpoint signs for the first time is its
// entries as they read.
func recheck(ctx context.Context, q Querier, from, to int64) error {
	r := hashReader(ctx, q)
	for n := from; n < to; n++ {
		data, err := Entry(ctx, q, n)
		if err != nil {
			return err
		}
		stored, err := r.ReadHashes([]int64{tlog.StoredHashIndex(0, n)})
		if err != nil {
			return err
		}
		if tlog.RecordHash(data) != stored[0] {
			return fmt.Errorf("log entry %d does not hash to what the tree stored for it: it was changed", n)
		}
	}
	return nil
}

// openUnverified reads a signed checkpoint's text without checking its
// signature (the log's own, read back from its own table).
func openUnverified(signed []byte) (Checkpoint, error) {
	i := strings.Index(string(signed), "\n\n")
	if i < 0 {
		return Checkpoint{}, errors.New("not a signed note")
	}
	return ParseCheckpoint(string(signed[:i+1]))
}

// Latest is the last checkpoint signed at or before at (RFC 3339, as Sign
// was given; "" for the very last), and its size; nil before any.
func Latest(ctx context.Context, q Querier, at string) (signed []byte, size int64, err error) {
	query, args := `SELECT note, size FROM log_checkpoints ORDER BY size DESC LIMIT 1`, []any{}
	if at != "" {
		query, args = `SELECT note, size FROM log_checkpoints WHERE julianday(at) <= julianday(?) ORDER BY size DESC LIMIT 1`, []any{at}
	}
	err = q.QueryRowContext(ctx, query, args...).Scan(&signed, &size)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, nil
	}
	return signed, size, err
}

// Verify opens a signed checkpoint with the log's public key (a note
// verifier key, VerifierKey) and reads it; its origin must be the key's
// name.
func Verify(signed []byte, vkey string) (Checkpoint, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("the log's key: %w", err)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("the checkpoint's signature: %w", err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("the checkpoint is of log %q, the key of %q", c.Origin, v.Name())
	}
	return c, nil
}

// Keys are a log's note keys made from an ed25519 key: the signer, and the
// verifier key anyone checks its checkpoints with (name+hash+key).
func Keys(origin string, key ed25519.PrivateKey) (note.Signer, string, error) {
	if !validOrigin(origin) {
		return nil, "", fmt.Errorf("a log's origin %q: a name without spaces or +", origin)
	}
	vkey, err := note.NewEd25519VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, "", err
	}
	// The signer key is the verifier key's name and hash with the seed:
	// PRIVATE+KEY+name+hash+base64(alg || seed).
	hash, _, _ := strings.Cut(strings.TrimPrefix(vkey, origin+"+"), "+")
	skey := "PRIVATE+KEY+" + origin + "+" + hash + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, key.Seed()...))
	signer, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", err
	}
	return signer, vkey, nil
}

func validOrigin(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || r == '+' || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Fingerprint is a short name of a verifier key for people to compare.
func Fingerprint(vkey string) string {
	s := sha256.Sum256([]byte(vkey))
	return fmt.Sprintf("%x", s[:8])
}

// Tile is the content of a tile of the tree of size entries at path
// (tlog-tiles: tile/L/N[.p/W], or tile/entries/N[.p/W] for entries, each
// entry there preceded by its length in two bytes, big-endian). A tile
// past the tree's size does not exist.
func Tile(ctx context.Context, q Querier, size int64, path string) ([]byte, error) {
	t, entries, err := ParseTilePath(path)
	if err != nil {
		return nil, err
	}
	if !within(t, size) {
		return nil, ErrNoTile
	}
	if entries {
		var out []byte
		start := t.N << TileHeight
		for i := start; i < start+int64(t.W); i++ {
			data, err := Entry(ctx, q, i)
			if err != nil {
				return nil, err
			}
			out = binary.BigEndian.AppendUint16(out, uint16(len(data)))
			out = append(out, data...)
		}
		return out, nil
	}
	return tlog.ReadTileData(t, hashReader(ctx, q))
}

// ErrNoTile is a tile the log does not hold (yet).
var ErrNoTile = errors.New("no such tile")

// within says whether tile t is one of the tree of size entries: whole,
// or partial exactly at the tree's edge.
func within(t tlog.Tile, size int64) bool {
	// The entries a tile at level L covers: W << (H*L) of them from
	// N << (H*(L+1)) on.
	level := t.L
	if level < 0 {
		level = 0
	}
	span := int64(1) << (TileHeight * level)
	start := t.N << (TileHeight * (level + 1))
	end := start + int64(t.W)*span
	if end > size {
		return false
	}
	full := int64(1) << TileHeight
	if int64(t.W) < full {
		// A partial tile is the tree's edge: what comes after it at its
		// level is not in the tree.
		return (size-start)/span == int64(t.W)
	}
	return true
}

// BadPathError is a path that names no tile.
type BadPathError struct{ Path string }

func (e *BadPathError) Error() string { return fmt.Sprintf("%q is not a tile's path", e.Path) }

// TilePath is tile t's path in tlog-tiles (entries: the entry bundle's).
func TilePath(t tlog.Tile, entries bool) string {
	p := t.Path() // tile/H/L/N[.p/W], or tile/H/data/N
	rest := strings.TrimPrefix(p, "tile/"+strconv.Itoa(t.H)+"/")
	if entries {
		rest = "entries/" + strings.TrimPrefix(rest, "data/")
	}
	return "tile/" + rest
}

// ParseTilePath reads a tlog-tiles path: the tile, and whether it is an
// entry bundle.
func ParseTilePath(path string) (tlog.Tile, bool, error) {
	rest, ok := strings.CutPrefix(path, "tile/")
	if !ok {
		return tlog.Tile{}, false, &BadPathError{path}
	}
	entries := false
	if r, ok := strings.CutPrefix(rest, "entries/"); ok {
		rest, entries = "data/"+r, true
	}
	t, err := tlog.ParseTilePath("tile/" + strconv.Itoa(TileHeight) + "/" + rest)
	if err != nil {
		return tlog.Tile{}, false, &BadPathError{path}
	}
	if entries {
		t.L = -1
	}
	return t, entries, nil
}

// WriteStatic writes the log's tree of size entries into dir as a static
// web server serves it: the signed checkpoint as dir/checkpoint and every
// tile (Tiles) under dir/tile.
func WriteStatic(ctx context.Context, q Querier, size int64, signed []byte, dir string) error {
	write := func(rel string, data []byte) error {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, data, 0o644)
	}
	if err := write("checkpoint", signed); err != nil {
		return err
	}
	for _, p := range Tiles(size) {
		data, err := Tile(ctx, q, size, p)
		if err != nil {
			return fmt.Errorf("tile %s: %w", p, err)
		}
		if err := write(p, data); err != nil {
			return err
		}
	}
	return nil
}

// Tiles are the paths of every tile of a tree of size entries: hash tiles
// and entry bundles, what a static copy of the log serves.
func Tiles(size int64) []string {
	var out []string
	for _, t := range tlog.NewTiles(TileHeight, 0, size) {
		out = append(out, TilePath(t, false))
		if t.L == 0 {
			e := t
			e.L = -1
			out = append(out, TilePath(e, true))
		}
	}
	return out
}

// Proof is an entry's inclusion proof against a signed checkpoint, in
// the C2SP tlog-proof format; extra, when not nil, rides in its extra
// line (the entry itself, so that the proof stands alone).
func Proof(ctx context.Context, q Querier, index int64, signed, extra []byte) ([]byte, error) {
	c, err := openUnverified(signed)
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= c.Size {
		return nil, fmt.Errorf("entry %d is not in the checkpoint's tree of %d", index, c.Size)
	}
	p, err := tlog.ProveRecord(c.Size, index, hashReader(ctx, q))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("c2sp.org/tlog-proof@v1\n")
	if extra != nil {
		b.WriteString("extra " + base64.StdEncoding.EncodeToString(extra) + "\n")
	}
	fmt.Fprintf(&b, "index %d\n", index)
	for _, h := range p {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return []byte(b.String()), nil
}

// Consistency is the proof that the log's tree of size old is a prefix of
// its tree of size size (C2SP tlog-witness hands it to a witness).
func Consistency(ctx context.Context, q Querier, old, size int64) (tlog.TreeProof, error) {
	if old < 0 || old > size {
		return nil, fmt.Errorf("a tree of %d entries is not a prefix of one of %d", old, size)
	}
	if old == 0 {
		return nil, nil // the empty tree is every tree's prefix
	}
	return tlog.ProveTree(size, old, hashReader(ctx, q))
}

// ProofExtra is the extra data of a proof (Proof's extra).
func ProofExtra(proof []byte) ([]byte, error) {
	lines := strings.SplitN(string(proof), "\n", 3)
	if len(lines) < 3 || lines[0] != "c2sp.org/tlog-proof@v1" {
		return nil, errors.New("not a c2sp.org/tlog-proof@v1 proof")
	}
	extra, ok := strings.CutPrefix(lines[1], "extra ")
	if !ok {
		return nil, errors.New("the proof carries no entry (no extra line)")
	}
	data, err := base64.StdEncoding.DecodeString(extra)
	if err != nil {
		return nil, fmt.Errorf("the proof's extra line: %w", err)
	}
	return data, nil
}

// CheckProof checks an inclusion proof (Proof) of entry data with the
// log's verifier key: the checkpoint's signature, then the path from the
// entry to its root. It returns the entry's index and the checkpoint.
func CheckProof(proof, data []byte, vkey string) (int64, Checkpoint, error) {
	text := string(proof)
	head, signed, ok := strings.Cut(text, "\n\n")
	if !ok {
		return 0, Checkpoint{}, errors.New("not a tlog proof: no blank line before its checkpoint")
	}
	lines := strings.Split(head, "\n")
	if len(lines) < 2 || lines[0] != "c2sp.org/tlog-proof@v1" {
		return 0, Checkpoint{}, errors.New("not a c2sp.org/tlog-proof@v1 proof")
	}
	i := 1
	if strings.HasPrefix(lines[i], "extra ") {
		i++
	}
	idx, ok := strings.CutPrefix(lines[i], "index ")
	index, err := strconv.ParseInt(idx, 10, 64)
	if !ok || err != nil || index < 0 {
		return 0, Checkpoint{}, fmt.Errorf("the proof's index line %q", lines[i])
	}
	var p tlog.RecordProof
	for _, l := range lines[i+1:] {
		b, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(b) != tlog.HashSize {
			return 0, Checkpoint{}, fmt.Errorf("the proof's hash %q", l)
		}
		var h tlog.Hash
		copy(h[:], b)
		p = append(p, h)
	}
	c, err := Verify([]byte(signed), vkey)
	if err != nil {
		return 0, Checkpoint{}, err
	}
	if index >= c.Size {
		return 0, Checkpoint{}, fmt.Errorf("entry %d is past the checkpoint's %d", index, c.Size)
	}
	if err := tlog.CheckRecord(p, c.Size, c.Hash, index, tlog.RecordHash(data)); err != nil {
		return 0, Checkpoint{}, fmt.Errorf("entry %d is not in the log's tree of %d: %w", index, c.Size, err)
	}
	return index, c, nil
}

// RootOf is the tree hash of a log of these entries.
func RootOf(entries [][]byte) (tlog.Hash, error) {
	t, err := TreeOf(entries)
	if err != nil {
		return tlog.Hash{}, err
	}
	return t.Root()
}

// Tree is the Merkle tree of a log's entries, computed from them alone.
type Tree struct {
	size   int64
	stored []tlog.Hash
}

// TreeOf computes the tree of entries.
func TreeOf(entries [][]byte) (*Tree, error) {
	t := &Tree{}
	for n, e := range entries {
		hs, err := tlog.StoredHashes(int64(n), e, t.reader())
		if err != nil {
			return nil, err
		}
		t.stored = append(t.stored, hs...)
	}
	t.size = int64(len(entries))
	return t, nil
}

func (t *Tree) reader() tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x < 0 || x >= int64(len(t.stored)) {
				return nil, fmt.Errorf("hash %d not stored", x)
			}
			out[i] = t.stored[x]
		}
		return out, nil
	})
}

// Root is the tree's hash, the one its checkpoint signs.
func (t *Tree) Root() (tlog.Hash, error) { return tlog.TreeHash(t.size, t.reader()) }

// HashTile is the content the hash tile at path (a tile of TileHeight,
// as Tiles names it) must have in this tree.
func (t *Tree) HashTile(path string) ([]byte, error) {
	tile, entries, err := ParseTilePath(path)
	if err != nil {
		return nil, err
	}
	if entries {
		return nil, fmt.Errorf("%s is an entry bundle, not a hash tile", path)
	}
	return tlog.ReadTileData(tile, t.reader())
}

// Signer signs a log's checkpoints (Keys makes one).
type Signer = note.Signer
