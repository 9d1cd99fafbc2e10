package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/verify"
)

// hangBound is the most a check of a hostile bundle may take in these
// tests before it counts as hanging: generous, never a speed goal.
const hangBound = 30 * time.Second

// promptly runs check, failing the test if it has not returned within
// hangBound.
func promptly(t *testing.T, check func(ctx context.Context) (*verify.Result, error)) (*verify.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	type answer struct {
		r   *verify.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := check(ctx)
		done <- answer{r, err}
	}()
	select {
	case a := <-done:
		return a.r, a.err
	case <-time.After(hangBound + 5*time.Second):
		t.Fatalf("the check still runs after %v", hangBound)
		return nil, nil
	}
}

// final is a final of two players and these pairings, none played.
func final(pairings ...int) []event.LogEntry {
	zero, one := 0, 1
	cfg := &tournament.Config{Format: tournament.RoundRobin, Scoring: tournament.DefaultScoring()}
	entries := []event.LogEntry{
		{Kind: event.LogFinal, Config: cfg, Bots: 2},
		{Kind: event.LogPlayer, Seed: &zero, Player: &tournament.BotEntry{Name: "a", SHA256: "aa"}},
		{Kind: event.LogPlayer, Seed: &one, Player: &tournament.BotEntry{Name: "b", SHA256: "bb"}},
	}
	for _, id := range pairings {
		entries = append(entries, event.LogEntry{Kind: event.LogPairing, Pairing: &tournament.Game{ID: id, White: 0, Black: 1, Seed: uint64(id)}})
	}
	return entries
}

// holding writes the bundle's standings.json as its games make them,
// so that the bundle holds as a final in progress.
func holding(t *testing.T, dir, key string) {
	t.Helper()
	r, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true})
	var p verify.Problems
	if r == nil || err != nil && !errors.As(err, &p) {
		t.Fatalf("the bundle does not read: %v", err)
	}
	data, err := json.Marshal(tournament.StandingsFile{Standings: r.Standings})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, event.BundleStandings), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true}); err != nil {
		t.Fatalf("the bundle does not hold: %v", err)
	}
}

// A scheduled pairing without its game is a final that is not whole: it
// is refused, naming how many, unless it is checked as a final in
// progress, which says how far it got.
func TestAPairingWithoutItsGameIsRefusedUnlessPartial(t *testing.T) {
	t.Parallel()
	dir, key := bundle(t, final(1, 2)...)
	holding(t, dir, key)
	_, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key})
	var p verify.Problems
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "2 of the 2 scheduled pairings have no game in the log (pairing 1, 2)") {
		t.Errorf("a final without its games: %v", err)
	}
	r, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true})
	if err != nil || r.Pairings != 2 || r.Games != 0 {
		t.Errorf("checked as partial: %+v, %v; want 2 pairings, no game", r, err)
	}
}

// A link that leads out of the bundle is not followed, wherever it
// points; a link inside it reads as its target.
func TestALinkOutOfTheBundleIsNotFollowed(t *testing.T) {
	t.Parallel()
	dir, key := bundle(t, final()...)
	holding(t, dir, key)
	checkpoint := filepath.Join(dir, "log", "checkpoint")
	inside := filepath.Join(dir, "log", "kept")
	if err := os.Rename(checkpoint, inside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("kept", checkpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true}); err != nil {
		t.Errorf("a checkpoint linked inside the bundle: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "checkpoint")
	if err := os.Rename(inside, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(checkpoint); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, checkpoint); err != nil {
		t.Fatal(err)
	}
	_, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key})
	if want := "log/checkpoint cannot be read inside the bundle (a link out of it?)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a checkpoint linked out of the bundle: %v, want %q", err, want)
	}
}

// Every file is weighed before it is read: a checkpoint or a transcript
// past the most its kind may weigh is refused as such.
func TestAFileTooBigIsRefusedBeforeItIsRead(t *testing.T) {
	t.Parallel()
	game := event.LogEntry{Kind: event.LogGame, Game: &event.LoggedGame{ID: 1, White: "aa", Black: "bb", Seed: 1, Winner: "white", Dir: "final/games/1"}}
	dir, key := bundle(t, append(final(1), game)...)
	huge := filepath.Join(dir, "final", "games", "1", transcript.FileName)
	if err := os.MkdirAll(filepath.Dir(huge), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// A gigabyte that takes no room: a hole.
	if err := errors.Join(f.Truncate(1<<30), f.Close()); err != nil {
		t.Fatal(err)
	}
	_, err = verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key})
	var big *verify.TooBigError
	if err == nil || !strings.Contains(err.Error(), "final/games/1/transcript.jsonl is more than 67108864 bytes") {
		t.Errorf("a transcript of a gigabyte: %v", err)
	}
	signed, err := os.ReadFile(filepath.Join(dir, "log", "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	padded := append(signed, make([]byte, 1<<16)...)
	if err := os.WriteFile(filepath.Join(dir, "log", "checkpoint"), padded, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key})
	if !errors.As(err, &big) || big.Name != "log/checkpoint" {
		t.Errorf("a checkpoint of 64 KiB and more: %v", err)
	}
}

// A checkpoint signed by the log's key may still claim any size: a claim
// past what a bundle may hold is refused from the checkpoint alone, and
// one within it stops at the first entry bundle that is not there, never
// holding anything by the claim.
func TestAHugeClaimedLogIsRefusedFromItsClaim(t *testing.T) {
	t.Parallel()
	dir, key, signer := signedBundle(t, final()...)
	claim := func(size int64) {
		t.Helper()
		text := eventlog.Checkpoint{Origin: "arena.example/hostile", Size: size}.Text()
		signed, err := note.Sign(&note.Note{Text: text}, signer)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "log", "checkpoint"), signed, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	claim(1 << 40)
	_, err := promptly(t, func(ctx context.Context) (*verify.Result, error) {
		return verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key})
	})
	var p verify.Problems
	if !errors.As(err, &p) || !strings.Contains(err.Error(), fmt.Sprintf("a log of %d entries, more than the %d a bundle may hold", int64(1<<40), int64(verify.MaxEntries))) {
		t.Errorf("a log of 2^40 entries: %v", err)
	}
	claim(verify.MaxEntries - 1)
	_, err = promptly(t, func(ctx context.Context) (*verify.Result, error) {
		return verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key})
	})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the checkpoint signs %d entries, entries 0 on", int64(verify.MaxEntries-1))) {
		t.Errorf("a log of 2^32-1 entries, 3 there: %v", err)
	}
}

// A served bundle that drips its bytes is cut off by the whole check's
// time limit, not read a minute a file.
func TestADrippingServerIsCutOff(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	_, key := bundle(t, final()...)
	_, err := promptly(t, func(ctx context.Context) (*verify.Result, error) {
		return verify.Bundle(ctx, verify.URL(srv.URL), verify.Options{Key: key, Timeout: 500 * time.Millisecond})
	})
	var late *verify.TimeoutError
	if !errors.As(err, &late) || late.Limit != 500*time.Millisecond {
		t.Errorf("a server that drips: %v, want the check's time limit", err)
	}
}

// A served bundle's redirects are followed within its own origin only.
func TestARedirectOutOfTheOriginIsRefused(t *testing.T) {
	t.Parallel()
	dir, key := bundle(t, final()...)
	holding(t, dir, key)
	mux := http.NewServeMux()
	mux.Handle("/bundle/", http.StripPrefix("/bundle/", http.FileServer(http.Dir(dir))))
	mux.HandleFunc("/moved/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/bundle/"+strings.TrimPrefix(r.URL.Path, "/moved/"), http.StatusMovedPermanently)
	})
	home := httptest.NewServer(mux)
	defer home.Close()
	if _, err := verify.Bundle(context.Background(), verify.URL(home.URL+"/moved/"), verify.Options{Key: key, Partial: true}); err != nil {
		t.Errorf("a bundle redirected within its origin: %v", err)
	}
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, home.URL+"/bundle"+r.URL.Path, http.StatusFound)
	}))
	defer away.Close()
	_, err := verify.Bundle(context.Background(), verify.URL(away.URL), verify.Options{Key: key})
	if want := "out of the bundle's origin " + away.URL + ": refused"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a bundle redirected to another origin: %v, want %q", err, want)
	}
}

// A final that ended says so in its log, with its standings' hash: a
// bundle cut back to an older checkpoint lacks the end and is refused
// unless checked as a final in progress; standings.json other than the one
// the end signs is refused; the end must count the games before it, and
// nothing of the final comes after it.
func TestTheFinalsEndSignsItsStandingsAndARollbackIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, key := bundle(t, final()...)
	holding(t, dir, key)
	standings, err := os.ReadFile(filepath.Join(dir, event.BundleStandings))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key}); err == nil || !strings.Contains(err.Error(), "the log does not say the final ended") {
		t.Errorf("a log without its end (a rollback): %v", err)
	}
	sum := sha256.Sum256(standings)
	end := event.LogEntry{Kind: event.LogEnd, End: &event.LoggedEnd{Games: 0, Standings: hex.EncodeToString(sum[:])}}
	write := func(dir string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, event.BundleStandings), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ended, key := bundle(t, append(final(), end)...)
	write(ended, standings)
	if r, err := verify.Bundle(ctx, verify.Dir(ended), verify.Options{Key: key}); err != nil || r.End == nil {
		t.Errorf("a final that ended: %+v, %v", r, err)
	}
	write(ended, append([]byte(" "), standings...))
	if _, err := verify.Bundle(ctx, verify.Dir(ended), verify.Options{Key: key}); err == nil || !strings.Contains(err.Error(), "the log's end signs "+end.End.Standings) {
		t.Errorf("standings.json changed after the end: %v", err)
	}
	wrong := *end.End
	wrong.Games = 3
	for name, entries := range map[string][]event.LogEntry{
		"an end that counts 3 games": append(final(), event.LogEntry{Kind: event.LogEnd, End: &wrong}),
		"a pairing after the end":    append(append(final(), end), event.LogEntry{Kind: event.LogPairing, Pairing: &tournament.Game{ID: 9, White: 0, Black: 1}}),
		"two ends":                   append(final(), end, end),
	} {
		dir, key := bundle(t, entries...)
		write(dir, standings)
		_, err := verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key})
		var p verify.Problems
		if !errors.As(err, &p) || !strings.Contains(err.Error(), "field ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The hash tiles are checked against the tree the entries make: a client
// that proves an entry from them alone is not misled by a bundle that
// holds, and one changed or missing is named.
func TestTheHashTilesAreTheEntriesTree(t *testing.T) {
	t.Parallel()
	dir, key := bundle(t, final()...)
	holding(t, dir, key)
	signed, err := os.ReadFile(filepath.Join(dir, "log", "checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := eventlog.Verify(signed, key)
	if err != nil {
		t.Fatal(err)
	}
	var tile string
	for _, p := range eventlog.Tiles(c.Size) {
		if !strings.HasPrefix(p, "tile/entries/") {
			tile = filepath.Join(dir, "log", filepath.FromSlash(p))
			break
		}
	}
	data, err := os.ReadFile(tile)
	if err != nil {
		t.Fatal(err)
	}
	data[5] ^= 1
	if err := os.WriteFile(tile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true})
	if err == nil || !strings.Contains(err.Error(), "its hashes are not the entries' tree's") {
		t.Errorf("a hash tile changed: %v", err)
	}
	if err := os.Remove(tile); err != nil {
		t.Fatal(err)
	}
	_, err = verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true})
	if err == nil || !strings.Contains(err.Error(), "cannot be read") || !strings.Contains(err.Error(), "log/tile/0/") {
		t.Errorf("a hash tile missing: %v", err)
	}
}

// A file of the bundle that the log does not name (a transcript of a game
// it does not hold) is listed as unread; the bundle's own files are not.
func TestAFileTheLogDoesNotNameIsListed(t *testing.T) {
	t.Parallel()
	dir, key := bundle(t, final()...)
	holding(t, dir, key)
	extra := filepath.Join(dir, "final", "games", "9", transcript.FileName)
	if err := os.MkdirAll(filepath.Dir(extra), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key, Partial: true})
	if err != nil || r == nil || !slices.Equal(r.Unread, []string{"final/games/9/" + transcript.FileName}) {
		t.Errorf("a bundle with an unlogged transcript: %+v %v", r, err)
	}
}
