package witness

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// testLog is a log of entries signed by its own key, as an event keeps
// its final's.
type testLog struct {
	t      testing.TB
	db     *sqlitedb.DB
	signer note.Signer
	vkey   string
	n      int
}

func newLog(t testing.TB, origin string) *testLog {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "log.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(eventlog.Schema); err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	signer, vkey, err := eventlog.Keys(origin, key)
	if err != nil {
		t.Fatal(err)
	}
	return &testLog{t: t, db: db, signer: signer, vkey: vkey}
}

// grow appends entries (each its own text, prefix before its number) and
// signs the log, returning the checkpoint and its size.
func (l *testLog) grow(entries int, prefix string) ([]byte, int64) {
	l.t.Helper()
	ctx := context.Background()
	for range entries {
		l.n++
		if _, _, err := eventlog.Append(ctx, l.db, fmt.Sprint(l.n), fmt.Appendf(nil, `{"entry":"%s%d"}`, prefix, l.n)); err != nil {
			l.t.Fatal(err)
		}
	}
	signed, err := eventlog.Sign(ctx, l.db, l.signer, "2026-01-01T00:00:00Z")
	if err != nil {
		l.t.Fatal(err)
	}
	return signed, int64(l.n)
}

// request is the add-checkpoint request of the log's signed checkpoint of
// size, proven from old.
func (l *testLog) request(old, size int64, signed []byte) []byte {
	l.t.Helper()
	proof, err := eventlog.Consistency(context.Background(), l.db, old, size)
	if err != nil {
		l.t.Fatal(err)
	}
	return Request(old, proof, signed)
}

// A witness cosigns a log's first checkpoint and each that extends the
// last it cosigned, proven so; the cosignature verifies with its key and
// no other. It refuses a checkpoint of another log, one its log's key did
// not sign, a proof that does not hold, and an old size it does not know
// (saying the one it knows, 409); and a fork of the log shown to it after
// the real one, which is how a log showing two histories is caught. It
// keeps what it cosigned across a restart.
func TestAWitnessCosignsOnlyWhatExtendsWhatItCosigned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	log := newLog(t, "arena/cup")
	w, err := Open(dir, "team-ant", []string{log.vkey})
	if err != nil {
		t.Fatal(err)
	}
	first, n1 := log.grow(3, "")
	cosig, err := w.AddCheckpoint(ctx, log.request(0, n1, first))
	if err != nil {
		t.Fatalf("the first checkpoint: %v", err)
	}
	cosigned := append(append([]byte{}, first...), cosig...)
	if names, err := Cosigned(cosigned, []string{w.VerifierKey()}); err != nil || !slices.Equal(names, []string{"team-ant"}) {
		t.Fatalf("the cosigned checkpoint's witnesses: %v %v", names, err)
	}
	other, err := NewSigner("team-bee", ed25519.NewKeyFromSeed(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if names, err := Cosigned(cosigned, []string{other.VerifierKey()}); err != nil || len(names) != 0 {
		t.Errorf("another witness's key finds %v %v", names, err)
	}

	second, n2 := log.grow(5, "")
	var conflict *ConflictError
	if _, err := w.AddCheckpoint(ctx, log.request(0, n2, second)); !errors.As(err, &conflict) || conflict.Known != n1 {
		t.Errorf("an old size the witness does not know: %v, want a conflict saying %d", err, n1)
	}
	if _, err := w.AddCheckpoint(ctx, Request(n1, nil, second)); !errors.Is(err, errProof) {
		t.Errorf("a checkpoint without its proof: %v", err)
	}
	if _, err := w.AddCheckpoint(ctx, log.request(n1, n2, second)); err != nil {
		t.Fatalf("a checkpoint that extends the last, proven: %v", err)
	}

	// A fork: the same log's key signs another history of the first
	// entries. The witness, having cosigned the real one, refuses it.
	fork := newLog(t, "arena/cup")
	fork.signer = log.signer
	forked, n3 := fork.grow(9, "another ")
	if _, err := w.AddCheckpoint(ctx, fork.request(n2, n3, forked)); !errors.Is(err, errProof) {
		t.Errorf("a fork of the log: %v, want the proof refused", err)
	}
	stranger := newLog(t, "arena/elsewhere")
	s1, sn := stranger.grow(1, "")
	if _, err := w.AddCheckpoint(ctx, stranger.request(0, sn, s1)); !errors.Is(err, errUnknownLog) {
		t.Errorf("another log's checkpoint: %v", err)
	}
	impostor := newLog(t, "arena/cup") // the log's name, another key
	i1, in := impostor.grow(20, "")
	if _, err := w.AddCheckpoint(ctx, impostor.request(0, in, i1)); !errors.Is(err, errSignature) {
		t.Errorf("a checkpoint of the log's name that its key did not sign: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// Opened again, it is the same witness and knows what it cosigned.
	again, err := Open(dir, "team-ant", []string{log.vkey})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.VerifierKey() != w.VerifierKey() {
		t.Errorf("the witness's key changed when it was opened again")
	}
	third, n4 := log.grow(1, "")
	if _, err := again.AddCheckpoint(ctx, log.request(0, n4, third)); !errors.As(err, &conflict) || conflict.Known != n2 {
		t.Errorf("after a restart: %v, want a conflict saying %d", err, n2)
	}
}

// Over HTTP a log's server asks as C2SP tlog-witness says; Submit checks
// the answer is the witness's cosignature, and says the size the witness
// knows when it asked from another.
func TestAWitnessAnswersOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := newLog(t, "arena/cup")
	w, err := Open(t.TempDir(), "team-ant", []string{log.vkey})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	srv := httptest.NewServer(w)
	defer srv.Close()
	signed, n := log.grow(4, "")
	cosig, err := Submit(ctx, srv.Client(), srv.URL, w.VerifierKey(), 0, nil, signed)
	if err != nil || !strings.HasPrefix(string(cosig), "— team-ant ") {
		t.Fatalf("the first checkpoint: %q %v", cosig, err)
	}
	more, m := log.grow(2, "")
	_, err = Submit(ctx, srv.Client(), srv.URL, w.VerifierKey(), 0, nil, more)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || conflict.Known != n {
		t.Fatalf("from a size it does not know: %v", err)
	}
	proof, err := eventlog.Consistency(ctx, log.db, n, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Submit(ctx, srv.Client(), srv.URL, w.VerifierKey(), n, proof, more); err != nil {
		t.Errorf("from the size it knows: %v", err)
	}
	other, err := NewSigner("team-bee", ed25519.NewKeyFromSeed(make([]byte, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Submit(ctx, srv.Client(), srv.URL, other.VerifierKey(), m, nil, more); err == nil || !strings.Contains(err.Error(), "not its cosignature") {
		t.Errorf("an answer checked with another witness's key: %v", err)
	}
	res, err := srv.Client().Get(srv.URL + "/add-checkpoint")
	if err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", res.Status, err)
	}
	res.Body.Close()
}
