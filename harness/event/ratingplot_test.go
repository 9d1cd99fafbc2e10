package event

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// A team's rating plot is kept as each pair is recorded, and reads as its
// history thinned: a history of more pairs than a plot draws, across a new
// version, and in an event opened again after plots were first kept. A
// plot kept for another number of points or unreadable is read from the
// history instead.
func TestARatingPlotIsKeptAsEachPairIsRecorded(t *testing.T) {
	t.Parallel()
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 50\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	c, _ := st.AddTeam(ctx, "Gamma", "", "")
	subA, subB := passed(t, st, cfg, a.ID, "a.py"), passed(t, st, cfg, b.ID, "b.py")
	// kept is team's plot as its row holds it (nil: no row).
	kept := func(st *Store, team int64) []RatingPoint {
		t.Helper()
		var most int
		var points []byte
		if err := st.w.QueryRowContext(ctx, `SELECT most, points FROM rating_plots WHERE team_id = ?`, team).Scan(&most, &points); err != nil {
			t.Fatalf("team %d's kept plot: %v", team, err)
		}
		pts, err := decodeRatingPoints(points)
		if err != nil || most != RatingPlotPoints {
			t.Fatalf("team %d's kept plot, of %d points: %v", team, most, err)
		}
		return pts
	}
	// check: each team's plot is its history thinned, as kept and as read.
	check := func(st *Store, when string, teams ...int64) {
		t.Helper()
		for _, team := range teams {
			history, err := st.RatingHistory(ctx, team, RatingPlotPoints)
			if err != nil {
				t.Fatal(err)
			}
			plot, err := st.RatingPlot(ctx, team)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(plot, history) || !slices.Equal(kept(st, team), history) {
				t.Fatalf("%s: team %d's plot %v, kept %v, want its history %v", when, team, plot, kept(st, team), history)
			}
		}
	}
	// An earlier history of twice what a plot draws, written as rows
	// (pairs numbered below the ladder's), then pairs recorded by the
	// ladder, Alpha's third on a new version: each keeps the thinned
	// plot of the whole history.
	earlier := 2 * RatingPlotPoints
	tx, err := st.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= earlier; k++ {
		for _, side := range []struct {
			team, sub int64
			rating    float64
		}{{a.ID, subA.ID, 1500 + float64(k)}, {b.ID, subB.ID, 1500 - float64(k)}} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO rating_history (team_id, pair, submission, rating, deviation, at) VALUES (?, ?, ?, ?, 50, '')`,
				side.team, k-earlier-1, side.sub, side.rating); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 6; n++ {
		if n == 3 {
			subA = passed(t, st, cfg, a.ID, "a2.py")
		}
		pair := startFirstPair(t, st)
		sideA, sideB := Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID}
		games := []Game{{White: sideA, Black: sideB, Winner: []string{"white", "black", "draw"}[n%3]}, {White: sideB, Black: sideA, Winner: "black"}}
		if _, err := st.FinishLadderPair(ctx, pair, games); err != nil {
			t.Fatal(err)
		}
		check(st, fmt.Sprintf("after pair %d", n), a.ID, b.ID)
	}
	plot := kept(st, a.ID)
	if len(plot) < RatingPlotPoints/2 || len(plot) > RatingPlotPoints+3 || plot[len(plot)-1].Pair != earlier+6 {
		t.Errorf("Alpha's plot of %d pairs: %d points, the last pair %d", earlier+6, len(plot), plot[len(plot)-1].Pair)
	}
	if !slices.ContainsFunc(plot, func(p RatingPoint) bool { return p.Pair == earlier+3 && p.Submission == subA.ID }) {
		t.Errorf("Alpha's plot leaves out its new version's first pair")
	}
	if plot, err := st.RatingPlot(ctx, c.ID); err != nil || plot != nil {
		t.Errorf("Gamma, never rated: a plot of %v (%v)", plot, err)
	}

	// A plot kept for another number of points, or unreadable, is read
	// from the history.
	history, _ := st.RatingHistory(ctx, a.ID, RatingPlotPoints)
	for _, spoil := range []string{
		`UPDATE rating_plots SET most = 7, points = (SELECT points FROM rating_plots WHERE team_id = ` + strconv.FormatInt(b.ID, 10) + `)`,
		`UPDATE rating_plots SET most = ` + strconv.Itoa(RatingPlotPoints) + `, points = x'ff'`,
		`UPDATE rating_plots SET points = substr(points, 1, 30)`,
	} {
		execAll(t, st.w, spoil)
		if plot, err := st.RatingPlot(ctx, a.ID); err != nil || !slices.Equal(plot, history) {
			t.Errorf("after %s: a plot of %d points (%v), want the history's %d", spoil, len(plot), err, len(history))
		}
	}

	// An event from before plots were kept (and before migrations were
	// numbered) keeps them when opened.
	execAll(t, st.w, `DROP TABLE rating_plots`, `PRAGMA user_version = 0`)
	check(reopen(t, st.Dir), "opened again", a.ID, b.ID)
}
