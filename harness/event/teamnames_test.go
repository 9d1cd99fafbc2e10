package event

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/harness/tournament"
)

// The standings of an event's final read its teams as the event names them
// now: a team renamed after the final started is under its new name. Any
// other tournament's rows are left as they are.
func TestTheFinalsStandingsNameTeamsAsTheyAreNow(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	team, err := st.AddTeam(ctx, "Old Name", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Rename(ctx, team.ID, "New Name"); err != nil {
		t.Fatal(err)
	}
	rows := []tournament.Row{{Rank: 1, Name: team.BotName, Team: "Old Name"}, {Rank: 2, Name: "builtin", Team: "builtin"}}
	got, err := WithTeamNames(ctx, filepath.Join(st.Dir, FinalDir), rows)
	if err != nil || got[0].Team != "New Name" || got[1].Team != "builtin" || rows[0].Team != "Old Name" {
		t.Errorf("the final's rows: %+v (%v); the rows given: %+v", got, err, rows)
	}
	other, err := WithTeamNames(ctx, filepath.Join(t.TempDir(), "cup"), rows)
	if err != nil || other[0].Team != "Old Name" {
		t.Errorf("another tournament's rows: %+v (%v)", other, err)
	}
}
