package event

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/tournament"
)

// What each format plays, by arithmetic alone: a 300-team final, 2 games a
// pair.
func TestTheEstimateOfEachFormat(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	est, err := st.FinalEstimate(context.Background(), Shape{GamesPerPair: 2}, 300, 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range est.Formats {
		got = append(got, fmt.Sprintf("%s: %s %d", f.Words, f.Bound, f.Games))
	}
	want := []string{"round robin:  89700", "swiss, 11 rounds:  3300", "knockout: at least 598", "double elimination: at least 1196",
		"stages: a Swiss qualifier of 11 rounds, then its top 16 in a double elimination: at least 3360", "rating, where the ranks are least sure: at most 6600"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the estimate of 300 teams:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := est.Chosen(); c.Format != tournament.RoundRobin {
		t.Errorf("the chosen format %q, want the round robin", c.Format)
	}
	// The ladder's top 64 play a Swiss final: the chosen one, of 64 teams.
	est, err = st.FinalEstimate(context.Background(), Shape{Format: tournament.Swiss, Top: 64, GamesPerPair: 2}, 300, 4)
	if err != nil || est.Teams != 64 || est.Chosen().Games != 8*32*2 {
		t.Errorf("the ladder's top 64 in a Swiss final: %+v, %v", est, err)
	}
}
