package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// TestAFortyTeamStagesFinalInTheBrowser: forty teams play a stages final
// (a Swiss qualifier, its top 8 in a double elimination) on `arena serve`.
// Mid-Swiss the organizer tries to disable a team that plays it: refused,
// with the reason, and the team plays on. The server is killed with
// SIGKILL mid-Swiss and again mid-bracket, and started again each time:
// the final resumes where it was, and ends with every game of its schedule
// played once. At every stage one team's pages, looked at in Chromium at
// 1280 pixels wide, say where it stands: the stage, its place, its next
// match, its row marked.
func TestAFortyTeamStagesFinalInTheBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	const teams = 40
	names := make([]string, teams)
	for i := range names {
		names[i] = fmt.Sprintf("Team %02d (O'Neil & Co)", i+1)
	}
	var made []event.NewTeam
	e := writeEvent(t, "game = \"codeclash\"\n[rules]\nmaxPlies = \"16\"\n[ladder]\nenabled = false\n", passedBots(t, &made, "./examples/greedy", "./examples/random"), names...)
	serve := func() *arenaServer {
		return startServe(t, e.dir, "--sandbox", "local", "--games", "2", "--validators", "1")
	}
	srv := serve()
	board := func() event.Board {
		t.Helper()
		code, data, err := send(context.Background(), "GET", srv.URL+"/api/v1/standings", e.admin, "", nil)
		var b event.Board
		if err != nil || code != http.StatusOK || json.Unmarshal(data, &b) != nil {
			t.Fatalf("standings: %d %v %s", code, err, data)
		}
		return b
	}
	code, data, err := send(context.Background(), "POST", srv.URL+"/api/v1/admin/final", e.admin, "application/json",
		[]byte(`{"format": "stages", "rounds": 3, "advance": 8, "then": "double-elimination", "games_per_pair": 1, "concurrency": 2}`))
	if err != nil || code != http.StatusOK {
		t.Fatalf("start the final: %d %v %s", code, err, data)
	}
	// The team followed: one of the greedy bots, likely to go through.
	me := made[2]
	b := openTab(t, srv.URL, 10*time.Minute)
	b.login(me.Token)
	look := func(stage string) {
		t.Helper()
		for _, path := range []string{"/", "/team"} {
			b.open(path)
			b.waitFor("the team's final", `document.getElementById("my-final") !== null`, 20*time.Second)
			text := eval[string](b, `document.getElementById("my-final").textContent`)
			if !strings.Contains(text, "You stand") && !strings.Contains(text, "You placed") {
				t.Errorf("%s, %s: the team's final says %q", stage, path, text)
			}
			if path == "/" {
				marked := eval[string](b, `(document.querySelector("#standings tr.mine") || {dataset: {}}).dataset.team || ""`)
				if marked != me.Name {
					t.Errorf("%s: the home page marks %q's row, want %q", stage, marked, me.Name)
				}
			}
			b.screenshot("forty-" + stage + strings.ReplaceAll(path, "/", "-"))
		}
	}
	wait := func(what string, done func(event.Board) bool) event.Board {
		t.Helper()
		for deadline := time.Now().Add(6 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
			bd := board()
			if done(bd) {
				return bd
			}
			if bd.Run.Error != "" || time.Now().After(deadline) {
				t.Fatalf("%s: the final stands at %s, %v (%s); the server's log:\n%s", what, bd.Stage, bd.Games, bd.Run.Error, srv.Logs())
			}
		}
	}
	inQualifier := func(bd event.Board) bool { return strings.Contains(bd.Stage, "qualifier's round 2") }
	bd := wait("the qualifier's second round", inQualifier)
	look("swiss")
	if !strings.Contains(bd.Stage, "its top 8 go on to a double elimination") || bd.Cut != 8 || len(bd.Standings) != teams {
		t.Errorf("mid-Swiss, the board: stage %q, cut %d, %d rows", bd.Stage, bd.Cut, len(bd.Standings))
	}
	// The organizer tries to disable a team that plays: refused, with why.
	code, data, _ = send(context.Background(), "POST", fmt.Sprintf("%s/api/v1/admin/teams/%d/disable", srv.URL, made[5].ID), e.admin, "", nil)
	if code != http.StatusConflict || !bytes.Contains(data, []byte("plays the final, which runs")) {
		t.Errorf("disabling a team mid-final: %d %s", code, data)
	}

	// Killed mid-Swiss, started again: it resumes.
	srv.Kill()
	srv = serve()
	b.base = srv.URL
	b.login(me.Token)
	wait("the qualifier after the restart", func(bd event.Board) bool { return bd.Run.Running() && bd.Games["done"] > 0 })
	look("swiss-resumed")

	// Killed mid-bracket, started again.
	wait("the bracket", func(bd event.Board) bool {
		return strings.Contains(bd.Stage, "second stage") && bd.Games["done"] < bd.Games["total"]-4
	})
	look("bracket")
	srv.Kill()
	srv = serve()
	b.base = srv.URL
	b.login(me.Token)
	bd = wait("the end", func(bd event.Board) bool { return !bd.Run.Finished.IsZero() })
	look("over")
	if bd.Run.Error != "" || bd.Games["done"] != bd.Games["total"] || len(bd.Standings) != teams {
		t.Errorf("the final ended with %v, %q, %d rows", bd.Games, bd.Run.Error, len(bd.Standings))
	}
	srv.Stop(t)
	checkPlayedOnce(t, e.dir)
	if !strings.Contains(srv.Logs(), "it resumes") {
		t.Errorf("the restarted server did not say it resumes the final:\n%s", srv.Logs())
	}
}
