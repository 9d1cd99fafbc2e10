package web

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
)

// A stages final of four teams playing one bot: each side-swapped pair is
// split, so every team is level on points and on every tie-break at the
// cut and again for first place. Neither is drawn by lot: the cut's
// playoff is played before the second stage is seeded, the title's after
// it, and the board, its pages and the API say so.
func TestAFinalLevelAfterEveryTieBreakPlaysItsPlayoffs(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	teams := []int64{e.a.ID, e.b.ID}
	tokens := map[string]string{"Alpha": e.a.Token, "Beta": e.b.Token}
	for _, name := range []string{"Gamma", "Delta (4th)"} {
		c, err := e.store.AddTeam(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		teams, tokens[name] = append(teams, c.ID), c.Token
	}
	for _, id := range teams {
		passedUpload(t, e, id, "./examples/greedy")
	}
	playsFinals(t, ctx, e, nil)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "stages", "rounds": 2, "advance": 2, "then": "round-robin", "games_per_pair": 2, "concurrency": 2, "playoff": "x"}`), "application/json"); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "playoff: want places such as 1,16") {
		t.Errorf("a final with playoff x: %d %s, want 400 with the reason", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, strings.NewReader(`{"format": "stages", "rounds": 2, "advance": 2, "then": "round-robin", "games_per_pair": 2, "concurrency": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	b := e.finalEnded(t)
	if b.Run.Error != "" || b.Games["done"] != b.Games["total"] {
		t.Fatalf("the final ended with %+v", b)
	}
	if !slices.Equal(b.PlayoffPlaces, []int{1, 2}) {
		t.Errorf("the board's playoff places %v, want first place and the cut (2)", b.PlayoffPlaces)
	}
	after := map[int]bool{} // the rounds a playoff followed
	for _, r := range b.Playoffs {
		after[r.Round] = true
		for _, p := range r.Pairings {
			if p.Left != 0 {
				t.Errorf("a playoff pairing of a final over has games to play: %+v", r)
			}
		}
	}
	if !after[2] || len(after) != 2 {
		t.Errorf("playoffs after rounds %v; want one after the qualifier's round 2 and one after the second stage", after)
	}
	if b.Playoffs[0].Playoff != 1 || len(b.Playoffs[0].Pairings) != 6 {
		t.Errorf("the cut's first playoff round: %+v; want a pair for each two of the four teams", b.Playoffs[0])
	}
	for i, r := range b.Standings {
		if r.ByLot {
			t.Errorf("place %d (%s) was drawn by lot", i+1, r.Team)
		}
	}
	if b.Standings[0].DecidedBy != tournament.PlayoffTieBreak || b.Standings[1].DecidedBy != tournament.PlayoffTieBreak {
		t.Errorf("first place is placed by %q, the cut by %q; want the playoff", b.Standings[0].DecidedBy, b.Standings[1].DecidedBy)
	}
	state, err := tournament.Load(ctx, e.dir+"/"+event.FinalDir)
	if err != nil {
		t.Fatal(err)
	}
	if n := state.Config.Planned(); b.Games["total"] <= n {
		t.Errorf("%d games played, the format's own %d: no playoff game counted", b.Games["total"], n)
	}
	_, page := callAPI(t, e.http.URL, "GET", "/", "", "")
	for _, want := range []string{`<section id="playoffs">`, "Playoff after round 2: side-swapped pairs", "Playoff after round 2: decider", "teams still level on first place and place 2 before the draw play for it", `<td class="decided-by">playoff</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the home page does not say %q", want)
		}
	}
	if strings.Contains(page, `class="by-lot"`) {
		t.Error("the home page marks a place drawn by lot")
	}

	// In Chromium: the projector shows the whole table beside the playoff
	// at 1280 and 1920 pixels wide; the team last placed, out at the cut,
	// reads its place.
	projector := openTab(t, e.http.URL, 2*time.Minute)
	projector.open("/final/live")
	for _, w := range []int64{1280, 1920} {
		projector.do("a screen "+itoa(w)+" wide", chromedp.EmulateViewport(w, 1080))
		if bad := eval[string](projector, wholeTable); bad != "" {
			t.Errorf("the projector at %d px: %s", w, bad)
		}
		if !eval[bool](projector, `document.getElementById("playoffs") !== null`) {
			t.Errorf("the projector at %d px shows no playoff", w)
		}
		projector.screenshot("playoff-projector-" + itoa(w))
	}
	last := b.Standings[len(b.Standings)-1]
	out := openTab(t, e.http.URL, 2*time.Minute)
	out.login(tokens[last.Team])
	out.open("/team")
	if text := eval[string](out, `document.getElementById("my-final").textContent`); !strings.Contains(text, "You placed 4th of 4") || !strings.Contains(text, "playoff games after round") {
		t.Errorf("%s's final reads %q", last.Team, text)
	}
	out.screenshot("playoff-out-team")
}
