package web

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/harness/witness"
)

// A team that trusts no one, in the browser: it copies the log's key and
// its two witnesses' keys from the home page before the final, keeps the
// log's checkpoint during the scoreboard's freeze (served then, its tiles
// withheld), and after the reveal checks the published final against the
// checkpoint it kept and a quorum of the witnesses, which cosigned the
// log as it grew. A history the organizer's own key signs in place of the
// one the witnesses saw gets no cosignature from them.
func TestATeamHoldsTheFinalToItsCheckpointsAndWitnesses(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The witnesses answer before the event names them: their keys made
	// first, each opened once the log's key is known.
	type wit struct {
		dir     string
		signer  *witness.Signer
		handler atomic.Pointer[witness.Witness]
		srv     *httptest.Server
	}
	var wits []*wit
	var names []string
	for _, name := range []string{"team-ant", "team-bee"} {
		w := &wit{dir: t.TempDir()}
		_, key, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.dir, witness.KeyFile), key.Seed(), 0o600); err != nil {
			t.Fatal(err)
		}
		if w.signer, err = witness.NewSigner(name, key); err != nil {
			t.Fatal(err)
		}
		w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if h := w.handler.Load(); h != nil {
				h.ServeHTTP(rw, r)
				return
			}
			http.Error(rw, "not yet", http.StatusServiceUnavailable)
		}))
		t.Cleanup(w.srv.Close)
		wits = append(wits, w)
		names = append(names, fmt.Sprintf("%q", w.srv.URL+" "+w.signer.VerifierKey()))
	}
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n[log]\nwitnesses = ["+strings.Join(names, ", ")+"]\n")
	_, logKey, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wits {
		opened, err := witness.Open(w.dir, []string{"team-ant", "team-bee"}[i], []string{logKey})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { opened.Close() })
		if opened.VerifierKey() != w.signer.VerifierKey() {
			t.Fatal("the witness opened with another key than the one made for it")
		}
		w.handler.Store(opened)
	}
	cfg, err := event.LoadConfig(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the witnesses are asked, none fails (a warning fails the
	// test).
	asking := &services.Witnessing{Store: e.store, Witnesses: cfg.Log.WitnessList(), Client: &http.Client{Timeout: 10 * time.Second},
		Log: slog.New(slog.NewTextHandler(failOnWrite{t}, nil)), Every: 50 * time.Millisecond}
	asked := make(chan error, 1)
	go func() { asked <- asking.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-asked; err != nil {
			t.Error(err)
		}
	}()
	threeTeamsForTheFinal(t, ctx, e)

	// Before the final, in the browser: the keys a team copies.
	b := openTab(t, e.http.URL, 3*time.Minute)
	b.open("/")
	if got := eval[string](b, `document.querySelector("#log-key").textContent`); got != logKey {
		t.Fatalf("the home page's log key %q, want %q", got, logKey)
	}
	witnessKeys := eval[[]string](b, `[...document.querySelectorAll("#log-witnesses code")].map(c => c.textContent)`)
	if len(witnessKeys) != 2 || witnessKeys[0] != wits[0].signer.VerifierKey() || witnessKeys[1] != wits[1].signer.VerifierKey() {
		t.Fatalf("the home page's witnesses: %q", witnessKeys)
	}
	b.screenshot("home-log-witnesses")

	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	if fb := e.finalEnded(t); fb.Run.Error != "" {
		t.Fatalf("the final: %+v", fb)
	}
	finals, _, err := e.store.ListGames(ctx, event.GameQuery{Kind: event.FinalGame, Limit: 10})
	if err != nil || len(finals) != 6 {
		t.Fatalf("final games %d %v", len(finals), err)
	}
	slices.SortFunc(finals, func(x, y event.Game) int { return x.Finished.Compare(y.Finished) })
	body := fmt.Sprintf(`{"at": %q}`, finals[2].Finished.Format(time.RFC3339Nano))
	if res, out := e.do(t, http.MethodPost, "/api/v1/admin/freeze", e.admin, strings.NewReader(body), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("freeze: %d %s", res.StatusCode, out)
	}
	// During the freeze the team keeps the log's checkpoint, from its page.
	kept := value(b, "keep the checkpoint", chromedp.Evaluate[string](`fetch("/log/checkpoint").then(r => r.ok ? r.text() : "HTTP " + r.status)`, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
	frozen, err := eventlog.Verify([]byte(kept), logKey)
	if err != nil || frozen.Size < 17 {
		t.Fatalf("the checkpoint kept during the freeze: %+v %v\n%s", frozen, err, kept)
	}
	if res, out := e.do(t, http.MethodPost, "/api/v1/admin/reveal", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("reveal: %d %s", res.StatusCode, out)
	}
	// The witnesses cosign the whole log once it is revealed.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		signed, _, err := e.store.FinalLogCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := witness.Cosigned(signed, witnessKeys); err == nil && len(got) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the final's checkpoint is not cosigned by both witnesses:\n%s", signed)
		}
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	if _, err := e.store.PublishFinal(ctx, bundle); err != nil {
		t.Fatal(err)
	}
	r, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: logKey, Since: [][]byte{[]byte(kept)}, Witnesses: witnessKeys, Quorum: 2})
	if err != nil || !slices.Equal(r.Cosigned, []string{"team-ant", "team-bee"}) || r.Games != 6 {
		t.Fatalf("the published final against the kept checkpoint and both witnesses: %v %+v", err, r)
	}

	// Another history of the final, signed by the organizer's own key:
	// the witnesses, having cosigned the real one, refuse it.
	signer, _, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	entries := logEntries(t, bundle, r.Checkpoint.Size)
	other := strings.Replace(string(entries[len(entries)-2]), `"reason":"`, `"reason":"forfeit, `, 1)
	forkDir := forkedLog(t, signer, append(append([][]byte{}, entries[:len(entries)-2]...), []byte(other), entries[len(entries)-1]))
	fork, err := os.ReadFile(filepath.Join(forkDir, "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wits {
		_, err := witness.Submit(ctx, http.DefaultClient, w.srv.URL, w.signer.VerifierKey(), r.Checkpoint.Size, nil, fork)
		if err == nil || !strings.Contains(err.Error(), "422") {
			t.Errorf("witness %s asked to cosign another history: %v", w.signer.Name(), err)
		}
	}
	// Published, that history (a game of the freeze rewritten) fails the
	// checkpoint the team kept during the freeze, and has no witness.
	forged := filepath.Join(t.TempDir(), "forged")
	if err := os.CopyFS(forged, os.DirFS(bundle)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(forged, "log")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(forged, "log"), os.DirFS(forkDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(forged), verify.Options{Key: logKey, Since: [][]byte{[]byte(kept)}}); err == nil || !strings.Contains(err.Error(), "forked or rewritten") {
		t.Errorf("the rewritten final against the checkpoint kept during the freeze: %v", err)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(forged), verify.Options{Key: logKey, Witnesses: witnessKeys, Quorum: 1}); err == nil || !strings.Contains(err.Error(), "cosigned by 0 of the 2 witnesses") {
		t.Errorf("the rewritten final with the witnesses: %v", err)
	}
	b.noExceptions()
}

// failOnWrite fails the test with whatever is written to it.
type failOnWrite struct{ t *testing.T }

func (f failOnWrite) Write(p []byte) (int, error) {
	f.t.Errorf("logged: %s", p)
	return len(p), nil
}
