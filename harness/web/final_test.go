package web

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/harness/witness"
	"github.com/arenabots/arena/sandbox/local"
)

// playsFinals gives the test server what arena serve gives it to play the
// final and rerun turns: the local sandbox, a builder, the event's key.
func playsFinals(t *testing.T, ctx context.Context, e *testEvent, opponent *submission.Bot) {
	t.Helper()
	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	_, key, _ := ed25519.GenerateKey(nil)
	builder := &build.Builder{Backend: backend, Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}
	fr := services.NewFinalRunner(ctx, e.store, services.Final{Settings: resolved, Backend: backend,
		Builder: builder, Intake: submission.DefaultLimits(), ArenaVersion: "test", Signer: key, Watch: e.server.Watch}, e.server.Log)
	t.Cleanup(fr.Wait)
	e.finals = fr
	e.server.StartFinal = fr.Start
	e.server.Rerunner = &services.Rerunner{Store: e.store, Game: resolved.Game, Backend: backend, Builder: builder,
		Intake: submission.DefaultLimits(), Opponent: opponent, Repeat: 2}
	go e.server.watchFinal(ctx, 20*time.Millisecond)
	go e.server.watchPlaying(ctx)
}

// board reads /api/v1/standings as token's holder.
func (e *testEvent) board(t *testing.T, token string) event.Board {
	t.Helper()
	res, body := e.do(t, http.MethodGet, "/api/v1/standings", token, nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("standings: %d %s", res.StatusCode, body)
	}
	var b event.Board
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// finalEnded waits (3 minutes at most) until the final's run has ended,
// and what follows its end (the log's end entry) is done, and returns the
// organizer's board.
func (e *testEvent) finalEnded(t *testing.T) event.Board {
	t.Helper()
	var b event.Board
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if b = e.board(t, e.admin); !b.Run.Finished.IsZero() {
			// The run's end is recorded before its last steps (the log's
			// end entry): they are done once the runner has returned.
			if e.finals != nil {
				e.finals.Wait()
			}
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("the final did not end within 3 minutes: %+v", b)
		}
	}
}

// threeTeamsForTheFinal adds Gamma to the event, gives Alpha the greedy bot
// and Beta and Gamma the random one, each passed, and lets the server play
// the final when it is asked to. It returns Gamma.
func threeTeamsForTheFinal(t *testing.T, ctx context.Context, e *testEvent) event.NewTeam {
	t.Helper()
	c, err := e.store.AddTeam(ctx, "Gamma", "", "")
	if err != nil {
		t.Fatal(err)
	}
	passedUpload(t, e, e.a.ID, "./examples/greedy")
	passedUpload(t, e, e.b.ID, "./examples/random")
	passedUpload(t, e, c.ID, "./examples/random")
	playsFinals(t, ctx, e, nil)
	return c
}

// TestTheOrganizerPlaysTheFinalAndFreezesTheScoreboard: the organizer closes
// uploads and starts the final over the API; the server plays it through the
// tournament runner in DIR/final and records every game as the event's; the
// standings it serves are the final directory's. Frozen at the time its
// third game finished, the scoreboard shows a team (and a visitor) the
// standings of those three games, the organizer all six, until revealed; a
// page following the standings is told of each change.
func TestTheOrganizerPlaysTheFinalAndFreezesTheScoreboard(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := threeTeamsForTheFinal(t, ctx, e)

	if b := e.board(t, ""); len(b.Standings) != 0 || b.Games["total"] != 0 {
		t.Errorf("before the final the standings are %+v, want empty", b)
	}
	// The home page's live part: nothing while uploads are open, then
	// that the final has not started.
	if res, body := e.do(t, http.MethodGet, "/standings", "", nil, ""); res.StatusCode != http.StatusOK || strings.TrimSpace(body) != "" {
		t.Errorf("the standings part while uploads are open: %d %q, want it empty", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodGet, "/deadline", "", nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, "Uploads are open") {
		t.Errorf("the deadline part while uploads are open: %d %q", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/close", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("close: %d %s", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodGet, "/standings", "", nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, "has not started") {
		t.Errorf("the standings part once uploads closed: %d %q, want that the final has not started", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodGet, "/deadline", "", nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, "Uploads closed at") {
		t.Errorf("the deadline part once uploads closed: %d %q", res.StatusCode, body)
	}
	up, ct := multipartFile(t, "late.py", []byte("print(1)\n"))
	if res, body := e.do(t, http.MethodPost, "/api/v1/submissions", e.a.Token, up, ct); res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "closed") {
		t.Errorf("an upload after the close: %d %s, want it refused", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"games_per_pair": 0}`), "application/json"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("0 games per pair: %d %s, want 400", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	b := e.finalEnded(t)
	if b.Run.Error != "" || b.Games["done"] != 6 || b.Games["total"] != 6 || b.Run.GamesPerPair != 2 {
		t.Fatalf("the final ended with %+v, want 6 games played", b)
	}
	state, err := tournament.Load(ctx, filepath.Join(e.dir, event.FinalDir))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(b.Standings, state.Summary.Standings, sameBoardRow) {
		t.Errorf("the served standings %+v are not the final directory's %+v", b.Standings, state.Summary.Standings)
	}
	// arena standings DIR/final names each team beside its bot.
	for _, r := range state.Summary.Standings {
		if r.Team == "" || !strings.Contains(tournament.String(state.Summary.Standings, state.Config.TieBreaks), r.Team) {
			t.Errorf("the final directory's standings do not name bot %s's team: %+v", r.Name, r)
		}
	}
	// Every game is the event's, once, with its team's pinned submission.
	entries, err := e.store.FinalEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[int64]int64{}
	for _, en := range entries {
		pinned[en.Team] = en.Submission
	}
	var finals []event.Game
	seen := map[int64]bool{}
	for _, team := range []int64{e.a.ID, e.b.ID, c.ID} {
		games, err := e.store.GamesOf(ctx, team, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range games {
			if g.Kind != event.FinalGame || seen[g.ID] {
				continue
			}
			seen[g.ID] = true
			finals = append(finals, g)
			if pinned[g.White.Team] != g.White.Submission || pinned[g.Black.Team] != g.Black.Submission {
				t.Errorf("game %d was not played by the pinned submissions: %+v", g.ID, g)
			}
		}
	}
	if len(finals) != 6 {
		t.Fatalf("%d games of the final recorded, want 6", len(finals))
	}

	// A page follows the standings: it is told when the scoreboard freezes.
	told := make(chan string, 4)
	streamCtx, stop := context.WithCancel(ctx)
	defer stop()
	req, _ := http.NewRequestWithContext(streamCtx, http.MethodGet, e.http.URL+"/standings/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				told <- sc.Text()
			}
		}
	}()
	time.Sleep(100 * time.Millisecond) // the watcher has seen the final as it is

	slices.SortFunc(finals, func(x, y event.Game) int { return x.Finished.Compare(y.Finished) })
	at := finals[2].Finished
	body := fmt.Sprintf(`{"at": %q}`, at.Format(time.RFC3339Nano))
	if res, out := e.do(t, http.MethodPost, "/api/v1/admin/freeze", e.admin, strings.NewReader(body), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("freeze: %d %s", res.StatusCode, out)
	}
	select {
	case <-told:
	case <-time.After(5 * time.Second):
		t.Errorf("the standings' stream told nothing of the freeze")
	}
	early := map[string]bool{}
	for _, g := range finals[:3] {
		early[g.Dir] = true
	}
	want := state.StandingsOf(func(r tournament.Record) bool { return early[filepath.Join(event.FinalDir, r.Dir)] })
	for _, who := range []struct{ name, token string }{{"a team", e.a.Token}, {"a visitor", ""}} {
		fb := e.board(t, who.token)
		if !fb.FrozenAt.Equal(at) || fb.Games["done"] != 3 || !slices.EqualFunc(fb.Standings, want, sameBoardRow) {
			t.Errorf("%s sees the frozen board %+v, want the 3 games finished by %s: %+v", who.name, fb, at, want)
		}
		// Nothing after the freeze shows: not even that the final ended.
		if !fb.Run.Finished.IsZero() || fb.Run.Error != "" || fb.Games["unplayed"] != 0 || fb.Games["pending"] != 0 {
			t.Errorf("%s learns how the final went after the freeze: %+v", who.name, fb)
		}
		if res, out := e.do(t, http.MethodGet, "/", who.token, nil, ""); res.StatusCode != http.StatusOK || strings.Contains(out, "Over.") ||
			!strings.Contains(out, `id="frozen"`) {
			t.Errorf("%s's home page during the freeze: %d %.2000s", who.name, res.StatusCode, out)
		}
	}
	if ob := e.board(t, e.admin); ob.Games["done"] != 6 || !ob.FrozenAt.IsZero() || !ob.FreezesAt.Equal(at) {
		t.Errorf("the organizer sees %+v, want the live board and the freeze's time", ob)
	}
	if res, out := e.do(t, http.MethodGet, "/standings", e.a.Token, nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(out, `id="frozen"`) {
		t.Errorf("the standings part a team gets does not say it is frozen: %d %.300s", res.StatusCode, out)
	}
	// The final's log keeps its checkpoint served during the freeze: it
	// commits to every entry logged, the games after the freeze among
	// them (their number shows, not what they say), so a team keeps it
	// and holds the organizer to it after the reveal. Their tiles and
	// proofs wait for the reveal; the tree before the freeze is read as
	// before.
	_, vkey, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	checkpoint := func() ([]byte, eventlog.Checkpoint) {
		t.Helper()
		res, signed := callAPI(t, e.http.URL, "GET", "/log/checkpoint", "", "")
		c, err := eventlog.Verify([]byte(signed), vkey)
		if res != http.StatusOK || err != nil {
			t.Fatalf("the log's checkpoint: %d %v", res, err)
		}
		return []byte(signed), c
	}
	const logged = 1 + 3 + 6 + 6 + 1 // the final, its players, pairings, games and its end
	kept, frozen := checkpoint()
	if frozen.Size != logged {
		t.Errorf("during the freeze the log's checkpoint holds %d entries, want all %d", frozen.Size, logged)
	}
	tile := func(size int64) (int, string) {
		return callAPI(t, e.http.URL, "GET", fmt.Sprintf("/log/tile/entries/000.p/%d", size), "", "")
	}
	if res, out := tile(logged); res != http.StatusNotFound || !strings.Contains(out, "served once the scoreboard is revealed") {
		t.Errorf("the entries of the checkpoint during the freeze: %d %.300s, want them withheld until the reveal, saying so", res, out)
	}
	shown := int64(0)
	for n := int64(logged - 1); n > 0 && shown == 0; n-- {
		if res, _ := tile(n); res == http.StatusOK {
			shown = n
		}
	}
	if shown < 1+3+6 || shown >= logged {
		t.Errorf("during the freeze the entries read are the first %d, want the pairings and the games before the freeze, not all %d", shown, logged)
	}
	if res, out := e.do(t, http.MethodGet, fmt.Sprintf("/games/%d/proof", finals[5].ID), e.admin, nil, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("the proof of a game after the freeze: %d %.200s", res.StatusCode, out)
	}
	if res, out := e.do(t, http.MethodPost, "/api/v1/admin/reveal", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("reveal: %d %s", res.StatusCode, out)
	}
	if fb := e.board(t, e.a.Token); fb.Games["done"] != 6 || !fb.FrozenAt.IsZero() {
		t.Errorf("after the reveal a team sees %+v, want all 6 games", fb)
	}
	if _, revealed := checkpoint(); revealed.Size != logged {
		t.Errorf("after the reveal the log shows %d entries, want %d", revealed.Size, logged)
	}
	if res, out := tile(logged); res != http.StatusOK {
		t.Errorf("the entries after the reveal: %d %.300s", res, out)
	}
	// The checkpoint kept during the freeze: the published final extends it.
	bundle := filepath.Join(t.TempDir(), "bundle")
	if _, err := e.store.PublishFinal(ctx, bundle); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Bundle(ctx, verify.Dir(bundle), verify.Options{Key: vkey, Since: [][]byte{kept}}); err != nil {
		t.Errorf("the published final against the checkpoint kept during the freeze: %v", err)
	}
	// Started again, the final finds every game played: nothing is played
	// or recorded twice.
	if res, out := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final again: %d %s", res.StatusCode, out)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if run, _, _ := e.store.FinalRun(ctx); !run.Finished.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the final started again did not end")
		}
	}
	if v, err := e.store.FinalVersion(ctx); err != nil || !strings.HasPrefix(v, "6/") {
		t.Errorf("after starting again the event holds %q games of the final (%v), want 6", v, err)
	}
}

// sameRow compares two standings' rows, the computed Elo to its last bits.
func sameRow(x, y tournament.Row) bool {
	near := func(a, b float64) bool { return a == b || (a-b < 1e-9 && b-a < 1e-9) }
	return x.Rank == y.Rank && x.Name == y.Name && x.Games == y.Games && x.Wins == y.Wins && x.Draws == y.Draws &&
		x.Losses == y.Losses && x.Points == y.Points && near(x.Elo, y.Elo)
}

// sameBoardRow compares a served row with the tournament's.
func sameBoardRow(x event.BoardRow, y tournament.Row) bool { return sameRow(x.Row, y) }

// A Swiss final, started over the API: its rounds are paired one by one
// from the results, each team sits one round out in a field of three, and
// the standings count each bye as a win; the run says its format.
func TestASwissFinal(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "gauntlet"}`), "application/json"); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "a final is round-robin, swiss, knockout, double-elimination, stages or rating, not") {
		t.Errorf("a gauntlet final: %d %s, want 400", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "swiss", "rounds": 3, "games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start a Swiss final: %d %s", res.StatusCode, body)
	}
	b := e.finalEnded(t)
	if b.Run.Error != "" || b.Run.Format != tournament.Swiss || b.Run.Rounds != 3 || b.Games["done"] != 6 || b.Games["total"] != 6 {
		t.Fatalf("the Swiss final ended with %+v, want 3 rounds of one pairing, 6 games", b)
	}
	state, err := tournament.Load(ctx, filepath.Join(e.dir, event.FinalDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Summary.Standings {
		if r.Byes != 1 || r.Games != 4 {
			t.Errorf("%s: %d byes, %d games; want each team one bye and two pairings", r.Name, r.Byes, r.Games)
		}
	}
	if state.Config.Format != tournament.Swiss || state.Config.TieBreaks[0] != tournament.BuchholzCut1 {
		t.Errorf("the final's tournament: %s, tie-breaks %v", state.Config.Format, state.Config.TieBreaks)
	}
	// The rounds with their pairings: one pairing of two games and a bye
	// each, on the board and on the home page.
	byes := map[string]bool{}
	for i, r := range b.Rounds {
		if r.Round != i+1 || len(r.Pairings) != 1 || r.Bye == "" || r.Pairings[0].WhitePoints+r.Pairings[0].BlackPoints != 2 || r.Pairings[0].Left != 0 {
			t.Errorf("round %d on the board: %+v", i+1, r)
		}
		byes[r.Bye] = true
	}
	if len(b.Rounds) != 3 || len(byes) != 3 {
		t.Errorf("the board's rounds %+v: want 3, each team a bye once", b.Rounds)
	}
	_, page := callAPI(t, e.http.URL, "GET", "/", "", "")
	if !strings.Contains(page, `<section id="rounds">`) || strings.Count(page, "bye (a win") != 3 {
		t.Errorf("the home page does not show the rounds with their byes")
	}
	// The table shows the tie-breaks it is sorted by, in their order, and
	// says what placed each team; so does the API.
	table := regexp.MustCompile(`(?s)<table class="list" id="standings">.*?</thead>`).FindString(page)
	if !strings.Contains(table, "<th>BH-1</th><th>BH</th><th>SB</th>") || !strings.Contains(table, "Placed by") {
		t.Errorf("the Swiss final's table heads: %s", table)
	}
	if !strings.Contains(page, "Teams level on points are placed by Buchholz cut 1 (BH-1") {
		t.Errorf("the home page does not say how teams level on points are placed")
	}
	// Each team sees where it stands: the final's stage and its place.
	for _, tok := range []string{e.a.Token, e.b.Token} {
		_, team := callAPI(t, e.http.URL, "GET", "/team", tok, "")
		_, home := callAPI(t, e.http.URL, "GET", "/", tok, "")
		for _, pg := range []string{team, home} {
			if !strings.Contains(pg, `id="my-final"`) || !strings.Contains(pg, "swiss, 3 rounds: round 3 of 3") || !strings.Contains(pg, "You placed <strong>") {
				t.Errorf("a team's page does not say where it stands in the final: %.400s", regexp.MustCompile(`(?s)<section class="card" id="my-final">.*?</section>`).FindString(pg))
			}
		}
		if !strings.Contains(home, `<body data-team="`) || !strings.Contains(home, `<tr data-team="`) {
			t.Error("the home page does not let its script mark the team's row")
		}
	}
	if !strings.Contains(b.Stage, "round 3 of 3") {
		t.Errorf("the board's stage: %q", b.Stage)
	}
	if !slices.Equal(b.TieBreaks, state.Config.TieBreaks) {
		t.Errorf("the API's tie-breaks %v, the final's %v", b.TieBreaks, state.Config.TieBreaks)
	}
	for i, r := range state.Summary.Standings {
		if r.DecidedBy != "" && !strings.Contains(page, `<td class="decided-by">`+r.DecidedBy+`</td>`) {
			t.Errorf("row %d's tie-break %q is not on the page", i+1, r.DecidedBy)
		}
	}
}

// The pages draw a bracket (the template "bracket") as the report does:
// the same SVG, every name as text.
func TestThePagesDrawABracketAsTheReportDoes(t *testing.T) {
	t.Parallel()
	const hostile = `<img src=x onerror="alert(1)">'&`
	b := &tournament.Bracket{Width: 460, Height: 180, Double: true, FinalX: 230, LosersY: 150, Matches: []tournament.BracketMatch{
		{X: 0, Y: 22, W: 190, H: 44, NoteX: 8, NoteY: 49, Sides: []tournament.BracketSide{
			{X: 8, Y: 40, ScoreX: 182, Name: "1. " + hostile, Points: "1.5", Won: true},
			{X: 8, Y: 58, ScoreX: 182, Name: "2. beta", Points: "0.5"}}},
		{X: 230, Y: 22, W: 190, H: 44, Skipped: true, NoteX: 238, NoteY: 49,
			From: []tournament.BracketLine{{X1: 190, Y1: 44, XMid: 210, Y2: 44, X2: 230}}},
	}}
	page, err := fragment("home", "bracket", b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(page), b.SVG(); got != want {
		t.Errorf("the page's bracket:\n%s\nthe report's:\n%s", got, want)
	}
	if !strings.Contains(string(page), ">1. &lt;img src=x onerror=&#34;alert(1)&#34;&gt;&#39;&amp;<") {
		t.Errorf("the bracket does not show a name as text:\n%s", page)
	}
}

// A knockout final, started over the API: seeded by the ladder, its
// bracket drawn on the home page (no script, no style element: the page's
// policy holds), the places by how far each team went; frozen, the bracket
// a team sees is the one of the games finished by then.
func TestAKnockoutFinal(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "knockout", "games_per_pair": 2}`), "application/json")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("start a knockout final: %d %s", res.StatusCode, body)
	}
	// The answer is the run it started.
	var answer event.Board
	if err := json.Unmarshal([]byte(body), &answer); err != nil || answer.Run.Started.IsZero() || answer.Run.Format != tournament.Knockout {
		t.Errorf("the final's start answered %s (%v)", body, err)
	}
	b := e.finalEnded(t)
	// It ended when its last game did.
	played, _, err := e.store.ListGames(ctx, event.GameQuery{Kind: event.FinalGame, Limit: 100})
	if err != nil || len(played) == 0 {
		t.Fatal(err)
	}
	last := slices.MaxFunc(played, func(x, y event.Game) int { return x.Finished.Compare(y.Finished) })
	if d := b.Run.Finished.Sub(last.Finished); d < -time.Millisecond || d > time.Millisecond || !b.Run.Started.Equal(answer.Run.Started) {
		t.Errorf("the final started at %v and ended at %v; it was answered as started at %v, its last game ended at %v",
			b.Run.Started, b.Run.Finished, answer.Run.Started, last.Finished)
	}
	if b.Run.Error != "" || b.Run.Format != tournament.Knockout || len(b.Standings) != 3 || b.Standings[0].Rank != 1 || b.Standings[1].Rank != 2 || b.Standings[2].Rank != 3 {
		t.Fatalf("the knockout final ended with %+v", b)
	}
	bracket := func(token string) string {
		t.Helper()
		_, page := callAPI(t, e.http.URL, "GET", "/", token, "")
		return regexp.MustCompile(`(?s)<section id="bracket">.*?</section>`).FindString(page)
	}
	svg := bracket("")
	if !strings.Contains(svg, "<svg") || strings.Contains(svg, "<style") || strings.Contains(svg, "<script") || strings.Count(svg, "<rect") != 3 {
		t.Errorf("the home page's bracket: %.600s", svg)
	}
	// Frozen as its first game finished, the bracket a team sees has no
	// match decided but the bye, and does not know who plays the final;
	// the organizer's is the whole one.
	games, _, err := e.store.ListGames(ctx, event.GameQuery{Kind: event.FinalGame, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	first := slices.MinFunc(games, func(x, y event.Game) int { return x.Finished.Compare(y.Finished) })
	body = fmt.Sprintf(`{"at": %q}`, first.Finished.Format(time.RFC3339Nano))
	if res, out := e.do(t, http.MethodPost, "/api/v1/admin/freeze", e.admin, strings.NewReader(body), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("freeze: %d %s", res.StatusCode, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(bracket(e.a.Token), ">…<") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	frozen, whole := bracket(e.a.Token), bracket(e.admin)
	if won := strings.Count(frozen, `font-weight="700"`); !strings.Contains(frozen, ">…<") || won >= strings.Count(whole, `font-weight="700"`) || strings.Contains(whole, ">…<") {
		t.Errorf("the bracket a team sees during the freeze marks %d winners' lines (the organizer's %d):\n%s\nthe organizer's:\n%s",
			won/2, strings.Count(whole, `font-weight="700"`)/2, frozen, whole)
	}
}

// A double elimination, a stages and a rating final of three teams, each
// started over the API: played to their end, recorded as asked, the
// bracket drawn on the home page where there is one, the rounds listed
// where they were paired.
func TestTheOtherFinalFormats(t *testing.T) {
	for _, tc := range []struct {
		format, body    string
		bracket, rounds bool
		advance, budget int
		then            string
	}{
		{tournament.DoubleElimination, `{"format": "double-elimination", "games_per_pair": 1}`, true, false, 0, 0, ""},
		{tournament.Stages, `{"format": "stages", "rounds": 2, "advance": 2, "then": "double-elimination", "games_per_pair": 1}`, true, true, 2, 0, tournament.DoubleElimination},
		{tournament.Rating, `{"format": "rating", "budget": 6, "games_per_pair": 2}`, false, true, 0, 6, ""},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			threeTeamsForTheFinal(t, ctx, e)
			if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(tc.body), "application/json"); res.StatusCode != http.StatusOK {
				t.Fatalf("start the final: %d %s", res.StatusCode, body)
			}
			b := e.finalEnded(t)
			if b.Run.Error != "" || b.Run.Format != tc.format || b.Run.Advance != tc.advance || b.Run.Then != tc.then || b.Run.Budget != tc.budget || len(b.Standings) != 3 || b.Games["done"] != b.Games["total"] || b.Games["done"] == 0 {
				t.Fatalf("the final ended with %+v", b)
			}
			if b.Standings[0].Rank != 1 {
				t.Errorf("the standings: %+v", b.Standings)
			}
			_, page := callAPI(t, e.http.URL, "GET", "/", "", "")
			if got := strings.Contains(page, `<section id="bracket">`); got != tc.bracket {
				t.Errorf("the home page draws a bracket: %v, want %v", got, tc.bracket)
			}
			if got := strings.Contains(page, `<section id="rounds">`); got != tc.rounds {
				t.Errorf("the home page lists rounds: %v, want %v", got, tc.rounds)
			}
			if tc.format == tournament.Rating && b.Games["done"] > tc.budget {
				t.Errorf("a rating final of budget %d played %d games", tc.budget, b.Games["done"])
			}
		})
	}
}

// A final of the ladder's top two (a qualifying stage): the two play, the
// third does not, and its team page says why.
func TestAFinalOfTheLaddersTop(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := threeTeamsForTheFinal(t, ctx, e)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"top": 2, "games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start a final of the top two: %d %s", res.StatusCode, body)
	}
	b := e.finalEnded(t)
	if b.Run.Error != "" || b.Run.Top != 2 || len(b.Standings) != 2 || b.Games["done"] != 2 {
		t.Fatalf("the final of the top two ended with %+v", b)
	}
	for _, r := range b.Standings {
		if r.Team == "Gamma" {
			t.Errorf("Gamma, third with no rating, plays the final of the top two")
		}
	}
	if le := finalEntry(t, e); !slices.Equal(le.LeftOut, []event.LeftOut{{Team: "Gamma", Why: event.LeftOutNotTop}}) {
		t.Errorf("the log's final entry names left out %+v, want Gamma, not among the top", le.LeftOut)
	}
	if _, page := callAPI(t, e.http.URL, "GET", "/team", c.Token, ""); !strings.Contains(page, "yours is not among them") {
		t.Error("Gamma's page does not say it did not qualify")
	}
	if _, page := callAPI(t, e.http.URL, "GET", "/team", e.a.Token, ""); !strings.Contains(page, "The final plays your submission") {
		t.Error("Alpha's page does not say the final plays its submission")
	}
}

// finalEntry is the final's entry in the event's log: its first.
func finalEntry(t *testing.T, e *testEvent) event.LogEntry {
	t.Helper()
	ctx := context.Background()
	_, size, err := e.store.FinalLogCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range eventlog.Tiles(size) {
		if !strings.HasPrefix(p, "tile/entries/") {
			continue
		}
		data, err := e.store.FinalLogTile(ctx, p)
		if err != nil || len(data) < 2 {
			t.Fatalf("the log's first entries %s: %d bytes, %v", p, len(data), err)
		}
		var le event.LogEntry
		if err := json.Unmarshal(data[2:2+(int(data[0])<<8|int(data[1]))], &le); err != nil || le.Kind != event.LogFinal {
			t.Fatalf("the log's first entry %+v: %v", le, err)
		}
		return le
	}
	t.Fatal("the log holds no entry")
	return event.LogEntry{}
}

// A final resumed plays the players and the order it started with, stored
// then: a team renamed since (a round robin's order was by name) or a
// ladder changed since (a bracket's seeds) changes neither. A team that
// plays a final under way cannot be disabled: the page and the API say
// why; once the final has ended it can.
func TestAResumedFinalPlaysTheOrderItStartedWith(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := threeTeamsForTheFinal(t, ctx, e)
	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	f := services.Final{Settings: resolved, Backend: backend, Intake: submission.DefaultLimits(), Shape: event.Shape{GamesPerPair: 2},
		Builder: &build.Builder{Backend: backend, Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}}
	plan, err := services.PrepareFinal(ctx, e.store, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	names := func(entries []event.FinalEntry) (out []int64) {
		for _, en := range entries {
			out = append(out, en.Team)
		}
		return out
	}
	started := names(plan.Entries())
	// Alpha, Beta, Gamma by name; renamed, Alpha would come last.
	if _, err := e.store.Rename(ctx, e.a.ID, "Zulu"); err != nil {
		t.Fatal(err)
	}
	res, body := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/teams/%d/disable", c.ID), e.admin, nil, "")
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "Gamma plays the final, which runs") {
		t.Errorf("disabling a team of the final under way: %d %s", res.StatusCode, body)
	}
	// The page's form is answered by the organizer's page, saying why; a
	// reload of it shows the reason again and posts nothing.
	res, _ = e.do(t, http.MethodPost, fmt.Sprintf("/admin/teams/%d/disable", c.ID), e.admin, nil, "")
	where := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(where, "/admin?refused=") || !strings.HasSuffix(where, "#teams") {
		t.Fatalf("the page's disable of a team of the final under way: %d to %q", res.StatusCode, where)
	}
	for range 2 {
		if res, page := e.do(t, http.MethodGet, where, e.admin, nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(page, "disable it once the final has ended") {
			t.Errorf("the page a refusal leads to: %d %.300s", res.StatusCode, page)
		}
	}
	if _, page := e.do(t, http.MethodGet, "/admin?refused=Go%20to%20evil.example", e.admin, nil, ""); strings.Contains(page, "evil.example") {
		t.Error("the organizer's page shows a reason a link carries")
	}
	run, _, err := e.store.FinalRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	resumed, err := services.PrepareFinal(ctx, e.store, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _, err := e.store.FinalRun(ctx); err != nil || !again.Started.Equal(run.Started) {
		t.Errorf("the final started at %v; resumed, it says %v (%v)", run.Started, again.Started, err)
	}
	if got := names(resumed.Entries()); !slices.Equal(got, started) {
		t.Errorf("the final started with teams %v, resumes with %v", started, got)
	}
	if tm, err := e.store.Team(ctx, c.ID); err != nil || tm.Disabled {
		t.Errorf("Gamma was disabled during the final: %+v %v", tm, err)
	}
}

// The final's log commits to the final as it plays: its configuration and
// players (no server path), every pairing and every game, in that order;
// its checkpoint, served at /log/checkpoint, verifies with the event's
// published key, and the tiles served under /log/tile rebuild the tree
// it signs.
func TestTheFinalsLogCommitsToEveryGame(t *testing.T) {
	ant, err := witness.NewSigner("team-ant", ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n[log]\nwitnesses = [\"http://127.0.0.1:9 "+ant.VerifierKey()+"\"]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	// Two teams the final does not play: its entry names them, and why.
	if _, err := e.store.AddTeam(ctx, "Delta & co", "", ""); err != nil {
		t.Fatal(err)
	}
	off, err := e.store.AddTeam(ctx, "Epsilon", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetDisabled(ctx, off.ID, true); err != nil {
		t.Fatal(err)
	}
	if res, body := callAPI(t, e.http.URL, "GET", "/log/checkpoint", "", ""); res != http.StatusNotFound {
		t.Errorf("a checkpoint before the final: %d %s", res, body)
	}
	_, vkey, err := e.store.LogKeys()
	if err != nil {
		t.Fatal(err)
	}
	// The key is on the home page before the final starts.
	if _, home := callAPI(t, e.http.URL, "GET", "/", "", ""); !strings.Contains(html.UnescapeString(home), `<code id="log-key">`+vkey+`</code>`) {
		t.Errorf("the home page does not show the log's key %s before the final: %s", vkey, regexp.MustCompile(`(?s)<section id="final-log">.*?</section>`).FindString(home))
	}
	// And its witnesses' keys, not where they answer.
	if _, home := callAPI(t, e.http.URL, "GET", "/", "", ""); !strings.Contains(html.UnescapeString(home), `<ul id="log-witnesses"><li><code>`+ant.VerifierKey()+`</code></li></ul>`) || strings.Contains(home, "127.0.0.1:9") {
		t.Errorf("the home page's witnesses: %s", regexp.MustCompile(`(?s)<section id="final-log">.*?</section>`).FindString(home))
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "swiss", "rounds": 3, "games_per_pair": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start a Swiss final: %d %s", res.StatusCode, body)
	}
	if b := e.finalEnded(t); b.Run.Error != "" {
		t.Fatalf("the final: %s", b.Run.Error)
	}
	res, signed := callAPI(t, e.http.URL, "GET", "/log/checkpoint", "", "")
	if res != http.StatusOK {
		t.Fatalf("the checkpoint: %d %s", res, signed)
	}
	c, err := eventlog.Verify([]byte(signed), vkey)
	if err != nil {
		t.Fatal(err)
	}
	var entries [][]byte
	for _, p := range eventlog.Tiles(c.Size) {
		res, data := callAPI(t, e.http.URL, "GET", "/log/"+p, "", "")
		if res != http.StatusOK {
			t.Fatalf("tile %s: %d %s", p, res, data)
		}
		for b := []byte(data); strings.HasPrefix(p, "tile/entries/") && len(b) > 0; {
			n := int(b[0])<<8 | int(b[1])
			entries = append(entries, b[2:2+n])
			b = b[2+n:]
		}
	}
	if root, err := eventlog.RootOf(entries); err != nil || root != c.Hash || int64(len(entries)) != c.Size {
		t.Fatalf("the tiles' %d entries' root %s, the checkpoint's %d, %s (%v)", len(entries), root, c.Size, c.Hash, err)
	}
	state, err := tournament.Load(ctx, filepath.Join(e.dir, event.FinalDir))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	paired := map[int]bool{}
	roundOf := map[int]int{}     // pairing id -> its round
	firstGame := map[int]int{}   // round -> the entry of its first game
	lastPairing := map[int]int{} // round -> the entry of its last pairing
	for i, raw := range entries {
		var le event.LogEntry
		if err := json.Unmarshal(raw, &le); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		kinds = append(kinds, le.Kind)
		switch le.Kind {
		case event.LogFinal:
			left := []event.LeftOut{{Team: "Delta & co", Why: event.LeftOutNoSubmission}, {Team: "Epsilon", Why: event.LeftOutDisabled}}
			if le.Bots != 3 || len(le.Config.Bots) != 0 || le.Config.Format != tournament.Swiss || !slices.Equal(le.LeftOut, left) {
				t.Errorf("the final's entry: %s", raw)
			}
		case event.LogPlayer:
			if le.Player.Source != "" || le.Player.SHA256 != state.Config.Bots[*le.Seed].SHA256 {
				t.Errorf("a player's entry: %s", raw)
			}
			// The submission's hash as its team's page shows it, beside the
			// program's as played.
			seeds, err := e.store.FinalSeeds(ctx)
			uploaded := map[string]string{}
			for _, s := range seeds {
				uploaded[s.Name] = s.SHA256
			}
			if err != nil || le.Upload == "" || le.Upload != uploaded[le.Player.Team] {
				t.Errorf("a player's entry: %s; the teams' submissions %v (%v)", raw, uploaded, err)
			}
		case event.LogPairing:
			paired[le.Pairing.ID] = true
			roundOf[le.Pairing.ID] = le.Pairing.Round
			lastPairing[le.Pairing.Round] = i
		case event.LogGame:
			g := le.Game
			if !paired[g.ID] {
				t.Errorf("game %d was logged before its pairing", g.ID)
			}
			if _, ok := firstGame[roundOf[g.ID]]; !ok {
				firstGame[roundOf[g.ID]] = i
			}
			rec := state.Games[g.ID-1]
			if rec.ID != g.ID || rec.Winner != g.Winner || rec.Reason != g.Reason || g.White != state.Config.Bots[rec.White].SHA256 {
				t.Errorf("game %d's entry %s, its record %+v", g.ID, raw, rec)
			}
			lines, err := transcript.ReadFile(filepath.Join(e.dir, g.Dir, transcript.FileName))
			if err != nil {
				t.Fatal(err)
			}
			pub, err := transcript.Redact(lines, "")
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(pub); hex.EncodeToString(sum[:]) != g.Public || lines[len(lines)-1].Hash != g.Head {
				t.Errorf("game %d's entry does not name its transcript's public copy and head", g.ID)
			}
		}
	}
	// Each Swiss round is logged, and signed, whole as it is paired, before
	// any of its games is: a checkpoint holds its pairings and none of its
	// games.
	history, err := e.store.FinalLogCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for round, last := range lastPairing {
		signedAlone := false
		for _, note := range history {
			c, err := eventlog.Verify(note, vkey)
			if err != nil {
				t.Fatal(err)
			}
			first, played := firstGame[round]
			if c.Size > int64(last) && (!played || c.Size <= int64(first)) {
				signedAlone = true
			}
		}
		if !signedAlone {
			t.Errorf("round %d's pairings were not signed before its first game", round)
		}
	}
	if len(lastPairing) != 3 {
		t.Errorf("pairings of %d rounds logged, want 3", len(lastPairing))
	}
	want := []string{event.LogFinal, event.LogPlayer, event.LogPlayer, event.LogPlayer}
	if !slices.Equal(kinds[:4], want) || strings.Count(strings.Join(kinds, " "), event.LogGame) != len(state.Games) {
		t.Errorf("the log's entries: %v, want the final, its 3 players, then pairings and %d games", kinds, len(state.Games))
	}
	if kinds[len(kinds)-1] != event.LogEnd || strings.Count(strings.Join(kinds, " "), event.LogEnd) != 1 {
		t.Errorf("the log's entries: %v, want the final's end once, last", kinds)
	}
	if strings.Contains(strings.Join(func() []string {
		var s []string
		for _, r := range entries {
			s = append(s, string(r))
		}
		return s
	}(), "\n"), e.dir) {
		t.Error("the log names the server's paths")
	}
	for _, bad := range []string{"/log/tile/0/999", "/log/tile/8/0/000", "/log/tile/entries/000.p/250", "/log/tile/..%2fevent.db"} {
		if res, _ := callAPI(t, e.http.URL, "GET", bad, "", ""); res != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, res)
		}
	}
}
