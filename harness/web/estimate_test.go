package web

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// Before the final starts, the organizer's page says how many games each
// format plays and how long that takes, from the games played here;
// changing the format, its choices, the games per pair or how many play
// at once in the form changes it as the server says it, and the fields
// of other formats step aside.
func TestTheFinalsEstimateFollowsTheForm(t *testing.T) {
	chromiumPath(t)
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	seedGames(t, e.store, e.a, e.b, 4)
	est, err := e.store.FinalEstimate(ctx, event.Shape{GamesPerPair: 5}, 3, 2)
	// 15 games, 2 at once: 8 games' time at least (a playoff adds more).
	if err != nil || est.Formats[0].Games != 15 || est.MeanGame <= 0 || est.Sample == 0 || est.Formats[0].Duration < 8*est.MeanGame || est.Formats[0].Played < 15 {
		t.Fatalf("the estimate of 3 teams, 5 games a pair, 2 at once: %+v %v", est, err)
	}
	// What the server estimates for a shape, as the page says it.
	estimated := func(shape event.Shape, atOnce int) string {
		t.Helper()
		est, err := e.store.FinalEstimate(ctx, shape, 3, atOnce)
		if err != nil {
			t.Fatal(err)
		}
		return est.Chosen().String()
	}

	_, page := callAPI(t, e.http.URL, "GET", "/admin", e.admin, "")
	served := regexp.MustCompile(`(?s)<div id="estimate">.*?</ul>`).FindString(page)
	if !strings.Contains(served, `<li class="chosen" data-format="round-robin">round robin: 6 games, `) || !strings.Contains(served, `swiss, 4 rounds: 8 games`) || !strings.Contains(served, "a game (the mean of the last 3 ladder and final games played here") {
		t.Fatalf("the served estimate: %s", served)
	}
	b := openTab(t, e.http.URL, 2*time.Minute)
	b.login(e.admin)
	b.open("/admin")
	b.waitFor("the script's first estimate", `document.getElementById("estimate").dataset.ready !== undefined`, 20*time.Second)
	text := func() string { return eval[string](b, `document.getElementById("estimate").textContent`) }
	// The script's first answer is the page's, word for word.
	if got, want := text(), html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(strings.TrimPrefix(served, `<div id="estimate">`), "")); got != want {
		t.Errorf("the page's estimate %q, the server's %q", got, want)
	}
	change := func(js string) {
		t.Helper()
		eval[bool](b, `(() => { const f = document.getElementById("start-final"); `+js+`; delete document.getElementById("estimate").dataset.ready; f.dispatchEvent(new Event("input")); return true; })()`)
		b.waitFor("the estimate again", `document.getElementById("estimate").dataset.ready !== undefined`, 20*time.Second)
	}
	change(`f.elements.games_per_pair.value = "5"; f.elements.concurrency.value = "2"`)
	if got, want := text(), "5 games a pair, 2 at once"; !strings.Contains(got, want) || !strings.Contains(got, est.Formats[0].String()) {
		t.Errorf("after the form changed the estimate reads %q, want %q and %q", got, want, est.Formats[0])
	}
	hidden := func(name string) bool {
		return eval[bool](b, `document.getElementById("start-final").elements.`+name+`.closest("label").hidden`)
	}
	if !hidden("rounds") || !hidden("budget") || !hidden("advance") {
		t.Error("a round robin's form shows the other formats' fields")
	}
	change(`f.elements.format.value = "swiss"; f.elements.rounds.value = "3"`)
	want := estimated(event.Shape{Format: "swiss", Rounds: 3, GamesPerPair: 5}, 2)
	if got := eval[string](b, `document.querySelector("#estimate li.chosen").textContent`); got != want || !strings.HasPrefix(got, "swiss, 3 rounds: 15 games, ") {
		t.Errorf("a Swiss final of 3 rounds: the chosen line reads %q, want %q", got, want)
	}
	if hidden("rounds") || !hidden("budget") {
		t.Error("a Swiss final's form hides its rounds, or shows a budget")
	}
	change(`f.elements.format.value = "rating"; f.elements.budget.value = "40"`)
	if got := eval[string](b, `document.querySelector("#estimate li.chosen").textContent`); !strings.HasPrefix(got, "rating, where the ranks are least sure: at most 40 games") {
		t.Errorf("a rating final of 40 games: the chosen line reads %q", got)
	}
	b.noExceptions()
	b.noRefusals()
	b.screenshot("estimate")
}
