package event

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/validate"
)

func TestEveryTeamPlaysUnderABotNameOfItsOwn(t *testing.T) {
	st, _ := openTest(t, "game = \"codeclash\"\n")
	ctx := context.Background()
	added, _, err := st.ImportTeams(ctx, strings.NewReader("C++ Wizards\nC# Wizards\n\"<b>Bold</b> & \"\"Quotes\"\"\"\nc-wizards\n???\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, bot, collided string }{
		{"C++ Wizards", "C-Wizards", ""},
		{"C# Wizards", "C-Wizards-2", "C++ Wizards"},
		{`<b>Bold</b> & "Quotes"`, "b-Bold-b-Quotes", ""},
		{"c-wizards", "c-wizards-3", "C++ Wizards"}, // names differing in case collide too
		{"???", "team-5", ""},
	}
	if len(added) != len(want) {
		t.Fatalf("added %d teams, want %d", len(added), len(want))
	}
	for i, w := range want {
		if got := added[i]; got.Name != w.name || got.BotName != w.bot || got.Collided != w.collided {
			t.Errorf("team %d: %q plays as %q (collided with %q), want %q as %q (%q)", i+1, got.Name, got.BotName, got.Collided, w.name, w.bot, w.collided)
		}
	}
	// A rename changes what people read, never what the bot plays as.
	renamed, err := st.Rename(ctx, added[1].ID, "C Sharp Wizards")
	if err != nil || renamed.Name != "C Sharp Wizards" || renamed.BotName != "C-Wizards-2" {
		t.Fatalf("rename: %+v %v", renamed, err)
	}
	var re *RefusedError
	if _, err := st.Rename(ctx, added[1].ID, "C++ Wizards"); !errors.As(err, &re) {
		t.Errorf("a rename to another team's name: %v, want it refused", err)
	}
	if _, err := st.Rename(ctx, added[1].ID, " "); !errors.As(err, &re) {
		t.Errorf("a rename to nothing: %v, want it refused", err)
	}
	names, err := st.Names(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names.ByBot["C-Wizards-2"] != "C Sharp Wizards" || names.Of(Side{Team: added[2].ID, Name: "b-Bold-b-Quotes"}) != `<b>Bold</b> & "Quotes"` ||
		names.Of(Side{Name: "random"}) != "random" {
		t.Errorf("names: %+v", names)
	}
	audit, err := st.Audit(ctx, 10)
	if err != nil || len(audit) != 1 || audit[0].Action != ActionRename || !strings.Contains(audit[0].Detail, "C Sharp Wizards") {
		t.Errorf("the audit log after a rename: %+v %v", audit, err)
	}
}

func TestAnEventMadeBeforeBotNamesGetsThem(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	// The teams table as events kept it before.
	if _, err := db.Exec(`CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, members TEXT NOT NULL DEFAULT '',
		contact TEXT NOT NULL DEFAULT '', token_hash TEXT NOT NULL UNIQUE, disabled INTEGER NOT NULL DEFAULT 0, pinned INTEGER, created TEXT NOT NULL);
		INSERT INTO teams (name, token_hash, created) VALUES ('C++ Wizards', 'h1', '2026-11-01T00:00:00Z'), ('C# Wizards', 'h2', '2026-11-01T00:00:00Z');
		CREATE TABLE games (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, white_team INTEGER, black_team INTEGER, white_submission INTEGER,
		black_submission INTEGER, white_name TEXT NOT NULL, black_name TEXT NOT NULL, white_sha256 TEXT NOT NULL, black_sha256 TEXT NOT NULL,
		dir TEXT NOT NULL, winner TEXT NOT NULL, reason TEXT NOT NULL, plies INTEGER NOT NULL, finished TEXT NOT NULL);`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	teams, err := st.Teams(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tm := range teams {
		got[tm.Name] = tm.BotName
	}
	if got["C++ Wizards"] != "C-Wizards" || got["C# Wizards"] != "C-Wizards-2" {
		t.Errorf("bot names given to an older event's teams: %v", got)
	}
}

// failedWithReport stores an upload of team, fails it with a saved report
// whose entry point is entry ("" when nothing could run) and whose
// failures are the README's and the checks more, as the validator records
// it.
func failedWithReport(t *testing.T, st *Store, cfg Config, team int64, entry string, more ...validate.Check) Submission {
	t.Helper()
	ctx := context.Background()
	sub, err := st.AddSubmission(ctx, cfg, team, "bot.py", strings.NewReader("print('x')\n"+entry+fmt.Sprint(len(more))))
	if err != nil {
		t.Fatal(err)
	}
	rep := &validate.Report{Entry: entry, Checks: append([]validate.Check{{Name: "readme", Status: validate.Fail, Detail: "no README.md or README.txt"}}, more...),
		Failures: 1 + len(more)}
	if err := rep.Save(st.ValidationDir(sub.ID)); err != nil {
		t.Fatal(err)
	}
	if err := st.SetValidated(ctx, sub.ID, Failed, rep.Summary(), rep.CannotPlay()); err != nil {
		t.Fatal(err)
	}
	return sub
}

func TestTheOrganizerAdmitsAFailedSubmission(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 50\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	sub := failedWithReport(t, st, cfg, a.ID, "bot.py")
	nothing := failedWithReport(t, st, cfg, b.ID, "")
	// A script that runs, and that Python could not read: nothing plays.
	unreadable := failedWithReport(t, st, cfg, b.ID, "bot.py", validate.Check{Name: "answers as white", Status: validate.Fail,
		Detail: "the bot crashed", Evidence: &validate.Evidence{Verdict: "crash", ExitCode: 1,
			StderrTail: "  File \"/game/bot.py\", line 2\r\n    def main(:\r\n             ^\r\nSyntaxError: expected ':'\r\n"}})
	if _, err := st.Active(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed upload plays: %v", err)
	}
	fails, _ := st.RecentFailures(ctx, 10)
	if len(fails) != 3 {
		t.Errorf("failures before: %+v", fails)
	}
	for _, f := range fails {
		if (f.CannotPlay != "") != (f.ID != sub.ID) {
			t.Errorf("submission %d is listed as one that cannot play for %q", f.ID, f.CannotPlay)
		}
	}
	var re *RefusedError
	if _, err := st.Admit(ctx, sub.ID, "  "); !errors.As(err, &re) {
		t.Errorf("an admission without a reason: %v", err)
	}
	if _, err := st.Admit(ctx, nothing.ID, "it is fine"); !errors.As(err, &re) || !strings.Contains(err.Error(), "nothing that could play (there is no program to run)") {
		t.Errorf("admitting a submission with nothing to run: %v", err)
	}
	if _, err := st.Admit(ctx, unreadable.ID, "it is fine"); !errors.As(err, &re) || !strings.Contains(err.Error(), "nothing that could play (answers as white") {
		t.Errorf("admitting a script Python could not read: %v", err)
	}
	got, err := st.Admit(ctx, sub.ID, "the README was mailed to us")
	if err != nil || got.Admitted != "the README was mailed to us" || got.AdmittedAt.IsZero() || !got.Plays() {
		t.Fatalf("admit: %+v %v", got, err)
	}
	if act, err := st.Active(ctx, a.ID); err != nil || act.ID != sub.ID || !act.Active {
		t.Errorf("the admitted submission is not the team's active one: %+v %v", act, err)
	}
	if entries, _ := st.LadderEntries(ctx); len(entries) != 1 || entries[0].Submission != sub.ID {
		t.Errorf("the ladder after the admission: %+v", entries)
	}
	// Superseded: an admitted failure is no longer a failure to look at.
	if fails, _ := st.RecentFailures(ctx, 10); len(fails) != 2 || fails[0].ID != unreadable.ID || fails[1].ID != nothing.ID {
		t.Errorf("failures after the admission: %+v", fails)
	}
	pass := passed(t, st, cfg, a.ID, "better.py")
	if _, err := st.Admit(ctx, pass.ID, "why not"); !errors.As(err, &re) {
		t.Errorf("admitting a passed submission: %v", err)
	}
	if _, err := st.Withdraw(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	if act, _ := st.Active(ctx, a.ID); act.ID != pass.ID {
		t.Errorf("after the withdrawal the team plays %d, want its passed %d", act.ID, pass.ID)
	}
	audit, _ := st.Audit(ctx, 10)
	if len(audit) != 2 || audit[0].Action != ActionWithdraw || audit[1].Action != ActionAdmit || !strings.Contains(audit[1].Detail, "mailed") {
		t.Errorf("the audit log: %+v", audit)
	}
}

func TestAFailureSupersededByAPassIsNotListed(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 50\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	old := failedWithReport(t, st, cfg, a.ID, "bot.py")
	passed(t, st, cfg, a.ID, "good.py")
	later := failedWithReport(t, st, cfg, a.ID, "bot.py")
	fails, err := st.RecentFailures(ctx, 10)
	if err != nil || len(fails) != 1 || fails[0].ID != later.ID {
		t.Errorf("failures: %+v %v, want only %d (%d was followed by a pass)", fails, err, later.ID, old.ID)
	}
}

func TestClosingCanBeUndoneUntilTheFinalStarts(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 50\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	c, _ := st.AddTeam(ctx, "Gamma", "", "")
	d, _ := st.AddTeam(ctx, "Delta", "", "")
	passed(t, st, cfg, a.ID, "a.py")
	passed(t, st, cfg, b.ID, "b.py")
	failedWithReport(t, st, cfg, c.ID, "c.py")
	if err := st.SetDisabled(ctx, d.ID, true); err != nil {
		t.Fatal(err)
	}
	look, err := st.FinalOutlook(ctx)
	if err != nil || look.Closed || len(look.Playing) != 2 || len(look.Missing) != 1 || look.Missing[0].Name != "Gamma" ||
		len(look.Disabled) != 1 || look.Disabled[0].Name != "Delta" {
		t.Fatalf("the outlook before the close: %+v %v", look, err)
	}
	var re *RefusedError
	if err := st.ReopenUploads(ctx); !errors.As(err, &re) {
		t.Errorf("reopening what is open: %v", err)
	}
	if _, err := st.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddScrimmage(ctx, cfg, a.ID, b.ID); !errors.As(err, &re) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a scrimmage after the close: %v, want it refused", err)
	}
	if _, err := st.AddSubmission(ctx, cfg, a.ID, "x.py", strings.NewReader("x")); err == nil {
		t.Error("an upload after the close was taken")
	}
	if err := st.ReopenUploads(ctx); err != nil {
		t.Fatal(err)
	}
	if _, closed, _ := st.Closed(ctx); closed {
		t.Error("still closed after the reopening")
	}
	if pinned, _ := st.FinalEntries(ctx); len(pinned) != 0 {
		t.Errorf("still pinned after the reopening: %+v", pinned)
	}
	if _, err := st.AddScrimmage(ctx, cfg, a.ID, b.ID); err != nil {
		t.Errorf("a scrimmage after the reopening: %v", err)
	}
	if _, err := st.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.BeginFinal(ctx, FinalRun{Shape: Shape{GamesPerPair: 2}}, make([]FinalEntry, 2)); err != nil {
		t.Fatal(err)
	}
	if err := st.ReopenUploads(ctx); !errors.As(err, &re) || !strings.Contains(err.Error(), "final has started") {
		t.Errorf("reopening once the final started: %v", err)
	}
	audit, _ := st.Audit(ctx, 10)
	var actions []string
	for _, e := range audit {
		actions = append(actions, e.Action)
	}
	if strings.Join(actions, ",") != "final,close,reopen,close,disable" {
		t.Errorf("the audit log: %v", actions)
	}
}

// writeGame writes a match directory: a signed-less transcript of moves
// (white first) ending with winner, and its result.json.
func writeGame(t *testing.T, dir string, seed uint64, moves []string, winner string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := transcript.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(transcript.TypeHeader, transcript.Header{Format: transcript.Format, Game: "codeclash", Seed: seed,
		White: transcript.Bot{Name: "w"}, Black: transcript.Bot{Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	for i, m := range moves {
		side := "white"
		if i%2 == 1 {
			side = "black"
		}
		if err := w.Append(transcript.TypeTurn, transcript.Turn{Ply: i + 1, Side: side, Phase: "play", Verdict: "ok", Played: m,
			WallMs: float64(seed) + float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	res := transcript.Result{Game: "codeclash", Winner: winner, Reason: "king captured", Plies: len(moves), Seed: seed}
	if err := w.Append(transcript.TypeFooter, transcript.Footer{Result: res, FinishedAt: time.Now().UTC().Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := transcript.EncodeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, transcript.ResultFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestARepeatedLadderGameIsKeptButNotRated(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 50\npending_validations = 50\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	subA, subB := passed(t, st, cfg, a.ID, "a.py"), passed(t, st, cfg, b.ID, "b.py")
	sideA, sideB := Side{Team: a.ID, Submission: subA.ID}, Side{Team: b.ID, Submission: subB.ID}
	// pair plays a ladder pair whose games follow courses (the moves of
	// Alpha as white, then of Alpha as black); it returns how many games
	// were rated.
	pairs := 0
	pair := func(seed uint64, asWhite, asBlack []string) int {
		t.Helper()
		p := startFirstPair(t, st)
		pairs++
		var games []Game
		for i, moves := range [][]string{asWhite, asBlack} {
			dir := filepath.Join(st.Dir, LadderDir, strings.Repeat("p", pairs), []string{"g1", "g2"}[i])
			writeGame(t, dir, seed, moves, "white")
			white, black := sideA, sideB
			if i == 1 {
				white, black = sideB, sideA
			}
			g, err := st.AddGame(ctx, LadderGame, dir, white, black, 0)
			if err != nil {
				t.Fatal(err)
			}
			games = append(games, g)
		}
		rated, err := st.FinishLadderPair(ctx, p, games)
		if err != nil {
			t.Fatal(err)
		}
		return rated
	}
	one, other := []string{"a1", "b2", "a3"}, []string{"c1", "d2"}
	if n := pair(1, one, other); n != 2 {
		t.Errorf("the first pair rated %d games, want 2", n)
	}
	entries, _ := st.LadderEntries(ctx)
	if m := entries[0].Met[entries[1].Submission]; m.Pairs != 1 || m.Exhausted {
		t.Errorf("after one pair: %+v", m)
	}
	// The same games again, with another seed and other times: the same
	// course, so nothing new to rate.
	if n := pair(2, one, other); n != 0 {
		t.Errorf("a pair that repeats both games rated %d", n)
	}
	entries, _ = st.LadderEntries(ctx)
	if m := entries[0].Met[entries[1].Submission]; m.Pairs != 2 || !m.Exhausted {
		t.Errorf("after a pair of repeats: %+v, want the two exhausted", m)
	}
	// One game new: it is rated, the repeat is not; the pair is not
	// exhausted any more.
	if n := pair(3, []string{"a1", "b2", "x3"}, other); n != 1 {
		t.Errorf("a pair with one new game rated %d", n)
	}
	entries, _ = st.LadderEntries(ctx)
	if m := entries[0].Met[entries[1].Submission]; m.Exhausted {
		t.Errorf("after a new game: %+v", m)
	}
	table, _ := st.Ladder(ctx)
	if table[0].Games != 3 {
		t.Errorf("the ladder counts %d games, want the 3 rated", table[0].Games)
	}
	// A pair that ends after the close is not rated.
	if _, err := st.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pair(4, []string{"new"}, []string{"newer"}); n != 0 {
		t.Errorf("a pair ending after the close rated %d games", n)
	}
	var unrated int
	if err := st.r.QueryRow(`SELECT count(*) FROM games WHERE kind = 'ladder' AND rated = 0`).Scan(&unrated); err != nil || unrated != 5 {
		t.Errorf("%d unrated ladder games kept, want 5 (%v)", unrated, err)
	}
}

// A team whose only upload waits for its validation is not among those
// that will not play: it waits, and plays if it passes.
func TestATeamWaitingForItsValidationIsNotMissing(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n")
	ctx := context.Background()
	a, _ := st.AddTeam(ctx, "Alpha", "", "")
	b, _ := st.AddTeam(ctx, "Beta", "", "")
	c, _ := st.AddTeam(ctx, "Gamma", "", "")
	passed(t, st, cfg, a.ID, "a.py")
	if _, err := st.AddSubmission(ctx, cfg, b.ID, "b.py", strings.NewReader("print(1)\n")); err != nil {
		t.Fatal(err)
	}
	failedWithReport(t, st, cfg, c.ID, "")
	look, err := st.FinalOutlook(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(look.Playing) != 1 || len(look.Waiting) != 1 || look.Waiting[0].ID != b.ID || len(look.Missing) != 1 || look.Missing[0].ID != c.ID {
		t.Errorf("playing %+v, waiting %+v, missing %+v", look.Playing, look.Waiting, look.Missing)
	}
}
