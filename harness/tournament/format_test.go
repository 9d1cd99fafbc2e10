package tournament

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/ranks"
	"github.com/arenabots/arena/internal/golden"
)

func TestJSONKeysAreCamelCase(t *testing.T) {
	t.Parallel()
	for _, v := range []any{StandingsFile{}, Config{}, Record{}} {
		if bad := golden.BadKeys(reflect.TypeOf(v)); len(bad) > 0 {
			t.Errorf("%T: %s", v, strings.Join(bad, "; "))
		}
	}
}

// goldenState is a tournament with every value of standings.json set.
func goldenState() *State {
	direct, random, los := 4.0, 0.25, 0.8125
	return &State{
		Config: Config{Format: RoundRobin, Game: "codeclash", Seed: 2026, Scoring: Scoring{Win: 3, Draw: 1, Loss: -1}, TieBreaks: DefaultTieBreaks()},
		Summary: Summary{Total: 12, Done: 9, Unplayed: 2, Pending: 1, Standings: []Row{
			{Rank: 1, Bot: 2, Name: "greedy", Team: "Greedy & Sons", Games: 5, Wins: 3, Draws: 1, Losses: 1, Points: 9, SB: 13.5, Direct: &direct, Random: &random,
				Elo: 1563.5, EloMargin: 212.25, DecidedBy: DirectEncounter, LOS: &los, DrawRatio: 0.2, AsWhite: 3, AsBlack: 2,
				RankSet: ranks.Set{Low: 1, High: 1}, Separated: true, Buchholz: 21, BuchholzCut1: 14, Byes: 1},
			{Rank: 2, Bot: 1, Name: "random", Games: 4, Wins: 2, Draws: 3, Losses: 2, Points: 7, SB: 8, Direct: &random, Random: &direct,
				Elo: 1436.5, EloMargin: 230.75, DecidedBy: RandomDraw, ByLot: true, Out: true, LOS: &los, DrawRatio: 0.75, AsWhite: 2, AsBlack: 2,
				RankSet: ranks.Set{Low: 2, High: 2}, Buchholz: 27, BuchholzCut1: 18},
		}},
		Pairs: []PairRow{{A: "random", B: "greedy", Pentanomial: [5]int{1, 0, 2, 1, 0}, Incomplete: 1, Singles: 2, AWhite: 4, BWhite: 4}},
	}
}

func TestStandingsJSONGolden(t *testing.T) {
	t.Parallel()
	s := goldenState()
	if missing := golden.Unset(s.StandingsFile()); len(missing) > 0 {
		t.Fatalf("the golden standings leave these fields zero, so the golden file would not pin them: %v", missing)
	}
	data, err := s.StandingsJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "standings.json.golden", data, "docs/tournaments.md")
}
