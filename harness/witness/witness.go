package witness

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// Files of a witness's directory.
const (
	// KeyFile holds the witness's Ed25519 seed: made once, kept.
	KeyFile = "witness.key"
	// DBFile holds the last checkpoint the witness cosigned of each log.
	DBFile = "witness.db"
)

// maxRequest is the most an add-checkpoint request may weigh: a size, a
// proof of at most 64 hashes, a checkpoint and its signatures.
const maxRequest = 64 << 10

// Witness cosigns the checkpoints of the logs it knows.
type Witness struct {
	signer *Signer
	logs   map[string]note.Verifier // by origin
	db     *sqlitedb.DB
}

// Open opens (or makes) the witness in dir, named name, for the logs
// whose keys are given (a log's public key, as its site shows it: its
// origin is the key's name).
func Open(dir, name string, logKeys []string) (*Witness, error) {
	if len(logKeys) == 0 {
		return nil, errors.New("a witness needs at least one log's key to cosign")
	}
	logs := map[string]note.Verifier{}
	for _, k := range logKeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("the log's key %q: %w", k, err)
		}
		logs[v.Name()] = v
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	seed, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if errors.Is(err, os.ErrNotExist) {
		_, key, gerr := ed25519.GenerateKey(nil)
		if gerr != nil {
			return nil, gerr
		}
		seed = key.Seed()
		err = os.WriteFile(filepath.Join(dir, KeyFile), seed, 0o600)
	}
	if err != nil {
		return nil, err
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s: %d bytes, not an Ed25519 seed", filepath.Join(dir, KeyFile), len(seed))
	}
	signer, err := NewSigner(name, ed25519.NewKeyFromSeed(seed))
	if err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(filepath.Join(dir, DBFile), "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS logs (origin TEXT PRIMARY KEY, size INTEGER NOT NULL, hash TEXT NOT NULL)`); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &Witness{signer: signer, logs: logs, db: db}, nil
}

// Close closes the witness's state.
func (w *Witness) Close() error { return w.db.Close() }

// VerifierKey is the key others check the witness's cosignatures with.
func (w *Witness) VerifierKey() string { return w.signer.VerifierKey() }

// Errors of an add-checkpoint request, each its own HTTP status.
var (
	errBadRequest = errors.New("the request is not an add-checkpoint request (old SIZE, the proof's hashes, an empty line, the checkpoint)")
	errUnknownLog = errors.New("this witness does not know the checkpoint's log")
	errSignature  = errors.New("the checkpoint is not signed by its log's key")
	errProof      = errors.New("the consistency proof does not show the checkpoint extends the one cosigned before")
)

// ConflictError is an add-checkpoint request whose old size is not the
// size of the last checkpoint the witness cosigned of the log: Known.
type ConflictError struct{ Known int64 }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the witness last cosigned a checkpoint of %d entries of this log", e.Known)
}

// ServeHTTP answers POST /add-checkpoint as c2sp.org/tlog-witness says:
// the cosignature lines, or 409 and the size it knows, 403 for a
// checkpoint its log did not sign, 404 for a log it does not know, 422
// for a proof that does not hold, 400 for a request that does not read.
func (w *Witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/add-checkpoint" {
		http.NotFound(rw, r)
		return
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "add-checkpoint takes POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxRequest))
	if err != nil {
		http.Error(rw, "the request: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	cosig, err := w.AddCheckpoint(r.Context(), body)
	var conflict *ConflictError
	switch {
	case errors.As(err, &conflict):
		rw.Header().Set("Content-Type", "text/x.tlog.size")
		rw.WriteHeader(http.StatusConflict)
		fmt.Fprintf(rw, "%d\n", conflict.Known)
		return
	case errors.Is(err, errBadRequest):
		http.Error(rw, err.Error(), http.StatusBadRequest)
	case errors.Is(err, errUnknownLog):
		http.Error(rw, err.Error(), http.StatusNotFound)
	case errors.Is(err, errSignature):
		http.Error(rw, err.Error(), http.StatusForbidden)
	case errors.Is(err, errProof):
		http.Error(rw, err.Error(), http.StatusUnprocessableEntity)
	case err != nil:
		http.Error(rw, "the witness failed: "+err.Error(), http.StatusInternalServerError)
	default:
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write(cosig) // the state is written: a lost answer is asked again
	}
}

// AddCheckpoint reads an add-checkpoint request's body ("old SIZE", the
// consistency proof's hashes a line each, an empty line, the signed
// checkpoint), checks it against the last checkpoint cosigned of its log,
// records the new one and returns its cosignature line.
func (w *Witness) AddCheckpoint(ctx context.Context, body []byte) ([]byte, error) {
	head, signed, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok {
		return nil, errBadRequest
	}
	lines := strings.Split(string(head), "\n")
	size, ok := strings.CutPrefix(lines[0], "old ")
	old, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || old < 0 || len(lines)-1 > 63 {
		return nil, errBadRequest
	}
	proof := make(tlog.TreeProof, len(lines)-1)
	for i, l := range lines[1:] {
		if proof[i], err = tlog.ParseHash(l); err != nil {
			return nil, errBadRequest
		}
	}
	origin, _, _ := strings.Cut(string(signed), "\n")
	v := w.logs[origin]
	if v == nil {
		return nil, fmt.Errorf("%w (%q)", errUnknownLog, origin)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSignature, err)
	}
	c, err := eventlog.ParseCheckpoint(n.Text)
	if err != nil || c.Origin != origin {
		return nil, errBadRequest
	}
	if old > c.Size {
		return nil, fmt.Errorf("%w: old %d is more than the checkpoint's %d entries", errBadRequest, old, c.Size)
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // after Commit, a no-op
	var known int64
	var knownHash string
	err = tx.QueryRowContext(ctx, `SELECT size, hash FROM logs WHERE origin = ?`, origin).Scan(&known, &knownHash)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if old != known {
		return nil, &ConflictError{Known: known}
	}
	if known > 0 {
		h, err := tlog.ParseHash(knownHash)
		if err != nil {
			return nil, err
		}
		if tlog.CheckTree(proof, c.Size, c.Hash, known, h) != nil {
			return nil, errProof
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO logs (origin, size, hash) VALUES (?, ?, ?)
		ON CONFLICT (origin) DO UPDATE SET size = excluded.size, hash = excluded.hash`, origin, c.Size, c.Hash.String()); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	cosigned, err := note.Sign(&note.Note{Text: n.Text}, w.signer)
	if err != nil {
		return nil, err
	}
	// The signature lines follow the note's text and its empty line.
	return cosigned[len(n.Text)+1:], nil
}
