package services

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/harness/witness"
)

// The final's log is cosigned by the witnesses the event names: the
// served and published checkpoint carries their cosignatures, and arena
// verify asks for a quorum of them. A witness asked again after the log
// grew cosigns the larger tree from the one it cosigned (a witness whose
// state the server lost says the size it knows, and is asked from it); a
// witness never asked is no part of the quorum.
func TestTheFinalsLogIsCosignedByItsWitnesses(t *testing.T) {
	t.Parallel()
	e, _, _, _, _ := publishedFinal(t, 1)
	ctx := context.Background()
	_, key, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	var ws []event.Witness
	var keys []string
	for _, name := range []string{"team-ant", "team-bee", "nobody-asked"} {
		w, err := witness.Open(t.TempDir(), name, []string{key})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		srv := httptest.NewServer(w)
		t.Cleanup(srv.Close)
		ws = append(ws, event.Witness{URL: srv.URL, Key: w.VerifierKey()})
		keys = append(keys, w.VerifierKey())
	}
	asked := &Witnessing{Store: e.store, Witnesses: ws[:2], Client: &http.Client{}, Log: slog.Default()}
	for _, wit := range asked.Witnesses {
		if err := asked.Ask(ctx, wit); err != nil {
			t.Fatalf("ask %s: %v", wit.URL, err)
		}
	}
	signed, size, err := e.store.FinalLogCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := witness.Cosigned(signed, keys); err != nil || !slices.Equal(names, []string{"team-ant", "team-bee"}) {
		t.Fatalf("the served checkpoint is cosigned by %v (%v), want team-ant and team-bee", names, err)
	}
	if _, err := eventlog.Verify(signed, key); err != nil {
		t.Errorf("the cosigned checkpoint no longer verifies with the log's key: %v", err)
	}
	// Asked again with nothing new: nothing asked, nothing changed.
	if err := asked.Ask(ctx, ws[0]); err != nil {
		t.Errorf("asked again: %v", err)
	}
	again, _, err := e.store.FinalLogCheckpoint(ctx)
	if err != nil || string(again) != string(signed) {
		t.Errorf("asked again, the checkpoint changed: %q %v", again, err)
	}

	bundle := filepath.Join(t.TempDir(), "bundle")
	if _, err := e.store.PublishFinal(ctx, bundle); err != nil {
		t.Fatal(err)
	}
	r, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key, Witnesses: keys[:2]})
	if err != nil || !slices.Equal(r.Cosigned, []string{"team-ant", "team-bee"}) {
		t.Fatalf("the published final with its two witnesses: %v %+v", err, r)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key, Witnesses: keys, Quorum: 2}); err != nil {
		t.Errorf("two of three witnesses, a quorum of 2: %v", err)
	}
	_, err = verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key, Witnesses: keys})
	if err == nil || !strings.Contains(err.Error(), "cosigned by 2 of the 3 witnesses asked for (team-ant, team-bee), fewer than the 3 wanted") {
		t.Errorf("a quorum of all three: %v", err)
	}

	// The server forgets what a witness cosigned (its row lost): the
	// witness says the size it knows and is asked from there.
	if err := e.store.Witnessed(ctx, ws[1].URL, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, old, _, err := e.store.WitnessRequest(ctx, ws[1].URL); err != nil || old != 0 {
		t.Fatalf("the forgotten witness's size: %d %v", old, err)
	}
	if err := asked.Ask(ctx, ws[1]); err != nil {
		t.Errorf("a witness the server forgot: %v", err)
	}
	if _, known, old, _, err := e.store.WitnessRequest(ctx, ws[1].URL); err != nil || old != known || known != size {
		t.Errorf("after asking, the server knows the witness cosigned %d of %d (%v)", old, known, err)
	}
}
