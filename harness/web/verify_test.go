package web

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// A final of four teams is published and verified with the key the home
// page showed before it, from the directory and from a static web server;
// then each way of tampering with the bundle is caught, naming the entry or
// the file and the field.
func TestAPublishedFinalVerifiesAndTamperingIsCaught(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	d, err := e.store.AddTeam(ctx, "Delta (the 4th)", "", "")
	if err != nil {
		t.Fatal(err)
	}
	passedUpload(t, e, d.ID, "./examples/random")
	_, key, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "round-robin", "games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	if b := e.finalEnded(t); b.Run.Error != "" || b.Games["done"] != 12 {
		t.Fatalf("the final: %+v", b)
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	size, err := e.store.PublishFinal(ctx, bundle)
	if err != nil {
		t.Fatal(err)
	}
	// The final, its 4 players, 12 pairings, 12 games and its end.
	if size != 1+4+12+12+1 {
		t.Fatalf("a log of %d entries, want 30", size)
	}
	start := time.Now()
	r, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key})
	if err != nil {
		t.Fatalf("the bundle as published does not verify: %v", err)
	}
	took := time.Since(start)
	var total, transcripts int64
	filepath.Walk(bundle, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			total += fi.Size()
			if fi.Name() == transcript.FileName {
				transcripts += fi.Size()
			}
		}
		return err
	})
	t.Logf("a bundle of %d entries: %d bytes (transcripts %d), verified in %v", size, total, transcripts, took)
	if r.Games != 12 || r.Pairings != 12 || r.Players != 4 || len(r.Standings) != 4 {
		t.Errorf("verified %+v", r)
	}
	// The log grew as the final played: every checkpoint it signed on the
	// way is one the published log extends.
	history, err := e.store.FinalLogCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) < 12 {
		t.Errorf("%d checkpoints signed during a final of 12 games", len(history))
	}
	for i, old := range history {
		if _, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key, Since: [][]byte{old}}); err != nil {
			t.Errorf("the published log does not extend checkpoint %d of %d: %v", i+1, len(history), err)
		}
	}
	// Private output never leaves the server: no team's stderr, no path.
	filepath.Walk(bundle, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, secret := range []string{e.dir, `"stderrTail":"`, `"gameDir":[`, `"source":"/`} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %s", path, secret)
			}
		}
		return nil
	})
	// Served by any static web server, it verifies from its URL.
	static := httptest.NewServer(http.FileServer(http.Dir(bundle)))
	defer static.Close()
	if _, err := verify.Bundle(ctx, verify.URL(static.URL), verify.Options{Key: key}); err != nil {
		t.Errorf("the bundle served over HTTP: %v", err)
	}
	original, err := os.ReadFile(filepath.Join(bundle, "log", "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	entries := logEntries(t, bundle, size)
	games := map[int]*event.LoggedGame{}
	for _, raw := range entries {
		var le event.LogEntry
		if err := json.Unmarshal(raw, &le); err != nil {
			t.Fatal(err)
		}
		if le.Game != nil {
			games[le.Game.ID] = le.Game
		}
	}
	tamper := func(t *testing.T, change func(dir string), o verify.Options, want ...string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "b")
		if err := os.CopyFS(dir, os.DirFS(bundle)); err != nil {
			t.Fatal(err)
		}
		change(dir)
		if o.Key == "" {
			o.Key = key
		}
		_, err := verify.Bundle(ctx, verify.Dir(dir), o)
		if err == nil {
			t.Fatal("the tampered bundle verifies")
		}
		t.Logf("verify: %v", err)
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("verify says %q, not %q", err, w)
			}
		}
	}
	transcriptOf := func(dir string, g int) string {
		return filepath.Join(dir, filepath.FromSlash(games[g].Dir), transcript.FileName)
	}
	t.Run("a game dropped", func(t *testing.T) {
		tamper(t, func(dir string) {
			if err := os.RemoveAll(filepath.Dir(transcriptOf(dir, 5))); err != nil {
				t.Fatal(err)
			}
		}, verify.Options{}, "game 5:", "cannot be read (a game dropped?)")
	})
	t.Run("a game replaced by another seed's", func(t *testing.T) {
		tamper(t, func(dir string) {
			other, err := os.ReadFile(transcriptOf(dir, 3))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(transcriptOf(dir, 1), other, 0o644); err != nil {
				t.Fatal(err)
			}
		}, verify.Options{}, "game 1:", "field public", "the transcript was changed")
	})
	t.Run("a transcript edited and signed again by another key", func(t *testing.T) {
		tamper(t, func(dir string) {
			resign(t, transcriptOf(dir, 2))
		}, verify.Options{}, "game 2:", "field public")
	})
	t.Run("a standings row changed", func(t *testing.T) {
		tamper(t, func(dir string) {
			path := filepath.Join(dir, event.BundleStandings)
			var sf tournament.StandingsFile
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &sf); err != nil {
				t.Fatal(err)
			}
			sf.Standings[3].Points += 3
			if data, err = json.Marshal(sf); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, verify.Options{}, "standings.json: row 4", "field points")
	})
	t.Run("a log entry changed", func(t *testing.T) {
		tamper(t, func(dir string) {
			path := filepath.Join(dir, "log", "tile", "entries", "000.p/"+fmt.Sprint(size))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.Replace(data, []byte(`"winner":"white"`), []byte(`"winner":"black"`), 1)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, verify.Options{}, "log/tile/entries", "an entry was changed, dropped or added")
	})
	t.Run("a log signed by another key", func(t *testing.T) {
		_, other, _ := ed25519.GenerateKey(nil)
		_, otherKey, err := eventlog.Keys(e.store.LogOrigin(), other)
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, func(string) {}, verify.Options{Key: otherKey}, "log/checkpoint", "signature")
	})
	t.Run("a bundle rolled back", func(t *testing.T) {
		// An older checkpoint of the same log (its first entries, before
		// the last games and the end) with the standings its games make:
		// every pairing it holds has its game, but the final's end is not
		// there.
		signer, _, err := e.store.LogKeys()
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, func(dir string) {
			older := forkedLog(t, signer, entries[:size-3])
			if err := os.RemoveAll(filepath.Join(dir, "log")); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(filepath.Join(dir, "log"), os.DirFS(older)); err != nil {
				t.Fatal(err)
			}
			r, _ := verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key, Partial: true})
			if r == nil {
				t.Fatal("the older log does not read")
			}
			data, err := json.Marshal(tournament.StandingsFile{Standings: r.Standings})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, event.BundleStandings), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, verify.Options{}, "the log does not say the final ended")
	})
	t.Run("a checkpoint forked", func(t *testing.T) {
		// The organizer's own key signs a log in which the last game's
		// winner is another: it does not extend the checkpoint a team
		// kept.
		signer, _, err := e.store.LogKeys()
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, func(dir string) {
			// (The last game is the entry before the end.)
			last := bytes.Replace(entries[size-2], []byte(`"reason":"`), []byte(`"reason":"forfeit, `), 1)
			fork := forkedLog(t, signer, append(append(append([][]byte{}, entries[:size-2]...), last), entries[size-1]))
			if err := os.RemoveAll(filepath.Join(dir, "log")); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(filepath.Join(dir, "log"), os.DirFS(fork)); err != nil {
				t.Fatal(err)
			}
		}, verify.Options{Since: [][]byte{original}}, "does not extend", "forked")
	})
	t.Run("every kept checkpoint is checked, a game's proof as well", func(t *testing.T) {
		// A team's proof of its game carries the checkpoint it was proven
		// against: kept, it is a checkpoint like another. A fork shown to
		// one team is caught whichever --since it comes as.
		proof, ok, err := e.store.LogProofOf(ctx, games[1].Dir)
		if err != nil || !ok {
			t.Fatalf("a game's proof: %v %v", ok, err)
		}
		if _, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key, Since: [][]byte{original, proof}}); err != nil {
			t.Errorf("the published log against a checkpoint and a proof it extends: %v", err)
		}
		signer, _, err := e.store.LogKeys()
		if err != nil {
			t.Fatal(err)
		}
		other := bytes.Replace(entries[size-2], []byte(`"reason":"`), []byte(`"reason":"forfeit, `), 1)
		fork, err := os.ReadFile(filepath.Join(forkedLog(t, signer, append(append([][]byte{}, entries[:size-2]...), other)), "checkpoint"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key, Since: [][]byte{proof, fork}})
		if err == nil || !strings.Contains(err.Error(), "older checkpoint 2 of 2: ") || !strings.Contains(err.Error(), "forked or rewritten") {
			t.Errorf("a second --since that the log does not extend: %v", err)
		}
	})
}

// logEntries reads a bundle's entries from its entry tiles.
func logEntries(t *testing.T, bundle string, size int64) [][]byte {
	t.Helper()
	var out [][]byte
	for _, p := range eventlog.Tiles(size) {
		if !strings.HasPrefix(p, "tile/entries/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(bundle, "log", filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		for len(data) > 0 {
			n := int(data[0])<<8 | int(data[1])
			out = append(out, data[2:2+n])
			data = data[2+n:]
		}
	}
	return out
}

// forkedLog is a log of entries signed by signer, written as a bundle's
// log directory.
func forkedLog(t *testing.T, signer eventlog.Signer, entries [][]byte) string {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "fork.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(eventlog.Schema); err != nil {
		t.Fatal(err)
	}
	for i, data := range entries {
		if _, _, err := eventlog.Append(ctx, db, fmt.Sprint(i), data); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := eventlog.Sign(ctx, db, signer, "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := eventlog.WriteStatic(ctx, db, int64(len(entries)), signed, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// resign changes a transcript's result and signs its footer again, with
// a key of its own.
func resign(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	footer := lines[len(lines)-1]
	i := bytes.LastIndex(footer, []byte(`,"signature":`))
	if i < 0 {
		t.Fatalf("the footer is not signed: %s", footer)
	}
	body := append(bytes.Replace(footer[:i], []byte(`"winner":"`), []byte(`"winner":"x`), 1), '}')
	pub, key, _ := ed25519.GenerateKey(nil)
	sig := ed25519.Sign(key, body)
	lines[len(lines)-1] = append(body[:len(body)-1], []byte(fmt.Sprintf(`,"signature":{"alg":"ed25519","key":"%s","sig":"%s"}}`, hex.EncodeToString(pub), hex.EncodeToString(sig)))...)
	if err := os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A game recorded whose entry a crash cut off is logged at the next sync,
// once, however many processes sync at once (the server playing the final,
// arena event publish beside it): the log stays one log, its checkpoint
// verifies, and the published final holds.
func TestTheFinalsLogCatchesUpOnceWhoeverSyncs(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	if b := e.finalEnded(t); b.Run.Error != "" {
		t.Fatalf("the final: %+v", b)
	}
	_, size, err := e.store.FinalLogCheckpoint(ctx)
	if err != nil || size != 1+3+6+6+1 {
		t.Fatalf("the log holds %d entries (%v), want 17 (the end last)", size, err)
	}
	// The last game's entry and the end lost, as if the server died
	// between the game's record and its entry.
	db, err := sqlitedb.Open(filepath.Join(e.dir, event.DBFile), "_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM log_entries WHERE n >= ?`, `DELETE FROM log_hashes WHERE i >= ?`, `DELETE FROM log_checkpoints WHERE size > ?`} {
		arg := size - 2
		if strings.Contains(q, "log_hashes") {
			arg = tlog.StoredHashCount(size - 2)
		}
		if _, err := db.ExecContext(ctx, q, arg); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	stores := []*event.Store{e.store}
	for range 3 {
		st, err := event.Open(e.dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores = append(stores, st)
	}
	errs := make(chan error, len(stores))
	for _, st := range stores {
		go func() { errs <- st.SyncFinalLog(ctx) }()
	}
	for range stores {
		if err := <-errs; err != nil {
			t.Errorf("a sync beside others: %v", err)
		}
	}
	if _, got, err := e.store.FinalLogCheckpoint(ctx); err != nil || got != size {
		t.Fatalf("after the syncs the log holds %d entries (%v), want %d", got, err, size)
	}
	_, key, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	if _, err := e.store.PublishFinal(ctx, bundle); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key}); err != nil {
		t.Errorf("the log caught up does not verify: %v", err)
	}
}

// Behind [log] ladder, every ladder game joins the event's log as it is
// recorded, before the final; the published log holds them, each checked
// against its transcript, beside the final's games. A scrimmage's games
// never join it: no entry, tile or file of the bundle holds them.
func TestLadderGamesJoinTheLogBehindTheSwitch(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[rules]\nmaxPlies = \"20\"\n[log]\nladder = true\n")
	if !e.server.Config.Log.Ladder {
		t.Fatal("[log] ladder = true is not read")
	}
	if _, home := callAPI(t, e.http.URL, "GET", "/", "", ""); !strings.Contains(home, "and every ladder game before it") {
		t.Error("the home page does not say the ladder's games are logged")
	}
	ctx := context.Background()
	passedUpload(t, e, e.a.ID, "./examples/greedy")
	passedUpload(t, e, e.b.ID, "./examples/random")
	// A scrimmage, which the player plays before the ladder.
	if res, out := e.do(t, http.MethodPost, "/api/v1/scrimmages", e.a.Token, strings.NewReader(`{"rival": 2}`), "application/json"); res.StatusCode != http.StatusCreated {
		t.Fatalf("the challenge: %d %s", res.StatusCode, out)
	}
	lctx, stop := context.WithCancel(ctx)
	p := ladderPlayer(t, e)
	done := make(chan error, 1)
	go func() { done <- p.Run(lctx) }()
	var ladderGames, scrimmageGames []event.Game
	for deadline := time.Now().Add(2 * time.Minute); len(ladderGames) < 4 || len(scrimmageGames) < 2; time.Sleep(100 * time.Millisecond) {
		games, err := e.store.GamesOf(ctx, e.a.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		ladderGames = slices.DeleteFunc(slices.Clone(games), func(g event.Game) bool { return g.Kind != event.LadderGame })
		scrimmageGames = slices.DeleteFunc(games, func(g event.Game) bool { return g.Kind != event.ScrimmageGame })
		if time.Now().After(deadline) {
			t.Fatalf("%d ladder games and %d of the scrimmage in 2 minutes", len(ladderGames), len(scrimmageGames))
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	games, err := e.store.GamesOf(ctx, e.a.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	ladderGames = slices.DeleteFunc(games, func(g event.Game) bool { return g.Kind != event.LadderGame })
	// Signed before the final starts.
	if signed, size, err := e.store.FinalLogCheckpoint(ctx); err != nil || signed == nil || size != int64(len(ladderGames)) {
		t.Fatalf("before the final the log holds %d entries (%v), want the %d ladder games", size, err, len(ladderGames))
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	playsFinals(t, fctx, e, nil)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	if b := e.finalEnded(t); b.Run.Error != "" {
		t.Fatalf("the final: %+v", b)
	}
	_, key, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	if _, err := e.store.PublishFinal(ctx, bundle); err != nil {
		t.Fatal(err)
	}
	r, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key})
	if err != nil {
		t.Fatalf("the published log with the ladder's games: %v", err)
	}
	if r.Others != len(ladderGames) || r.Games != 2 {
		t.Errorf("verified %d ladder games and %d of the final's, want %d and 2", r.Others, r.Games, len(ladderGames))
	}
	// A ladder game's page links its inclusion proof, which holds; a
	// scrimmage's has none.
	if _, page := callAPI(t, e.http.URL, "GET", fmt.Sprintf("/games/%d", ladderGames[0].ID), e.a.Token, ""); !strings.Contains(page, `id="proof"`) {
		t.Error("a logged ladder game's page links no inclusion proof")
	}
	res, proof := e.do(t, http.MethodGet, fmt.Sprintf("/games/%d/proof", ladderGames[0].ID), e.a.Token, nil, "")
	if pe, _, err := verify.Proof([]byte(proof), key); res.StatusCode != http.StatusOK || err != nil || pe.Kind != event.LogLadder || pe.Game.ID != int(ladderGames[0].ID) {
		t.Errorf("a ladder game's proof: %d %v %+v", res.StatusCode, err, pe)
	}
	if res, out := e.do(t, http.MethodGet, fmt.Sprintf("/games/%d/proof", scrimmageGames[0].ID), e.a.Token, nil, ""); res.StatusCode != http.StatusNotFound || !strings.Contains(out, "it logs the final") {
		t.Errorf("a scrimmage's proof: %d %s", res.StatusCode, out)
	}
	// The scrimmage's games are in no tile the server serves, and in no
	// file of the bundle; the ladder's are.
	_, size, err := e.store.FinalLogCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var served strings.Builder
	for _, tile := range eventlog.Tiles(size) {
		res, data := callAPI(t, e.http.URL, "GET", "/log/"+tile, "", "")
		if res != http.StatusOK {
			t.Fatalf("/log/%s: %d %s", tile, res, data)
		}
		served.WriteString(data)
	}
	var published strings.Builder
	if err := filepath.WalkDir(bundle, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(bundle, path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.ToSlash(rel), event.ScrimmagesDir+"/") {
			t.Errorf("the bundle holds %s", rel)
		}
		data, err := os.ReadFile(path)
		published.WriteString(rel + "\n" + string(data))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, g := range append(slices.Clone(scrimmageGames), ladderGames...) {
		dir := `"dir":"` + filepath.ToSlash(g.Dir) + `"`
		want := g.Kind == event.LadderGame
		if strings.Contains(served.String(), dir) != want || strings.Contains(published.String(), dir) != want {
			t.Errorf("%s game %d (%s): in the tiles served %v, in the bundle %v; want %v", g.Kind, g.ID, g.Dir,
				strings.Contains(served.String(), dir), strings.Contains(published.String(), dir), want)
		}
	}
	if strings.Contains(served.String(), `"kind":"scrimmage"`) {
		t.Error("the log holds a scrimmage entry")
	}
	// A ladder game's transcript changed is caught as the final's are.
	g := ladderGames[0]
	path := filepath.Join(bundle, filepath.FromSlash(g.Dir), transcript.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, data[:10]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: key}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ladder game %d: field public", g.ID)) {
		t.Errorf("a ladder game's transcript changed: %v", err)
	}
}
