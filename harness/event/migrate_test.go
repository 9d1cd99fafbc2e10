package event

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// fixture copies the closed database testdata/name into a new event
// directory as its event.db, and returns the directory.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyFile(filepath.Join("testdata", name), filepath.Join(dir, DBFile)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// userVersion is the user_version of the closed event database in dir.
func userVersion(t *testing.T, dir string) int {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(dir, DBFile), "")
	if err != nil {
		t.Fatal(err)
	}
	var v int
	err = db.QueryRow(`PRAGMA user_version`).Scan(&v)
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkLadderEvent reads back what every fixture holds: the teams, their
// submissions, the ladder's pair of two games Alpha won, the ratings.
func checkLadderEvent(t *testing.T, st *Store, when string) (alpha, beta Team) {
	t.Helper()
	ctx := context.Background()
	teams, err := st.Teams(ctx)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	byName := map[string]Team{}
	for _, tm := range teams {
		byName[tm.Name] = tm
	}
	alpha, beta, gamma := byName["Alpha"], byName["Beta"], byName["Gamma"]
	if len(teams) != 3 || alpha.Members != "ann" || alpha.Contact != "a@x.org" || beta.Members != "bob" || alpha.BotName != "Alpha" ||
		beta.BotName != "Beta" || alpha.Disabled || beta.Disabled || !gamma.Disabled {
		t.Errorf("%s: teams %+v, want Alpha, Beta and Gamma (disabled)", when, teams)
	}
	subs, err := st.Submissions(ctx, alpha.ID)
	if err != nil || len(subs) != 1 || subs[0].Filename != "a.py" || subs[0].State != Passed {
		t.Errorf("%s: Alpha's submissions %+v (%v), want a.py passed", when, subs, err)
	}
	if subs, err := st.Submissions(ctx, gamma.ID); err != nil || len(subs) != 1 || subs[0].Filename != "c.py" || subs[0].State != Queued {
		t.Errorf("%s: Gamma's submissions %+v (%v), want c.py queued", when, subs, err)
	}
	table, err := st.Ladder(ctx)
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if len(table) < 2 || table[0].Name != "Alpha" || table[1].Name != "Beta" || table[0].Games != 2 || table[1].Games != 2 ||
		math.Abs(table[0].Rating.Rating-1747.31807197815) > 1e-6 || math.Abs(table[1].Rating.Rating-1252.68192802185) > 1e-6 ||
		table[0].Submission != subs[0].ID {
		t.Errorf("%s: the ladder %+v, want Alpha 1747.3 then Beta 1252.7, 2 games each", when, table)
	}
	games, err := st.GamesOf(ctx, alpha.ID, 10)
	if err != nil || len(games) < 2 {
		t.Fatalf("%s: Alpha's games %+v (%v)", when, games, err)
	}
	ladderGames := 0
	for _, g := range games {
		if g.Kind == LadderGame {
			ladderGames++
			if !g.Rated || g.Plies != 3 || g.Reason != "king captured" {
				t.Errorf("%s: ladder game %+v, want rated, 3 plies, king captured", when, g)
			}
		}
	}
	if n, _, err := st.TeamGames(ctx, alpha.ID, LadderGame); err != nil || n != 2 || ladderGames != 2 {
		t.Errorf("%s: Alpha's ladder games: %d counted (%v), %d listed, want 2", when, n, err, ladderGames)
	}
	if history, err := st.RatingHistory(ctx, alpha.ID, 10); err != nil || len(history) != 1 || math.Abs(history[0].Rating-1747.31807197815) > 1e-6 {
		t.Errorf("%s: Alpha's rating history %+v (%v), want one point at 1747.3", when, history, err)
	}
	if plot, err := st.RatingPlot(ctx, beta.ID); err != nil || len(plot) != 1 || math.Abs(plot[0].Rating-1252.68192802185) > 1e-6 {
		t.Errorf("%s: Beta's rating plot %+v (%v), want one point at 1252.7", when, plot, err)
	}
	if audit, err := st.Audit(ctx, 20); err != nil || len(audit) == 0 {
		t.Errorf("%s: the audit log %+v (%v), want the organizer's actions", when, audit, err)
	}
	return alpha, beta
}

// Each kind of event kept before the migrations were numbered (made at
// 9f37130) opens at SchemaVersion with every row as it was, opens again as
// it is, and takes new rows.
func TestAnEventFromBeforeNumberedMigrationsIsUpgraded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	checks := map[string]func(t *testing.T, st *Store, when string, alpha, beta Team){
		"ladder": func(t *testing.T, st *Store, when string, alpha, beta Team) {
			if _, closed, err := st.Closed(ctx); err != nil || closed {
				t.Errorf("%s: uploads closed %v (%v), want open", when, closed, err)
			}
			if _, ok, err := st.FinalRun(ctx); err != nil || ok {
				t.Errorf("%s: a final run %v (%v), want none", when, ok, err)
			}
		},
		"dispute": func(t *testing.T, st *Store, when string, alpha, beta Team) {
			all, err := st.Disputes(ctx, 0, 0, false)
			if err != nil || len(all) != 2 {
				t.Fatalf("%s: disputes %+v (%v), want 2", when, all, err)
			}
			d, err := st.Dispute(ctx, 1)
			if err != nil || d.Team != beta.ID || d.Message != "my bot did not lose" || d.State != DisputeAnswered ||
				d.Answer != "the transcript stands" || d.Answered.IsZero() || d.Verdict == "" {
				t.Errorf("%s: the answered dispute %+v (%v)", when, d, err)
			}
			if len(d.Reruns) != 1 || d.Reruns[0].Ply != 3 || d.Reruns[0].Text != "ran again: 3 of 3 reproduce\n" || d.Reruns[0].At.IsZero() {
				t.Errorf("%s: the dispute's reruns %+v, want one of turn 3", when, d.Reruns)
			}
			open, err := st.Disputes(ctx, beta.ID, 0, true)
			if err != nil || len(open) != 1 || open[0].ID != 2 || open[0].Message != "and this one" || len(open[0].Reruns) != 0 {
				t.Errorf("%s: Beta's open disputes %+v (%v), want dispute 2", when, open, err)
			}
		},
		"final": func(t *testing.T, st *Store, when string, alpha, beta Team) {
			if _, closed, err := st.Closed(ctx); err != nil || !closed {
				t.Errorf("%s: uploads closed %v (%v), want closed", when, closed, err)
			}
			entries, err := st.FinalEntries(ctx)
			if err != nil || len(entries) != 2 {
				t.Fatalf("%s: final entries %+v (%v), want Alpha and Beta", when, entries, err)
			}
			names := map[string]bool{entries[0].Name: true, entries[1].Name: true}
			if !names["Alpha"] || !names["Beta"] {
				t.Errorf("%s: final entries %+v, want Alpha and Beta", when, entries)
			}
			run, ok, err := st.FinalRun(ctx)
			if err != nil || !ok || run.Format != "round-robin" || run.GamesPerPair != 2 || run.Seed != 7 || run.Concurrency != 1 ||
				run.MaxAttempts != 2 || run.Started.IsZero() || run.Finished.IsZero() || run.Error != "" || run.Running() {
				t.Errorf("%s: the final's run %+v %v (%v), want a finished round robin, 2 games per pair, seed 7", when, run, ok, err)
			}
			if players, err := st.FinalPlayers(ctx); err != nil || len(players) != 2 || !players[alpha.ID] || !players[beta.ID] {
				t.Errorf("%s: final players %v (%v)", when, players, err)
			}
			for _, tm := range []Team{alpha, beta} {
				if n, _, err := st.TeamGames(ctx, tm.ID, FinalGame); err != nil || n != 2 {
					t.Errorf("%s: %s's final games %d (%v), want 2", when, tm.Name, n, err)
				}
			}
			games, total, err := st.ListGames(ctx, GameQuery{Kind: FinalGame, Limit: 10})
			if err != nil || total != 2 || len(games) != 2 {
				t.Fatalf("%s: final games %+v, %d (%v), want 2", when, games, total, err)
			}
			winners := map[string]bool{games[0].Winner: true, games[1].Winner: true}
			if !winners["white"] || !winners["draw"] {
				t.Errorf("%s: final games %+v, want a win for white and a draw", when, games)
			}
		},
	}
	for name, check := range checks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := fixture(t, name+"-9f37130.db")
			if v := userVersion(t, dir); v != 0 {
				t.Fatalf("the fixture is at version %d, want 0", v)
			}
			for i, when := range []string{"upgraded", "opened again"} {
				st, err := Open(dir)
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				alpha, beta := checkLadderEvent(t, st, when)
				check(t, st, when, alpha, beta)
				// The games it kept read with the columns added since:
				// the final's estimate reads how long each held its place.
				if _, err := st.FinalEstimate(ctx, Shape{GamesPerPair: 2}, 4, 2); err != nil {
					t.Errorf("%s: the final's estimate: %v", when, err)
				}
				if i == 1 {
					// Something new, written and read back.
					nt, err := st.AddTeam(ctx, "Delta", "dee", "")
					if err != nil {
						t.Fatal(err)
					}
					if tm, err := st.TeamByName(ctx, "Delta"); err != nil || tm.ID != nt.ID || tm.BotName != "Delta" || tm.Members != "dee" {
						t.Errorf("a team added after the upgrade: %+v (%v)", tm, err)
					}
					if p, err := st.Authenticate(ctx, nt.Token); err != nil || p.Team != nt.ID {
						t.Errorf("the new team's token: %+v (%v)", p, err)
					}
				}
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				if v := userVersion(t, dir); v != SchemaVersion {
					t.Errorf("%s: at version %d, want %d", when, v, SchemaVersion)
				}
			}
		})
	}
}

// A new event's database is at SchemaVersion, in WAL mode, and already
// holds the final log's tables as eventlog.Schema makes them.
func TestANewEventIsAtTheLastVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	var v int
	var mode string
	if err := st.w.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("a new event at version %d (%v), want %d", v, err, SchemaVersion)
	}
	if err := st.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("a new event's journal mode %q (%v), want wal", mode, err)
	}
	layout := func() string {
		var s string
		if err := st.w.QueryRowContext(ctx, `SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master ORDER BY name)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := layout()
	if _, err := st.w.ExecContext(ctx, eventlog.Schema); err != nil {
		t.Fatal(err)
	}
	if after := layout(); after != before {
		t.Errorf("eventlog.Schema changes the layout migration 1 made: a change to the log's tables needs a migration of its own")
	}
}

// A database of a later arena (a version this one does not know) is
// refused with NewerError, and left byte for byte as it was: an event's
// and a database never opened in WAL mode.
func TestADatabaseOfALaterArenaIsRefusedUnchanged(t *testing.T) {
	t.Parallel()
	newer := fmt.Sprintf(`PRAGMA user_version = %d`, SchemaVersion+1)
	for _, kind := range []string{"event", "rollback journal"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, DBFile)
			if kind == "event" {
				st, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.AddTeam(context.Background(), "Alpha", "", ""); err != nil {
					t.Fatal(err)
				}
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			db, err := sqlitedb.Open(path, "")
			if err != nil {
				t.Fatal(err)
			}
			setup := []string{newer}
			if kind != "event" {
				setup = append(setup, `CREATE TABLE later (x INTEGER)`)
			}
			for _, q := range setup {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Open(dir)
			if err == nil {
				st.Close()
				t.Fatal("a database of a later arena was opened")
			}
			var ne NewerError
			if !errors.As(err, &ne) || ne != (NewerError{Have: SchemaVersion + 1, Know: SchemaVersion}) {
				t.Errorf("refused with %v, want a NewerError{%d, %d}", err, SchemaVersion+1, SchemaVersion)
			}
			if msg := err.Error(); !strings.Contains(msg, "written by a later arena") || !strings.Contains(msg, "newer one") {
				t.Errorf("the refusal %q does not say to use the later arena", msg)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(after, before) {
				t.Error("the refused database's bytes changed")
			}
			if v := userVersion(t, dir); v != SchemaVersion+1 {
				t.Errorf("the refused database is at version %d, want %d", v, SchemaVersion+1)
			}
		})
	}
}
