package event

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func openTest(t *testing.T, toml string) (*Store, Config) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := ParseConfig(filepath.Join(dir, ConfigFile), []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st, cfg
}

func TestTokensAreStoredOnlyAsHashes(t *testing.T) {
	st, _ := openTest(t, "game = \"codeclash\"\n")
	ctx := context.Background()
	added, existing, err := st.ImportTeams(ctx, strings.NewReader("name,members,contact\nAlpha,ann,a@x.org\n\"Beta, the second\",,\n"))
	if err != nil || len(added) != 2 || len(existing) != 0 {
		t.Fatalf("import: %v %v %v", added, existing, err)
	}
	if added[1].Name != "Beta, the second" || added[0].Contact != "a@x.org" {
		t.Errorf("the CSV was misread: %+v", added)
	}
	// Every page of the database, read through SQLite (a descriptor of
	// the file closed beside it would drop its locks), and the journal.
	var db []byte
	rows, err := st.r.QueryContext(ctx, `SELECT data FROM sqlite_dbpage`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var page []byte
		if err := rows.Scan(&page); err != nil {
			t.Fatal(err)
		}
		db = append(db, page...)
	}
	if err := rows.Err(); err != nil || len(db) == 0 {
		t.Fatalf("read %d bytes of the database: %v", len(db), err)
	}
	wal, _ := os.ReadFile(filepath.Join(st.Dir, DBFile+"-wal"))
	for _, nt := range added {
		if strings.Contains(string(db)+string(wal), nt.Token) {
			t.Errorf("%s's token is stored in the clear", nt.Name)
		}
		p, err := st.Authenticate(ctx, nt.Token)
		if err != nil || p.Team != nt.ID || p.Name != nt.Name {
			t.Errorf("%s's token: %+v %v", nt.Name, p, err)
		}
	}
	if _, existing, _ := st.ImportTeams(ctx, strings.NewReader("Alpha\nGamma\n")); len(existing) != 1 || existing[0] != "Alpha" {
		t.Errorf("a second import: existing %v, want Alpha skipped", existing)
	}
	if _, _, err := st.ImportTeams(ctx, strings.NewReader("Delta\nbad\x01name\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a name with a control character: %v, want it refused with its line", err)
	}
	fresh, err := st.NewTeamToken(ctx, added[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(ctx, added[0].Token); !errors.Is(err, ErrBadToken) {
		t.Errorf("the old token after a new one: %v", err)
	}
	if p, err := st.Authenticate(ctx, fresh); err != nil || p.Team != added[0].ID {
		t.Errorf("the new token: %+v %v", p, err)
	}
	if err := st.SetDisabled(ctx, added[1].ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(ctx, added[1].Token); !errors.Is(err, ErrBadToken) {
		t.Errorf("a disabled team's token: %v", err)
	}
}

func TestOnlyAPassedVersionPlaysAndAStopLosesNoValidation(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n")
	ctx := context.Background()
	team, err := st.AddTeam(ctx, "Alpha", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var subs []Submission
	for _, name := range []string{"../../etc/passwd", "bot.py", ".hidden zip.zip"} {
		sub, err := st.AddSubmission(ctx, cfg, team.ID, name, strings.NewReader("data of "+name))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	if subs[0].Filename != "passwd" || subs[2].Filename != "hidden_zip.zip" {
		t.Errorf("stored names %q, %q", subs[0].Filename, subs[2].Filename)
	}
	if data, err := os.ReadFile(st.Path(subs[1])); err != nil || string(data) != "data of bot.py" {
		t.Errorf("the upload is not where Path says: %v", err)
	}
	// Two are claimed, then the server stops: both are queued again.
	for range 2 {
		if _, err := st.Claim(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.Requeue(ctx); err != nil || n != 2 {
		t.Fatalf("requeue: %d %v, want 2", n, err)
	}
	for _, want := range []int64{subs[0].ID, subs[1].ID, subs[2].ID} {
		sub, err := st.Claim(ctx)
		if err != nil || sub.ID != want {
			t.Fatalf("claim: %d %v, want %d (oldest first)", sub.ID, err, want)
		}
	}
	if _, err := st.Claim(ctx); !errors.Is(err, ErrNotFound) {
		t.Errorf("a claim of an empty queue: %v", err)
	}
	st.SetState(ctx, subs[0].ID, Passed, "")
	st.SetState(ctx, subs[1].ID, Passed, "")
	st.SetState(ctx, subs[2].ID, Failed, "archive: bad")
	list, err := st.Submissions(ctx, team.ID)
	if err != nil {
		t.Fatal(err)
	}
	active := func() int64 {
		list, _ := st.Submissions(ctx, team.ID)
		for _, s := range list {
			if s.Active {
				return s.ID
			}
		}
		return 0
	}
	if len(list) != 3 || active() != subs[1].ID {
		t.Errorf("the newest passed version is not the active one: %+v", list)
	}
	if _, failed, _ := st.NewestFailed(ctx, team.ID); !failed {
		t.Error("a failed newest upload is not flagged")
	}
	if err := st.Pin(ctx, team.ID, subs[2].ID); err == nil {
		t.Error("a failed version was made active")
	}
	if err := st.Pin(ctx, team.ID, subs[0].ID); err != nil || active() != subs[0].ID {
		t.Errorf("pin the older passed version: %v, active %d", err, active())
	}
	other, _ := st.AddTeam(ctx, "Beta", "", "")
	if err := st.Pin(ctx, other.ID, subs[1].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another team pinned Alpha's version: %v", err)
	}
}

func TestQuotasAndHoursRefuseUploads(t *testing.T) {
	st, cfg := openTest(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 5\npending_validations = 2\n")
	ctx := context.Background()
	team, _ := st.AddTeam(ctx, "Alpha", "", "")
	for i := range 3 {
		_, err := st.AddSubmission(ctx, cfg, team.ID, "bot.py", strings.NewReader("x"))
		var qe *QuotaError
		if (i < 2) != (err == nil) || (i == 2 && !errors.As(err, &qe)) {
			t.Errorf("upload %d: %v", i+1, err)
		}
	}
	closed, err := ParseConfig("event.toml", []byte("game = \"codeclash\"\ncloses = \"2020-01-01T00:00:00Z\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddSubmission(ctx, closed, team.ID, "bot.py", strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("an upload after closing: %v", err)
	}
}

// aDisputedGame are the rows a dispute is of: team 1 and its ladder game 1.
var aDisputedGame = []string{
	`INSERT INTO teams (id, name, token_hash, created) VALUES (1, 'Alpha', 'h', '')`,
	`INSERT INTO games (id, kind, white_name, black_name, white_sha256, black_sha256, dir, winner, reason, plies, finished) VALUES (1, 'ladder', 'a', 'b', 'x', 'y', 'g', 'white', 'r', 1, '')`,
}

// An event kept before every rerun of a dispute was kept held the last
// one in the dispute's row: opened, it is the dispute's first rerun, once.
func TestAnOlderDisputesRerunIsKept(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	execAll(t, st.w, aDisputedGame...)
	execAll(t, st.w,
		`INSERT INTO disputes (id, game_id, team_id, message, filed, rerun_ply, rerun) VALUES (1, 1, 1, 'why', '2026-11-20T10:00:00Z', 7, 'ran again: 3 of 3 reproduce')`,
		`INSERT INTO disputes (id, game_id, team_id, message, filed) VALUES (2, 1, 1, 'and this', '2026-11-20T11:00:00Z')`,
		`DELETE FROM dispute_reruns`, `PRAGMA user_version = 0`)
	for range 2 {
		again := reopen(t, st.Dir)
		d, err := again.Dispute(context.Background(), 1)
		if err != nil || len(d.Reruns) != 1 || d.Reruns[0].Ply != 7 || d.Reruns[0].Text != "ran again: 3 of 3 reproduce" || !d.Reruns[0].At.Equal(d.Filed) {
			t.Fatalf("the older dispute's rerun: %+v %v", d.Reruns, err)
		}
		if d, err := again.Dispute(context.Background(), 2); err != nil || d.Reruns == nil || len(d.Reruns) != 0 {
			t.Fatalf("a dispute never rerun: %+v %v", d.Reruns, err)
		}
	}
}

// A rerun kept before reruns kept their side gets it from its text; what a
// team may read of a rerun is the public text of every turn not its own,
// the whole text of its own, everything for the organizer.
func TestARerunIsSeenWholeByItsSideAlone(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	execAll(t, st.w, aDisputedGame...)
	execAll(t, st.w,
		`INSERT INTO disputes (id, game_id, team_id, message, filed) VALUES (1, 1, 1, 'why', '2026-11-20T10:00:00Z')`,
		`INSERT INTO dispute_reruns (dispute_id, ply, text, at) VALUES (1, 1, 'ply 1, white (a), play; turn limit 1s'||char(10)||'recorded stderr: w', '')`,
		`INSERT INTO dispute_reruns (dispute_id, ply, text, at) VALUES (1, 2, 'warning: drift'||char(10)||'ply 2, black (b), play; turn limit 1s'||char(10)||'recorded stderr: b', '')`,
		`UPDATE dispute_reruns SET side = ''`, `PRAGMA user_version = 1`)
	ctx := context.Background()
	again := reopen(t, st.Dir)
	if err := again.AddRerun(ctx, 1, 1, 3, "white", "ply 3, white: stderr w3", "ply 3, white"); err != nil {
		t.Fatal(err)
	}
	d, err := again.Dispute(ctx, 1)
	if err != nil || len(d.Reruns) != 3 || d.Reruns[0].Side != "white" || d.Reruns[1].Side != "black" || d.Reruns[2].Side != "white" {
		t.Fatalf("the reruns' sides: %+v %v", d.Reruns, err)
	}
	texts := func(d Dispute) []string {
		var out []string
		for _, r := range d.Reruns {
			out = append(out, r.Text)
		}
		return append(out, d.Rerun)
	}
	white := texts(d.SeenBy("white", true))
	if want := []string{d.Reruns[0].Text, HiddenRerun, "ply 3, white: stderr w3", "ply 3, white: stderr w3"}; !slices.Equal(white, want) {
		t.Errorf("white's team reads %q, want %q", white, want)
	}
	black := texts(d.SeenBy("black", true))
	if want := []string{HiddenRerun, d.Reruns[1].Text, "ply 3, white", "ply 3, white"}; !slices.Equal(black, want) {
		t.Errorf("black's team reads %q, want %q", black, want)
	}
	if all := texts(d.SeenBy("", false)); !slices.Equal(all, texts(d)) {
		t.Errorf("the organizer reads %q, want everything", all)
	}
	if b, err := json.Marshal(d); err != nil || strings.Contains(string(b), "public") {
		t.Errorf("a dispute's JSON carries its reruns' public texts: %s %v", b, err)
	}
}

// A second answer to a dispute keeps the first: the team reads both, the
// later under the time it was given.
func TestASecondAnswerKeepsTheFirst(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	execAll(t, st.w, aDisputedGame...)
	execAll(t, st.w,
		`INSERT INTO disputes (id, game_id, team_id, message, filed) VALUES (1, 1, 1, 'why', '2026-11-20T10:00:00Z')`)
	ctx := context.Background()
	if _, err := st.AnswerDispute(ctx, 1, "The result stands."); err != nil {
		t.Fatal(err)
	}
	d, err := st.AnswerDispute(ctx, 1, "On a second look: the game is replayed.")
	if err != nil {
		t.Fatal(err)
	}
	first, second, ok := strings.Cut(d.Answer, "\n\nAnswered again at ")
	if !ok || first != "The result stands." || !strings.HasSuffix(second, " UTC:\nOn a second look: the game is replayed.") || d.State != DisputeAnswered {
		t.Errorf("answered twice: %q (%s)", d.Answer, d.State)
	}
}
