package event

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/ladder"
)

// plan is SQLite's plan of q with args, a line per step.
func plan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// newStore opens a new Code Clash event's store, closed at the test's end.
func newStore(t *testing.T) *Store {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("game = \"codeclash\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// insertGame records a game of kind between the teams and submissions
// given (nil: none) under dir: a row only, as the lists read it.
func insertGame(t *testing.T, s *Store, kind string, white, black, whiteSub, blackSub any, dir string) {
	t.Helper()
	if _, err := s.w.ExecContext(context.Background(), `INSERT INTO games (kind, white_team, black_team, white_submission, black_submission, white_name, black_name,
		white_sha256, black_sha256, dir, winner, reason, plies, finished) VALUES (?, ?, ?, ?, ?, 'a', 'b', 'x', 'y', ?, 'white', 'r', 1, '')`,
		kind, white, black, whiteSub, blackSub, dir); err != nil {
		t.Fatal(err)
	}
}

// addTeams adds a team of each name, numbered from 1.
func addTeams(t *testing.T, s *Store, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := s.AddTeam(context.Background(), name, "", ""); err != nil {
			t.Fatal(err)
		}
	}
}

// The game lists behind the pages read a team's, a kind's or a
// submission's games by an index, however many games the event holds: no
// filtered list reads every game (a full "SCAN games"), and none reads a
// game's row but the page's: the count and the choice of the page's ids
// come from covering indexes alone, the page's rows by their ids. The
// organizer's recent failures come from their own index too.
func TestGameListsUseTheirIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, c := range []struct {
		name string
		q    GameQuery
	}{{"a team's", GameQuery{Team: 7}}, {"a team's of a kind", GameQuery{Team: 7, Kind: LadderGame}}, {"a kind's", GameQuery{Kind: FinalGame}}} {
		count, list := listGamesQueries(c.q)
		for _, q := range []string{count, list} {
			if q == "" {
				continue // a team's games are counted by TeamGames
			}
			p := plan(t, s, q, c.q.Team, c.q.Kind, 50, 0)
			for _, step := range strings.Split(p, "\n") {
				if strings.Contains(step, " games ") && !strings.Contains(step, "USING COVERING INDEX") && !strings.Contains(step, "USING INTEGER PRIMARY KEY") {
					t.Errorf("%s games: a step reads rows beyond the page's: %q\n%s\n%s", c.name, step, p, q)
				}
			}
		}
	}
	if p := plan(t, s, teamGamesQuery, 7, ""); !strings.Contains(p, "SEARCH team_games USING PRIMARY KEY (team=?)") {
		t.Errorf("a team's count of games reads more than its own rows:\n%s", p)
	}
	// The organizer's recent failures: from the failures' index, newest
	// first, no sort.
	if p := plan(t, s, `SELECT `+submissionColumns+` FROM submissions s `+recentFailures, 30); !strings.Contains(p, "USING INDEX submissions_failed") || strings.Contains(p, "TEMP B-TREE") {
		t.Errorf("the recent failures read more than the newest failures:\n%s", p)
	}
	// A team's scrimmages, by the index of each side; the games of a
	// page's scrimmages, each from the directories' index.
	if p := plan(t, s, scrimmagesQuery(7), 7, 10); strings.Contains(p, "SCAN scrimmages") || !strings.Contains(p, "scrimmages_rival") {
		t.Errorf("a team's scrimmages read every scrimmage:\n%s", p)
	}
	q, args := scrimmageGamesQuery([]int64{3, 12, 4})
	if p := plan(t, s, q, args...); strings.Count(p, "USING COVERING INDEX games_dir (dir>? AND dir<?)") != 3 || strings.Contains(p, "SCAN games") {
		t.Errorf("the games of three scrimmages read more than theirs:\n%s\n%s", p, q)
	}
	// A game's disputes (its page), a team's, the open ones: each by its
	// index; only the organizer's list of every dispute reads them all.
	for _, c := range []struct {
		team, game int64
		open       bool
		index      string
	}{{3, 9, false, "disputes_game"}, {0, 9, false, "disputes_game"}, {3, 0, false, "disputes_team"}, {3, 0, true, "disputes_team"}, {0, 0, true, "disputes_state"}} {
		if p := plan(t, s, disputesQuery(c.team, c.game, c.open), c.team, c.game, boolInt(c.open)); strings.Contains(p, "SCAN disputes") || !strings.Contains(p, c.index) {
			t.Errorf("the disputes of team %d, game %d (open only: %v) read more than theirs:\n%s", c.team, c.game, c.open, p)
		}
	}
	// A team's last ladder pair: a seek in each side's index.
	if p := plan(t, s, lastPairQuery, 7); strings.Count(p, "SEARCH ladder_pairs USING COVERING INDEX ladder_pairs_") != 2 || strings.Contains(p, "SCAN ladder_pairs") {
		t.Errorf("a team's last ladder pair reads more than its sides' last:\n%s", p)
	}
	for name, q := range map[string]string{"a submission's games": gamesOfSubmissionQuery} {
		if p := plan(t, s, q, 3); strings.Contains(p, "SCAN games\n") || strings.HasSuffix(p, "SCAN games") {
			t.Errorf("%s: the plan reads every game:\n%s", name, p)
		}
	}
}

// The indexed queries pick the same games as a plain reading would: a
// submission's and a team's on either side, a kind's.
func TestGameListsPickTheirGames(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	for i, g := range [][5]any{{LadderGame, 1, 2, 10, 20}, {FinalGame, 2, 1, 20, 10}, {LadderGame, 2, 3, 20, 30}, {ScrimmageGame, 3, 1, 30, 11}} {
		insertGame(t, s, g[0].(string), g[1], g[2], g[3], g[4], fmt.Sprint("g", i))
	}
	ids := func(gs []Game) (out []int64) {
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}
	if gs, err := s.GamesOfSubmission(ctx, 10); err != nil || !slices.Equal(ids(gs), []int64{1, 2}) {
		t.Errorf("submission 10's games: %v %v", ids(gs), err)
	}
	for _, c := range []struct {
		q    GameQuery
		want []int64
	}{{GameQuery{Team: 1}, []int64{4, 2, 1}}, {GameQuery{Team: 1, Kind: LadderGame}, []int64{1}}, {GameQuery{Kind: LadderGame}, []int64{3, 1}}, {GameQuery{}, []int64{4, 3, 2, 1}}} {
		gs, total, err := s.ListGames(ctx, c.q)
		if err != nil || total != len(c.want) || !slices.Equal(ids(gs), c.want) {
			t.Errorf("%+v: %v of %d (%v), want %v", c.q, ids(gs), total, err, c.want)
		}
	}
}

// A scrimmage's games are those under its directory, and no other's (12's
// are not 1's); a team's scrimmages are those it challenged and those it
// was challenged to, newest first.
func TestScrimmagesPickTheirGames(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	for _, dir := range []string{"scrimmages/1/a", "scrimmages/12/a", "scrimmages/1/b", "scrimmages/2/a", "scrimmages/1", "scrimmages/10/a", "ladder/1/a"} {
		kind := ScrimmageGame
		if strings.HasPrefix(dir, "ladder") {
			kind = LadderGame
		}
		insertGame(t, s, kind, 1, 2, 1, 2, filepath.FromSlash(dir))
	}
	// 23 scrimmages: 1, 12 and 2 hold the games above.
	ids := []int64{1, 12, 2, 5}
	for range 8 {
		ids = append(ids, 3, 4)
	}
	byID, err := s.ScrimmageGames(ctx, ids...)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[int64][]string{}
	for id, games := range byID {
		for _, g := range games {
			dirs[id] = append(dirs[id], filepath.ToSlash(g.Dir))
		}
	}
	if want := map[int64][]string{1: {"scrimmages/1/a", "scrimmages/1/b"}, 12: {"scrimmages/12/a"}, 2: {"scrimmages/2/a"}}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("the scrimmages' games: %v, want %v", dirs, want)
	}

	addTeams(t, s, "a", "b", "c")
	for _, sc := range [][2]int64{{1, 2}, {2, 3}, {3, 1}, {1, 3}, {2, 3}} {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO scrimmages (team_id, rival_team, submission, state, created) VALUES (?, ?, 1, 'done', '')`, sc[0], sc[1]); err != nil {
			t.Fatal(err)
		}
	}
	for team, want := range map[int64][]int64{1: {4, 3, 1}, 3: {5, 4, 3, 2}, 0: {5, 4, 3, 2, 1}} {
		list, err := s.Scrimmages(ctx, team, 10)
		var got []int64
		for _, sc := range list {
			got = append(got, sc.ID)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("team %d's scrimmages: %v %v, want %v", team, got, err, want)
		}
	}
	if list, err := s.Scrimmages(ctx, 3, 2); err != nil || len(list) != 2 || list[0].ID != 5 {
		t.Errorf("team 3's newest 2 scrimmages: %v %v", list, err)
	}
}

// The teams' names a page reads are kept between requests, and read again
// once a team is added or renamed, by this store or by another process's.
func TestNamesFollowEveryChangeOfATeam(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	a, err := s.AddTeam(ctx, "Alpha", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Names(ctx); err != nil || n.ByID[a.ID] != "Alpha" {
		t.Fatalf("names %v %v", n, err)
	}
	other, err := Open(s.Dir) // as arena event teams would, beside the server
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Rename(ctx, a.ID, "Alpha Prime"); err != nil {
		t.Fatal(err)
	}
	b, err := other.AddTeam(ctx, "Beta", "", "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Names(ctx)
	if err != nil || n.ByID[a.ID] != "Alpha Prime" || n.ByID[b.ID] != "Beta" {
		t.Errorf("after another store renamed Alpha and added Beta: %v %v", n.ByID, err)
	}
	if _, err := s.Rename(ctx, b.ID, "Beta Two"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Names(ctx); n.ByID[b.ID] != "Beta Two" {
		t.Errorf("after a rename here: %v", n.ByID)
	}
}

// Each team's count of games follows every change of the games, from any
// process: a game recorded, rated or removed; an event kept before the
// counts were is counted when it is opened.
func TestTeamGamesFollowEveryChange(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	insert := func(kind string, white, black any, whiteSub, blackSub any) {
		t.Helper()
		insertGame(t, s, kind, white, black, whiteSub, blackSub, NewToken()[:16])
	}
	check := func(s *Store, when string) {
		t.Helper()
		for _, team := range []int64{1, 2, 3} {
			for _, kind := range append([]string{""}, GameKinds...) {
				var want int64
				if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM games WHERE (white_team = ?1 OR black_team = ?1) AND (?2 = '' OR kind = ?2)`, team, kind).Scan(&want); err != nil {
					t.Fatal(err)
				}
				if n, _, err := s.TeamGames(ctx, team, kind); err != nil || n != want {
					t.Errorf("%s: team %d's %q games: %d (%v), want %d", when, team, kind, n, err, want)
				}
			}
		}
	}
	insert(LadderGame, 1, 2, 10, 20)
	insert(LadderGame, 2, 3, 20, 30)
	insert(ValidationGame, 1, nil, 11, nil)
	insert(ValidationGame, nil, 1, nil, 11)
	insert(ScrimmageGame, 3, 1, 30, 10)
	check(s, "recorded")
	_, before, _ := s.TeamGames(ctx, 1, "")
	if _, err := s.w.ExecContext(ctx, `UPDATE games SET rated = 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if _, after, _ := s.TeamGames(ctx, 1, ""); after <= before {
		t.Errorf("a game rated changes nothing: %d then %d", before, after)
	}
	if err := s.ForgetValidationGames(ctx, 11); err != nil {
		t.Fatal(err)
	}
	check(s, "a validation forgotten")

	// An event from before the counts (and before migrations were
	// numbered): its games are counted on opening.
	execAll(t, s.w, `DROP TRIGGER team_games_added`, `DROP TRIGGER team_games_removed`, `DROP TRIGGER team_games_rated`, `DROP TABLE team_games`,
		`PRAGMA user_version = 0`)
	insert(FinalGame, 2, 1, 20, 10)
	check(reopen(t, s.Dir), "reopened")
}

// execAll runs each statement on db.
func execAll(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, statements ...string) {
	t.Helper()
	for _, q := range statements {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// reopen opens the event in dir again, closed when the test ends.
func reopen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// A team's rating history reads the team's own rows, numbered in the order
// they came, from its index alone.
func TestARatingHistoryReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addTeams(t, s, "a", "b")
	for pair := 1; pair <= 10; pair++ {
		for team := int64(1); team <= 2; team++ {
			addRatingPoint(t, s, team, int64(pair*3), team, float64(1000*team)+float64(pair))
		}
	}
	pts, err := s.RatingHistory(ctx, 2, 200)
	if err != nil || len(pts) != 10 {
		t.Fatalf("team 2's history: %d points (%v)", len(pts), err)
	}
	for i, p := range pts {
		if p.Pair != i+1 || p.Rating != 2001+float64(i) || p.Submission != 2 {
			t.Errorf("point %d: %+v", i, p)
		}
	}
	if p := plan(t, s, ratingHistoryQuery, 1, 1); !strings.Contains(p, "SEARCH rating_history USING COVERING INDEX rating_history_stride (team_id=? AND stride>?)") {
		t.Errorf("a team's rating history reads more than its index:\n%s", p)
	}
	if p := plan(t, s, lastRatingPointQuery, 1); !strings.Contains(p, "SEARCH rating_history USING INDEX sqlite_autoindex_rating_history_1 (team_id=?)") || strings.Contains(p, "TEMP B-TREE") {
		t.Errorf("a team's last rating point reads more than its own:\n%s", p)
	}
	// A pair recorded again keeps its number.
	if _, err := s.w.ExecContext(ctx, `INSERT INTO rating_history (team_id, pair, submission, rating, deviation, at) VALUES (2, 15, 2, 1, 50, '')
		ON CONFLICT (team_id, pair) DO UPDATE SET rating = excluded.rating`); err != nil {
		t.Fatal(err)
	}
	if pts, err := s.RatingHistory(ctx, 2, 200); err != nil || len(pts) != 10 || pts[4].Pair != 5 || pts[4].Rating != 1 {
		t.Errorf("pair 15 recorded again: %+v (%v)", pts, err)
	}
}

// addRatingPoint records team's rating after pair as the ladder does.
func addRatingPoint(t *testing.T, s *Store, team, pair, sub int64, rating float64) {
	t.Helper()
	if _, err := s.w.ExecContext(context.Background(), `INSERT INTO rating_history (team_id, pair, submission, rating, deviation, at) VALUES (?, ?, ?, ?, 50, '')`,
		team, pair, sub, rating); err != nil {
		t.Fatal(err)
	}
}

// A team's 1,000 pairs are read as one point in eight (at most 200, one
// in every power of two), the first, the last and each change of version
// among them (a return to an earlier version too), each numbered as among
// all. An event kept before the points were numbered reads the same once
// opened again, even after an opening stopped halfway: that one leaves
// nothing done (the migration is one transaction).
func TestARatingHistoryOfManyPairsIsThinnedEvenly(t *testing.T) {
	t.Parallel()
	sub := func(pair int) int64 { // versions change at pairs 300, 301, 777 and 900
		switch {
		case pair < 300:
			return 1
		case pair == 300:
			return 2
		case pair < 777:
			return 3
		case pair < 900:
			return 4
		}
		return 1
	}
	changes := []int{1, 300, 301, 777, 900}
	check := func(s *Store, when string) {
		t.Helper()
		kept, err := s.RatingHistory(context.Background(), 1, 200)
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) != 125+3+1 {
			t.Errorf("%s: %d points of 1,000 pairs, want 125 (one in eight), 3 changes of version and the last", when, len(kept))
		}
		seen := map[int]bool{}
		for i, p := range kept {
			seen[p.Pair] = true
			if want := (RatingPoint{Pair: p.Pair, Submission: sub(p.Pair), Rating: 1000 + float64(p.Pair), Deviation: 50}); p != want {
				t.Errorf("%s: point %+v, want %+v", when, p, want)
			}
			if i > 0 && (p.Pair <= kept[i-1].Pair || p.Pair-kept[i-1].Pair > 8) {
				t.Errorf("%s: pairs %d then %d: not spread evenly", when, kept[i-1].Pair, p.Pair)
			}
		}
		for _, pair := range append(changes, 1000) {
			if !seen[pair] {
				t.Errorf("%s: pair %d (first, last or a change of version) is left out", when, pair)
			}
		}
		if all, err := s.RatingHistory(context.Background(), 1, 1000); err != nil || len(all) != 1000 {
			t.Errorf("%s: %d points of 1,000 asked for all (%v)", when, len(all), err)
		}
	}
	s := newStore(t)
	addTeams(t, s, "a")
	for pair := 1; pair <= 1000; pair++ {
		addRatingPoint(t, s, 1, int64(10*pair), sub(pair), 1000+float64(pair))
	}
	check(s, "numbered as added")
	// The same event as one kept before: its points unnumbered, the
	// columns, their index and trigger gone, no migration numbered; and
	// its first opening stopped halfway, at the numbering (as by a kill).
	execAll(t, s.w, `PRAGMA user_version = 0`, `DROP TRIGGER rating_history_numbered`, `DROP INDEX rating_history_stride`,
		`ALTER TABLE rating_history DROP COLUMN n`, `ALTER TABLE rating_history DROP COLUMN stride`,
		`CREATE TRIGGER stop_halfway BEFORE UPDATE ON rating_history BEGIN SELECT RAISE(ABORT, 'stopped halfway'); END`)
	s.Close()
	if _, err := Open(s.Dir); err == nil || !strings.Contains(err.Error(), "stopped halfway") {
		t.Fatalf("an opening stopped at the numbering: %v", err)
	}
	raw, err := sql.Open("sqlite", filepath.Join(s.Dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	var added int
	if err := raw.QueryRow(`SELECT count(*) FROM pragma_table_info('rating_history') WHERE name IN ('n', 'stride')`).Scan(&added); err != nil || added != 0 {
		t.Errorf("an opening stopped halfway left %d of its columns added (%v): the next would not number the points", added, err)
	}
	var version int
	if err := raw.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 0 {
		t.Errorf("an opening stopped halfway left the database at version %d (%v), want 0", version, err)
	}
	execAll(t, raw, `DROP TRIGGER stop_halfway`)
	raw.Close()
	check(reopen(t, s.Dir), "numbered when opened again")
}

// Disputes picks the disputes of its filters, whichever index reads them:
// every team, game and state asked for, against a plain reading.
func TestDisputesPickTheirDisputes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addTeams(t, s, "a", "b")
	for i := range 2 {
		insertGame(t, s, LadderGame, 1, 2, 1, 2, fmt.Sprint("g", i))
	}
	type row struct {
		team, game int64
		state      string
	}
	var rows []row
	for i := range 12 {
		r := row{int64(i%2 + 1), int64(i/2%2 + 1), []string{"open", "answered", "open"}[i%3]}
		rows = append(rows, r)
		if _, err := s.w.ExecContext(ctx, `INSERT INTO disputes (game_id, team_id, message, filed, state) VALUES (?, ?, 'm', '', ?)`, r.game, r.team, r.state); err != nil {
			t.Fatal(err)
		}
	}
	for team := int64(0); team <= 2; team++ {
		for game := int64(0); game <= 2; game++ {
			for _, open := range []bool{false, true} {
				var want []int64
				for i := len(rows) - 1; i >= 0; i-- {
					r := rows[i]
					if (team == 0 || r.team == team) && (game == 0 || r.game == game) && (!open || r.state == "open") {
						want = append(want, int64(i+1))
					}
				}
				list, err := s.Disputes(ctx, team, game, open)
				var got []int64
				for _, d := range list {
					got = append(got, d.ID)
				}
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("disputes of team %d, game %d, open only %v: %v %v, want %v", team, game, open, got, err, want)
				}
			}
		}
	}
}

// What the ladder knows of two submissions' meetings sums their pairs on
// either side, and takes whether they are exhausted from the last pair
// that played a game, whichever side each pair put them on.
func TestMeetingsSumBothSides(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	pairs := []struct {
		a, b            int64
		state           string
		played, repeats int
	}{
		{1, 2, "done", 2, 0},
		{2, 1, "done", 2, 2},    // the last played: exhausted
		{1, 2, "done", 0, 0},    // played nothing: counts, decides nothing
		{1, 3, "done", 2, 2},    // 3 is not asked about
		{2, 1, "playing", 2, 0}, // not done
	}
	for _, p := range pairs {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO ladder_pairs (a_team, b_team, a_submission, b_submission, state, created, played, repeats) VALUES (?, ?, ?, ?, ?, '', ?, ?)`,
			p.a, p.b, p.a, p.b, p.state, p.played, p.repeats); err != nil {
			t.Fatal(err)
		}
	}
	met, err := s.meetings(ctx, []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := ladder.Meeting{Pairs: 3, Exhausted: true}
	if met[1][2] != want || met[2][1] != want || len(met[1]) != 1 || len(met[2]) != 1 {
		t.Errorf("meetings %v, want 1 and 2 met %+v, and nobody else", met, want)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO ladder_pairs (a_team, b_team, a_submission, b_submission, state, created, played, repeats) VALUES (1, 2, 1, 2, 'done', '', 2, 1)`); err != nil {
		t.Fatal(err)
	}
	if met, err := s.meetings(ctx, []int64{1, 2}); err != nil || met[2][1] != (ladder.Meeting{Pairs: 4}) {
		t.Errorf("after a pair with a new game: %v %v", met, err)
	}
}
