package event

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/tournament"
)

// The games played again are counted by kind and by cause: a busy host's
// tries, and the tries of a game that ended with no result otherwise (its
// sandbox failed) once the game is done, a refused result not among
// them; a tournament recorded again (resumed) is counted once.
func TestGamesPlayedAgainAreCountedByCause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	recs := []tournament.Record{
		{Status: tournament.Done, Tries: 2, HostBusy: 1},              // one busy host, one lost box
		{Status: tournament.Done, Tries: 2, Rejected: 1},              // one refused result, one lost box
		{Status: tournament.Pending, Tries: 1},                        // not played yet: not counted
		{Status: tournament.Done, Tries: 3, HostBusy: 2, Rejected: 1}, // neither
	}
	for range 2 {
		if err := s.HostReplays(ctx, LadderGame, filepath.Join(s.Dir, "ladder", "1"), recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.HostReplays(ctx, FinalGame, filepath.Join(s.Dir, FinalDir), recs[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := s.HostReplayCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[LadderGame] != (Replays{Busy: 3, Faults: 2}) || got[FinalGame] != (Replays{Busy: 1, Faults: 1}) || got[ScrimmageGame] != (Replays{}) {
		t.Errorf("games played again: %+v; want the ladder's 3 for a busy host and 2 for a sandbox, the final's 1 and 1", got)
	}
}
