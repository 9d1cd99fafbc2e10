package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/harness/verify/verifytest"
)

// arena verify says what is wrong with how it was asked (exit 2) apart
// from a final that does not hold (exit 1, tested with a published final
// in harness/web): no key, a key that is not one, a bundle that is not
// there.
func TestVerifyTellsABadAskFromAFinalThatDoesNotHold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", dir}, "verify needs --key"},
		{[]string{"verify", "--key", "not-a-key", dir}, "is not a log's public key"},
		{[]string{"verify", "--key", "arena/x/final+3f3d6df1+AYqDUdhDhsJNAY6QZ4kDbQ4wIE2ywtL5QpOdsPu2i+S/", dir}, "cannot be read as a published final"},
		{[]string{"verify", "--key", "k", "--proof", dir + "/none.tlog-proof"}, "no such file"},
		{[]string{"verify", "--key", "k", "--timeout", "0s", dir}, "verify --timeout 0s"},
		{[]string{"verify", "--key", "k", "--witness", "not-a-key", dir}, "--witness: \"not-a-key\" is not a witness's key"},
		{[]string{"verify", "--key", "k", "--witness", "team-ant+1a2b3c4d+AQ==", dir}, "is not a witness's key"},
		{[]string{"verify", "--key", "k", "--quorum", "1", dir}, "--quorum 1: want at most the 0 --witness keys given"},
	} {
		code, _, stderr := runArena(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("arena %s: exit %d, %q; want %d and %q", strings.Join(c.args, " "), code, stderr, exitUsage, c.want)
		}
	}
}

// A final whose pairing lacks its game does not hold (exit 1, naming how
// many lack theirs); with --partial it holds as a final in progress and
// says how far it got.
func TestVerifyPartialSaysHowFarAFinalGot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	zero, one := 0, 1
	entries := []event.LogEntry{
		{Kind: event.LogFinal, Config: &tournament.Config{Format: tournament.RoundRobin, Scoring: tournament.DefaultScoring()}, Bots: 2},
		{Kind: event.LogPlayer, Seed: &zero, Player: &tournament.BotEntry{Name: "a", SHA256: "aa"}},
		{Kind: event.LogPlayer, Seed: &one, Player: &tournament.BotEntry{Name: "b", SHA256: "bb"}},
		{Kind: event.LogPairing, Pairing: &tournament.Game{ID: 1, White: 0, Black: 1, Seed: 1}},
	}
	dir, key, _ := verifytest.Bundle(t, "arena.example/partial", entries...)
	// The standings of no game played, as the verifier makes them.
	r, err := verify.Bundle(ctx, verify.Dir(dir), verify.Options{Key: key, Partial: true})
	var problems verify.Problems
	if r == nil || err != nil && !errors.As(err, &problems) {
		t.Fatalf("the bundle does not read: %v", err)
	}
	standings, err := json.Marshal(tournament.StandingsFile{Standings: r.Standings})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, event.BundleStandings), standings, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArena("verify", "--key", key, dir)
	if want := "1 of the 1 scheduled pairings have no game"; code != exitFailed || !strings.Contains(stderr, want) {
		t.Errorf("a final without its game: exit %d, %q; want %d and %q", code, stderr, exitFailed, want)
	}
	code, stdout, stderr := runArena("verify", "--key", key, "--partial", dir)
	if want := "partial: 0 of 1 pairings have their game"; code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("--partial: exit %d, %q %q; want %d and %q", code, stdout, stderr, exitOK, want)
	}
}
