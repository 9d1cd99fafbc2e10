package web

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
)

// The organizer, uploads closed, picks a double elimination on the
// organizer's page, sees its estimate, and starts the final there; a team,
// on the home page since before uploads closed, reads that they closed and
// watches the bracket fill in and the ranks' sets change
// without a reload; at the end the page's standings are arena standings'
// of the final's directory, row for row.
func TestABracketFinalFromTheOrganizersPage(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)

	// The team opens the home page while uploads are still open: it has
	// no final to show yet, and shows it when it starts.
	team := openTab(t, e.http.URL, 3*time.Minute)
	team.login(e.a.Token)
	team.open("/")
	if _, err := e.store.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}
	// Every state of the bracket and of the sets the page shows, as the
	// live standings replace them.
	eval[bool](team, `(() => {
		window.__stayed = true; window.__brackets = []; window.__sets = [];
		const seen = () => {
			const svg = document.querySelector("#bracket svg"), sets = [...document.querySelectorAll("#standings td.rank-set")].map(td => td.textContent).join("|");
			if (svg && window.__brackets[window.__brackets.length-1] !== svg.outerHTML) { window.__brackets.push(svg.outerHTML); }
			if (sets && window.__sets[window.__sets.length-1] !== sets) { window.__sets.push(sets); }
		};
		new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, characterData: true});
		return true; })()`)

	org := openTab(t, e.http.URL, 3*time.Minute)
	org.login(e.admin)
	org.open("/admin")
	org.waitFor("the estimate", `document.getElementById("estimate").dataset.ready !== undefined`, 20*time.Second)
	eval[bool](org, `(() => { const f = document.getElementById("start-final"); f.elements.format.value = "double-elimination"; f.elements.games_per_pair.value = "6";
		delete document.getElementById("estimate").dataset.ready; f.dispatchEvent(new Event("change")); return true; })()`)
	org.waitFor("the double elimination's estimate", `document.getElementById("estimate").dataset.ready !== undefined && /^double elimination: at least 24 games/.test(document.querySelector("#estimate li.chosen").textContent)`, 20*time.Second)
	if eval[bool](org, `!document.getElementById("start-final").elements.advance.closest("label").hidden`) {
		t.Error("a double elimination's form shows a stages final's fields")
	}
	org.screenshot("bracket-final-form")
	org.follow(`#start-final button`)
	if p := org.path(); p != "/admin" {
		t.Fatalf("after starting the final the organizer is on %s", p)
	}

	team.waitFor("the final's end", `/of (\d+) games played/.test(document.querySelector("#final").textContent) && document.querySelector("#bracket svg") !== null && !/…/.test(document.querySelector("#bracket svg").textContent)`, 2*time.Minute)
	state, err := tournament.Load(ctx, filepath.Join(e.dir, event.FinalDir))
	if err != nil {
		t.Fatal(err)
	}
	if state.Config.Format != tournament.DoubleElimination || state.Summary.Done != state.Summary.Total {
		t.Fatalf("the final: %s, %d of %d games", state.Config.Format, state.Summary.Done, state.Summary.Total)
	}
	team.waitFor("the last standings", `document.querySelector("#final").textContent.includes("`+itoa(int64(state.Summary.Done))+` of `+itoa(int64(state.Summary.Total))+` games played")`, time.Minute)
	if !eval[bool](team, `window.__stayed === true`) {
		t.Error("the home page was reloaded: the bracket must follow the games in place")
	}
	if d := eval[string](team, `document.querySelector("section.deadline").textContent`); !strings.Contains(d, "Uploads closed at") {
		t.Errorf("the home page opened before the close says of the deadline %q, want that uploads closed", d)
	}
	brackets, sets := eval[[]string](team, `window.__brackets`), eval[[]string](team, `window.__sets`)
	if len(brackets) < 2 || len(sets) < 2 {
		t.Errorf("the team saw %d states of the bracket and %d of the sets: want them to change as games finish", len(brackets), len(sets))
	}
	// The page's standings are arena standings': names, places, sets.
	rows := state.Summary.Standings
	got := eval[[]string](team, `[...document.querySelectorAll("#standings tbody tr")].map(tr => [...tr.querySelectorAll("td")].map(td => td.textContent.trim()).join("|"))`)
	if len(got) != len(rows) {
		t.Fatalf("the page shows %d rows, arena standings %d: %q", len(got), len(rows), got)
	}
	for i, r := range rows {
		cells := strings.Split(got[i], "|")
		if cells[0] != itoa(int64(r.Rank)) || !strings.Contains(got[i], r.Team) || !strings.Contains(got[i], tournament.FormatRanks(r, i == len(rows)-1)) {
			t.Errorf("row %d: the page %q, arena standings rank %d, %s, %s", i+1, got[i], r.Rank, r.Team, tournament.FormatRanks(r, i == len(rows)-1))
		}
	}
	if svg := brackets[len(brackets)-1]; !strings.Contains(svg, "Losers' bracket") || !strings.Contains(svg, "Grand final") {
		t.Errorf("the bracket drawn: %.300s", svg)
	}
	team.screenshot("bracket-final")
	team.noExceptions()
	team.noRefusals()
	org.noExceptions()
	org.noRefusals()
	if res, _ := e.do(t, http.MethodGet, "/", "", nil, ""); res.StatusCode != http.StatusOK {
		t.Errorf("the home page after the final: %d", res.StatusCode)
	}
}

// The home page counts down to the close every second, and says that
// uploads closed, in place, when the organizer closes them early.
func TestTheHomePageCountsDownToTheClose(t *testing.T) {
	chromiumPath(t)
	closes := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	e := newTestEvent(t, "game = \"codeclash\"\ncloses = \""+closes+"\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.server.watchFinal(ctx, 20*time.Millisecond)

	b := openTab(t, e.http.URL, time.Minute)
	b.open("/")
	b.waitFor("the countdown", `/^1h 59m \d\ds left$/.test(document.querySelector(".countdown").textContent)`, 10*time.Second)
	first := eval[string](b, `document.querySelector(".countdown").textContent`)
	b.waitFor("the countdown's next second", `document.querySelector(".countdown").textContent !== `+strconv.Quote(first), 5*time.Second)
	eval[bool](b, `(window.__stayed = true)`)
	if _, err := e.store.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the close", `/Uploads closed at/.test(document.querySelector("section.deadline").textContent) && document.querySelector(".countdown") === null`, 20*time.Second)
	if !eval[bool](b, `window.__stayed === true`) {
		t.Error("the home page was reloaded: the deadline must change in place")
	}
	b.noExceptions()
}
