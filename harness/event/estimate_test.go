package event

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
	// Before any team plays, no format plays a game (a bracket's count
	// was -2).
	none, err := st.FinalEstimate(context.Background(), Shape{GamesPerPair: 2}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range none.Formats {
		if f.Games != 0 {
			t.Errorf("%s of no team: %d games", f.Format, f.Games)
		}
	}
	// The ladder's top 64 play a Swiss final: the chosen one, of 64 teams.
	est, err = st.FinalEstimate(context.Background(), Shape{Format: tournament.Swiss, Top: 64, GamesPerPair: 2}, 300, 4)
	if err != nil || est.Teams != 64 || est.Chosen().Games != 8*32*2 {
		t.Errorf("the ladder's top 64 in a Swiss final: %+v, %v", est, err)
	}
}

// The estimate's pace is the games the final plays: the ladder's and the
// final's, not validations against the built-in random bot (shorter) nor
// scrimmages; an event that played none of them takes every game.
func TestTheEstimatesPaceIsOfTheGamesTheFinalPlays(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	n := 0
	add := func(kind string, ms float64) {
		t.Helper()
		n++
		if _, err := st.w.ExecContext(ctx, `INSERT INTO games (kind, white_name, black_name, white_sha256, black_sha256, dir, winner, reason, plies, finished, duration_ms)
			VALUES (?, 'a', 'b', 'x', 'y', ?, 'white', 'r', 1, '', ?)`, kind, fmt.Sprintf("%s/%d", kind, n), ms); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		add(ValidationGame, 3900)
	}
	est, err := st.FinalEstimate(ctx, Shape{GamesPerPair: 2}, 10, 1)
	if err != nil || est.MeanGame != 3900*time.Millisecond || est.Sample != 3 || !strings.Contains(est.Intro(), "the mean of the last 3 games played here") {
		t.Fatalf("with validations alone: %v %d %q %v", est.MeanGame, est.Sample, est.Intro(), err)
	}
	add(LadderGame, 10000)
	add(ScrimmageGame, 100)
	add(FinalGame, 11000)
	add(ValidationGame, 1)
	est, err = st.FinalEstimate(ctx, Shape{GamesPerPair: 2}, 10, 1)
	if err != nil || est.MeanGame != 10500*time.Millisecond || est.Sample != 2 || !strings.Contains(est.Intro(), "the mean of the last 2 ladder and final games played here") {
		t.Fatalf("with ladder and final games: %v %d %q %v", est.MeanGame, est.Sample, est.Intro(), err)
	}
}
