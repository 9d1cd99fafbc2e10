package event

import (
	"context"
	"math"
	"strings"
	"testing"
)

// passed stores an upload of team and marks it passed.
func passed(t *testing.T, st *Store, cfg Config, team int64, name string) Submission {
	t.Helper()
	ctx := context.Background()
	sub, err := st.AddSubmission(ctx, cfg, team, name, strings.NewReader("bytes of "+name))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetState(ctx, sub.ID, Passed, ""); err != nil {
		t.Fatal(err)
	}
	return sub
}

// startFirstPair starts the ladder's pair of its first two entries.
func startFirstPair(t *testing.T, st *Store) LadderPair {
	t.Helper()
	ctx := context.Background()
	entries, err := st.LadderEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := st.StartLadderPair(ctx, entries[0], entries[1], "")
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func TestLadderPairsAreRatedAndANewVersionKeepsItsMean(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 50\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	c, _ := st.AddTeam(ctx, "Gamma", "", "")
	subA := passed(t, st, cfg, a.ID, "a.py")
	subB := passed(t, st, cfg, b.ID, "b.py")
	entries, err := st.LadderEntries(ctx)
	if err != nil || len(entries) != 2 {
		t.Fatalf("entries: %v %v, want Alpha and Beta (Gamma has nothing passed)", entries, err)
	}
	pair, err := st.StartLadderPair(ctx, entries[0], entries[1], "")
	if err != nil {
		t.Fatal(err)
	}
	sideA, sideB := Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID}
	// Alpha wins as white and as black (one of them because Beta faulted:
	// a fault is a loss, never a draw).
	games := []Game{{White: sideA, Black: sideB, Winner: "white"}, {White: sideB, Black: sideA, Winner: "black"}}
	if _, err := st.FinishLadderPair(ctx, pair, games); err != nil {
		t.Fatal(err)
	}
	table, err := st.Ladder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 2 || table[0].Name != "Alpha" || table[0].Games != 2 || table[0].Rating.Rating <= 1500 || table[1].Rating.Rating >= 1500 {
		t.Fatalf("after two wins: %+v", table)
	}
	if math.Abs((table[0].Rating.Rating-1500)+(table[1].Rating.Rating-1500)) > 1e-6 {
		t.Errorf("equal players' changes are not opposite: %+v", table)
	}
	if pairs, _ := st.PlayingLadderPairs(ctx); len(pairs) != 0 {
		t.Errorf("a finished pair is still playing: %v", pairs)
	}
	entries, _ = st.LadderEntries(ctx)
	for _, e := range entries {
		if e.LastPlayed.IsZero() || (e.Team == a.ID && e.LastOpponent != b.ID) {
			t.Errorf("entry %+v does not know its last game", e)
		}
	}
	// A new version of Alpha: the same mean, a new player's deviation.
	before := table[0].Rating
	passed(t, st, cfg, a.ID, "a2.py")
	table, _ = st.Ladder(ctx)
	if table[0].Name != "Alpha" || table[0].Rating.Rating != before.Rating || table[0].Rating.Deviation != 350 {
		t.Errorf("after a new version: %+v, want rating %.2f with deviation 350", table[0].Rating, before.Rating)
	}
	// A pair the host could not play (no game) rates nobody.
	passed(t, st, cfg, c.ID, "c.py")
	entries, _ = st.LadderEntries(ctx)
	var ec int
	for i, e := range entries {
		if e.Team == c.ID {
			ec = i
		}
	}
	pair, _ = st.StartLadderPair(ctx, entries[(ec+1)%len(entries)], entries[ec], "")
	if _, err := st.FinishLadderPair(ctx, pair, nil); err != nil {
		t.Fatal(err)
	}
	table, _ = st.Ladder(ctx)
	for _, s := range table {
		if s.Name == "Gamma" && (s.Games != 0 || s.Rating.Rating != 1500) {
			t.Errorf("an unplayed pair rated Gamma: %+v", s)
		}
	}
}
