package web

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arenabots/arena/harness/event"
)

// Before the final starts, the organizer's page says how many games it
// plays and how long that takes, from the games played here; changing the
// games per pair or how many play at once in the form changes both at
// once, as the server would say them.
func TestTheFinalsEstimateFollowsTheForm(t *testing.T) {
	chromiumPath(t)
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	seedGames(t, e.store, e.a, e.b, 4)
	est, err := e.store.FinalEstimate(ctx, 3, 5, 2)
	if err != nil || est.Games != 15 || est.MeanGame <= 0 || est.Sample == 0 || est.Duration != 15*est.MeanGame/2 {
		t.Fatalf("the estimate of 3 teams, 5 games a pair, 2 at once: %+v %v", est, err)
	}

	_, page := api(t, e.http.URL, "GET", "/admin", e.admin, "")
	served := regexp.MustCompile(`(?s)<p id="estimate".*?</p>`).FindString(page)
	if !strings.Contains(served, `a round robin plays <span id="estimate-games">6</span> games`) || !strings.Contains(served, `a Swiss final of <span id="estimate-rounds">4</span> rounds <span id="estimate-swiss-games">8</span> games`) || !strings.Contains(served, "on average") {
		t.Fatalf("the served estimate: %s", served)
	}
	b := openTab(t, e.http.URL, 2*time.Minute)
	b.open("/login")
	b.do("type the organizer's token", chromedp.SendKeys(chromedp.CSS("#token"), e.admin))
	b.follow(`form[action="/login"] button[type=submit]`)
	b.open("/admin")
	text := func() string { return eval[string](b, `document.getElementById("estimate").textContent`) }
	// The script's first reckoning is the server's, word for word.
	if got, want := text(), html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(served, "")); got != want {
		t.Errorf("the page's estimate %q, the server's %q", got, want)
	}
	eval[bool](b, `(() => { const f = document.getElementById("start-final"); f.elements.games_per_pair.value = "5"; f.elements.concurrency.value = "2"; f.dispatchEvent(new Event("input")); return true; })()`)
	if got, want := text(), "5 games a pair, 2 at once: a round robin plays 15 games, "+event.About(est.Duration)+"; a Swiss final of 4 rounds 20 games"; !strings.Contains(got, want) {
		t.Errorf("after the form changed the estimate reads %q, want %q", got, want)
	}
	eval[bool](b, `(() => { const f = document.getElementById("start-final"); f.elements.format.value = "swiss"; f.elements.rounds.value = "3"; f.dispatchEvent(new Event("input")); return true; })()`)
	if got, want := text(), "a Swiss final of 3 rounds 15 games, "+event.About(15*est.MeanGame/2); !strings.Contains(got, want) {
		t.Errorf("a Swiss final of 3 rounds: the estimate reads %q, want %q", got, want)
	}
	b.noExceptions()
	b.screenshot("estimate")
}
