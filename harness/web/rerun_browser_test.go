package web

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// TestALadderDisputeRerunsAnyTurn: a ladder game of a bot that keeps a data
// file, played by the event's player under the default retention; its team
// disputes it, and the organizer runs again, from the organizer's page in
// the browser, a turn that began with a data file, then every turn of the
// team's over the API: each reproduces. A game whose data files the
// organizer chose not to keep answers 409 with the turns that can be run
// again, on the page and over the API, never 500.
func TestALadderDisputeRerunsAnyTurn(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	e := newTestEvent(t, "game = \"codeclash\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	passedUpload(t, e, e.a.ID, "./examples/random")
	passedUpload(t, e, e.b.ID, "./examples/greedy")
	greedy := loadBot(t, "./examples/greedy")
	playsFinals(t, ctx, e, greedy) // the server's rerunner

	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	_, key, _ := ed25519.GenerateKey(nil)
	pctx, stop := context.WithCancel(ctx)
	p := &services.Player{Store: e.store, Settings: resolved, Backend: backend, Builder: &build.Builder{Backend: backend,
		Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}, Intake: submission.DefaultLimits(),
		ArenaVersion: "test", Signer: key, Changed: e.server.TeamChanged, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ladder: true, Open: e.server.Config.Open, Seed: 7, Slots: 1, LadderEvidence: e.server.Config.LadderEvidence()}
	done := make(chan error, 1)
	go func() { done <- p.Run(pctx) }()
	var games []event.Game
	for deadline := time.Now().Add(2 * time.Minute); len(games) < 2; time.Sleep(200 * time.Millisecond) {
		if games, err = e.store.GamesOf(ctx, e.a.ID, 10); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no ladder pair was played in 2 minutes")
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	game := games[0]
	if game.Kind != event.LadderGame {
		t.Fatalf("not a ladder game: %+v", game)
	}
	// A's turns, and one of them that began with a data file.
	side := "white"
	if game.Black.Team == e.a.ID {
		side = "black"
	}
	var mine []int
	withData := 0
	lines, err := transcript.ReadFile(filepath.Join(e.store.MatchDir(game), transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, l := range lines {
		var turn transcript.Turn
		if l.Type != transcript.TypeTurn || l.Decode(&turn) != nil || turn.Side != side {
			continue
		}
		if kept && withData == 0 && len(mine) > 2 {
			withData = turn.Ply
		}
		mine = append(mine, turn.Ply)
		kept = len(turn.DataFiles) > 0
	}
	if withData == 0 {
		t.Fatalf("Alpha's turns %v: none began with a data file", mine)
	}
	dispute := fileDispute(t, e, game.ID, "My bot never plays like that.")

	b := openTab(t, e.http.URL, 3*time.Minute)
	b.login(e.admin)
	form := fmt.Sprintf(`form[action="/admin/disputes/%d/rerun"]`, dispute)
	eval[bool](b, fmt.Sprintf(`(document.querySelector(%q).value = "%d", true)`, form+` input[name=ply]`, withData))
	b.follow(form + ` button`)
	b.waitFor("the rerun shows", fmt.Sprintf(`(document.querySelector("#dispute-%d pre.rerun") || {}).textContent !== undefined`, dispute), 30*time.Second)
	if text := eval[string](b, fmt.Sprintf(`document.querySelector("#dispute-%d pre.rerun").textContent`, dispute)); !strings.Contains(text, "2 of 2 runs reproduce the recorded move and verdict") {
		t.Errorf("turn %d run again from the page: %q", withData, text)
	}
	b.screenshot("ladder-dispute-rerun")

	for _, ply := range mine {
		res, out := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/rerun", dispute), e.admin, strings.NewReader(fmt.Sprintf(`{"ply": %d}`, ply)), "application/json")
		if res.StatusCode != http.StatusOK || !strings.Contains(out, "2 of 2 runs reproduce the recorded move and verdict") {
			t.Errorf("turn %d over the API: %d %.400s", ply, res.StatusCode, out)
		}
	}

	// The organizer's own choice: a ladder game that kept each side's last
	// data file only.
	dir := filepath.Join(e.dir, event.LadderDir, "kept-final")
	if _, err := match.Run(ctx, match.Config{Game: codeclash.Game{}, Seed: 3, White: loadBot(t, "./examples/random"), Black: greedy,
		Backend: backend, Limits: sandbox.DefaultLimits(), Dir: dir, Evidence: transcript.Evidence{Keep: transcript.KeepFinal}}); err != nil {
		t.Fatal(err)
	}
	subs, err := e.store.Submissions(ctx, e.a.ID)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.store.AddGame(ctx, event.LadderGame, dir, event.Side{Team: e.a.ID, Submission: subs[0].ID}, event.Side{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := fileDispute(t, e, g.ID, "And this one?")
	res, out := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/rerun", other), e.admin, strings.NewReader(`{"ply": 15}`), "application/json")
	if res.StatusCode != http.StatusConflict || !strings.Contains(out, "evidence policy: final") || !strings.Contains(out, "the turns that can be run again: 1") {
		t.Errorf("a turn whose data file was not kept, over the API: %d %s", res.StatusCode, out)
	}
	b.open("/admin")
	form = fmt.Sprintf(`form[action="/admin/disputes/%d/rerun"]`, other)
	eval[bool](b, fmt.Sprintf(`(document.querySelector(%q).value = "15", true)`, form+` input[name=ply]`))
	b.follow(form + ` button`)
	if text := eval[string](b, `(document.querySelector("#refused") || {textContent: ""}).textContent`); !strings.Contains(text, "the turns that can be run again: 1") {
		t.Errorf("a turn whose data file was not kept, on the page: %q", text)
	}
	b.screenshot("ladder-dispute-refused")
	b.noExceptions()
}

// fileDispute files a dispute of game as team A over the API.
func fileDispute(t *testing.T, e *testEvent, game int64, message string) int64 {
	t.Helper()
	res, out := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/games/%d/disputes", game), e.a.Token, strings.NewReader(fmt.Sprintf(`{"message": %q}`, message)), "application/json")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("file a dispute: %d %s", res.StatusCode, out)
	}
	var filed struct{ Dispute event.Dispute }
	if err := json.Unmarshal([]byte(out), &filed); err != nil {
		t.Fatal(err)
	}
	return filed.Dispute.ID
}
