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

// The estimate plays each format out as the games here say the final's
// go: three teams whose every game here white won split every pair of a
// round robin, end level on everything and play off first place, which
// the estimate foresees (more games, more time); the same teams whose
// better one won every game here play the schedule alone, its time a
// game's for each of its games at one at a time.
func TestTheEstimateForeseesAPlayoffFromTheGamesHere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		winner  func(white, black int) string
		playoff bool
	}{
		{"white wins", func(int, int) string { return "white" }, true},
		{"the first team wins", func(white, black int) string { return map[bool]string{true: "white", false: "black"}[white < black] }, false},
	} {
		st := newStore(t)
		ctx := context.Background()
		cfg := DefaultConfig("codeclash")
		var teams, subs []int64
		for _, name := range []string{"Ant", "Bee", "Cat"} {
			team, err := st.AddTeam(ctx, name, "", "")
			if err != nil {
				t.Fatal(err)
			}
			teams, subs = append(teams, team.ID), append(subs, passed(t, st, cfg, team.ID, name+".py").ID)
		}
		n := 0
		for w := range 3 {
			for b := range 3 {
				if w == b {
					continue
				}
				n++
				if _, err := st.w.ExecContext(ctx, `INSERT INTO games (kind, white_team, black_team, white_submission, black_submission, white_name, black_name,
					white_sha256, black_sha256, dir, winner, reason, plies, finished, duration_ms, slot_ms) VALUES (?, ?, ?, ?, ?, 'a', 'b', 'x', 'y', ?, ?, 'r', 1, '', 900, 1000)`,
					LadderGame, teams[w], teams[b], subs[w], subs[b], fmt.Sprintf("ladder/%d", n), tc.winner(w, b)); err != nil {
					t.Fatal(err)
				}
			}
		}
		est, err := st.FinalEstimate(ctx, Shape{GamesPerPair: 2}, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		rr := est.Chosen()
		if est.MeanGame != time.Second || rr.Games != 6 {
			t.Fatalf("%s: a game %v (want its slot's 1 s), %d games planned (want 6)", tc.name, est.MeanGame, rr.Games)
		}
		// One at a time, every game 1 s: the time is the games played.
		if rr.Duration < time.Duration(rr.Played)*time.Second*9/10 || rr.Duration > time.Duration(rr.Played)*time.Second*11/10 {
			t.Errorf("%s: %d games foreseen in %v", tc.name, rr.Played, rr.Duration)
		}
		if foreseen := rr.Played >= 9; foreseen != tc.playoff {
			t.Errorf("%s: %d games foreseen, a playoff foreseen %v, want %v: %s", tc.name, rr.Played, foreseen, tc.playoff, rr)
		}
		if tc.playoff && (!strings.Contains(rr.String(), "as the games here go") || rr.Low >= rr.High) {
			t.Errorf("%s: the estimate says %q (%v to %v)", tc.name, rr, rr.Low, rr.High)
		}
	}
}
