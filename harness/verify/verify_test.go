package verify_test

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/harness/verify/verifytest"
)

// bundle writes a bundle of these entries, its log signed by a new key,
// and returns its directory and the key.
func bundle(t *testing.T, entries ...event.LogEntry) (string, string) {
	t.Helper()
	dir, key, _ := signedBundle(t, entries...)
	return dir, key
}

// signedBundle is bundle, with the log's signer as well.
func signedBundle(t *testing.T, entries ...event.LogEntry) (string, string, note.Signer) {
	t.Helper()
	return verifytest.Bundle(t, "arena.example/hostile", entries...)
}

// A log signed by its own key can still say anything: entries out of
// order, a game of no pairing or twice, players that are not there, a game
// whose directory leads out of the bundle. Each is named by its entry and
// field, and nothing outside the bundle is read.
func TestAHostileLogIsRefusedEntryByEntry(t *testing.T) {
	t.Parallel()
	two := 2
	zero, one := 0, 1
	cfg := &tournament.Config{Format: tournament.RoundRobin, Scoring: tournament.DefaultScoring()}
	players := []event.LogEntry{
		{Kind: event.LogFinal, Config: cfg, Bots: two},
		{Kind: event.LogPlayer, Seed: &zero, Player: &tournament.BotEntry{Name: "a", SHA256: "aa"}},
		{Kind: event.LogPlayer, Seed: &one, Player: &tournament.BotEntry{Name: "b", SHA256: "bb"}},
	}
	pairing := event.LogEntry{Kind: event.LogPairing, Pairing: &tournament.Game{ID: 1, White: 0, Black: 1, Seed: 7}}
	game := func(id int, dir string) event.LogEntry {
		return event.LogEntry{Kind: event.LogGame, Game: &event.LoggedGame{ID: id, White: "aa", Black: "bb", Seed: 7, Winner: "white", Dir: dir}}
	}
	for _, c := range []struct {
		name    string
		entries []event.LogEntry
		want    []string
	}{
		{"a player first", append([]event.LogEntry{players[1]}, players...), []string{"log entry 0: field kind"}},
		{"a game out of the bundle", append(append([]event.LogEntry{}, players...), pairing, game(1, "../../../etc")), []string{"log entry 4: game 1: field dir"}},
		{"a game of no pairing", append(append([]event.LogEntry{}, players...), game(9, "final/games/9")), []string{"log entry 3: game 9: field id: no pairing"}},
		{"a pairing's game twice", append(append([]event.LogEntry{}, players...), pairing, game(1, "final/games/1"), game(1, "final/games/1")), []string{"log entry 5: game 1: field id: its game was logged already"}},
		{"a pairing of a player not there", append(append([]event.LogEntry{}, players...), event.LogEntry{Kind: event.LogPairing, Pairing: &tournament.Game{ID: 2, White: 0, Black: 5}}), []string{"log entry 3: pairing 2: fields white, black"}},
		{"a game of other players", append(append([]event.LogEntry{}, players...), pairing, event.LogEntry{Kind: event.LogGame, Game: &event.LoggedGame{ID: 1, White: "bb", Black: "aa", Seed: 7, Dir: "g"}}), []string{"log entry 4: game 1: fields white, black"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, key := bundle(t, c.entries...)
			_, err := verify.Bundle(context.Background(), verify.Dir(dir), verify.Options{Key: key})
			if err == nil {
				t.Fatal("the hostile log verifies")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("verify says %q, not %q", err, w)
				}
			}
		})
	}
}
