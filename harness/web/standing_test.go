package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/ranks"
	"github.com/arenabots/arena/harness/tournament"
)

// Where a team stands is read off the board it may see: its place and the
// places its strength may hold, the cut, its next match; none on a frozen
// board, and nothing for a team out of the final.
func TestWhereATeamStandsInTheFinal(t *testing.T) {
	t.Parallel()
	row := func(team string, rank, low, high int) event.BoardRow {
		return event.BoardRow{Row: tournament.Row{Rank: rank, RankSet: ranks.Set{Low: low, High: high}}, Team: team}
	}
	b := &event.Board{Run: event.FinalRun{Started: time.Now()}, Stage: "stages: the qualifier's round 3 of 5; its top 2 go on to a knockout", Cut: 2,
		Standings: []event.BoardRow{row("Alpha", 1, 1, 2), row("Beta", 2, 1, 3), row("Gamma", 3, 2, 3)},
		Upcoming:  []event.BoardPairing{{Round: 4, White: "Gamma", Black: "Alpha", Left: 2}}}
	a := standingOf(b, "Alpha")
	if a == nil || a.Place() != "1st" || a.Of != 3 || a.RankSet != "1st to 2nd" || !a.In || a.Next == nil || a.Rival != "Gamma" || a.Next.Round != 4 {
		t.Errorf("Alpha: %+v", a)
	}
	if g := standingOf(b, "Gamma"); g == nil || g.In || g.Rival != "Alpha" {
		t.Errorf("Gamma: %+v", g)
	}
	if be := standingOf(b, "Beta"); be == nil || !be.In || be.Next != nil || be.Level != 0 {
		t.Errorf("Beta, with no match paired: %+v", be)
	}
	if standingOf(b, "Delta") != nil || standingOf(&event.Board{}, "Alpha") != nil || standingOf(nil, "Alpha") != nil {
		t.Error("a team out of the final, or a final not started, has a standing")
	}
	b.Standings[1].Rank = 1
	if a := standingOf(b, "Alpha"); a.Level != 1 {
		t.Errorf("Alpha level with Beta: %+v", a)
	}
	b.FrozenAt, b.Upcoming = time.Now(), nil
	if f := standingOf(b, "Alpha"); f == nil || !f.Frozen || f.Over {
		t.Errorf("on a frozen board: %+v", f)
	}
}

// A team knocked out, or left out of a stages final's second stage, is told
// so in words, not that its next match is not paired yet.
func TestATeamOutOfTheFinalIsToldSo(t *testing.T) {
	t.Parallel()
	b := &event.Board{Run: event.FinalRun{Started: time.Now()}, Stage: "stages: the second stage, a knockout of the qualifier's top 2",
		Standings: []event.BoardRow{{Row: tournament.Row{Rank: 1}, Team: "Alpha"}, {Row: tournament.Row{Rank: 2}, Team: "Beta"}, {Row: tournament.Row{Rank: 3, Out: true}, Team: "Gamma"}}}
	for team, out := range map[string]bool{"Gamma": true, "Beta": false} {
		var buf bytes.Buffer
		if err := pages["home"].ExecuteTemplate(&buf, "standing", standingOf(b, team)); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		if strings.Contains(page, "out of the final") != out || strings.Contains(page, "No match of yours is paired now") == out {
			t.Errorf("%s (out: %v) reads:\n%s", team, out, page)
		}
	}
}
