package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/view"
	"github.com/chromedp/chromedp"
)

// TestTheFinalIsFollowedTurnByTurnInTheBrowser: four teams' bots, each a
// quarter of a second a turn and chatty on stderr, play a two-round Swiss
// final two games at once. A projector page shows the round's two boards
// as they move; a visitor opens a game from the home page's list while it
// plays and sees its turns arrive in order, none missing or twice, the
// page following the last, no side's stderr; Alpha, on its own game, sees
// its stderr and not its rival's, live and once it ended. Frozen during
// the second round, the projector shows no board and no result; revealed,
// the final ends.
func TestTheFinalIsFollowedTurnByTurnInTheBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	e := newTestEvent(t, "game = \"codeclash\"\n[rules]\nmaxPlies = \"40\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range []string{"Gamma", "Delta"} {
		team, err := e.store.AddTeam(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		passedUpload(t, e, team.ID, "./internal/testbots/chatty")
	}
	passedUpload(t, e, e.a.ID, "./internal/testbots/chatty")
	passedUpload(t, e, e.b.ID, "./internal/testbots/chatty")
	playsFinals(t, ctx, e, nil)
	if _, err := e.store.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}

	hidden, err := json.Marshal(view.Hidden)
	if err != nil {
		t.Fatal(err)
	}
	projector := openTab(t, e.http.URL, 3*time.Minute)
	projector.do("a projector's screen", chromedp.EmulateViewport(1920, 1080))
	projector.open("/final/live")
	visitor := openTab(t, e.http.URL, 3*time.Minute)
	visitor.open("/")
	alpha := openTab(t, e.http.URL, 3*time.Minute)
	alpha.login(e.a.Token)
	alpha.open("/")
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin,
		strings.NewReader(`{"format": "swiss", "rounds": 2, "games_per_pair": 1, "concurrency": 2}`), "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}

	// The projector: round 1's two boards, moving.
	const boards = `[...document.querySelectorAll("#boards .live-board")]`
	projector.waitFor("round 1's two boards", boards+`.length === 2 && `+boards+`.every(b => /round 1 · turn [1-9]/.test(b.textContent))`, time.Minute)
	turnsShown := `(` + boards + `.map(b => Number(/turn (\d+)/.exec(b.textContent)[1])).reduce((a, b) => a + b, 0))`
	before := eval[int](projector, turnsShown)
	projector.waitFor("the boards to move", turnsShown+` > `+itoa(int64(before)), 20*time.Second)
	if n := eval[int](projector, boards+`[0].querySelectorAll(".mini .pw, .mini .pb").length`); n == 0 {
		t.Error("the projector's board draws no piece")
	}
	projector.screenshot("projector-live")
	// The whole table shows beside the boards, on a wide screen and a
	// narrow one: no column under the boards, none cut off.
	for _, w := range []int64{1280, 1920} {
		projector.do("a screen "+itoa(w)+" wide", chromedp.EmulateViewport(w, 1080))
		if bad := eval[string](projector, wholeTable); bad != "" {
			t.Errorf("the projector at %d px: %s", w, bad)
		}
		projector.screenshot("projector-" + itoa(w))
	}

	// A visitor follows a game from the home page's list.
	visitor.waitFor("the games playing listed", `document.querySelectorAll("#playing-now tr[data-live-game]").length === 2`, 30*time.Second)
	visitor.follow(`#playing-now a`)
	if p := visitor.path(); !strings.HasPrefix(p, "/live/") {
		t.Fatalf("the visitor followed the list to %s", p)
	}
	first := eval[int](visitor, `steps.length`)
	visitor.waitFor("turns to arrive", `steps.length > `+itoa(int64(first+3))+` && idx === steps.length - 1`, 30*time.Second)
	if r := eval[string](visitor, `document.getElementById("result").textContent`); r != "Playing now" {
		t.Errorf("the result of a game playing reads %q", r)
	}
	visitor.screenshot("live-game-visitor")

	// Alpha follows its own game.
	alpha.waitFor("the games playing listed", `[...document.querySelectorAll("#playing-now tr[data-live-game]")].some(r => /Alpha/.test(r.textContent))`, 30*time.Second)
	alpha.open(eval[string](alpha, `[...document.querySelectorAll("#playing-now tr[data-live-game]")].find(r => /Alpha/.test(r.textContent)).querySelector("a").getAttribute("href")`))
	side := eval[string](alpha, `/Alpha/.test(data.white) ? "white" : "black"`)

	// Each page ends with its game: every turn once, in order, the result.
	for _, c := range []struct {
		name string
		b    *tab
		own  string // the side whose stderr the page may show
	}{{"the visitor", visitor, ""}, {"Alpha", alpha, side}} {
		c.b.waitFor("the game's end", `document.getElementById("result").textContent !== "Playing now"`, time.Minute)
		if !eval[bool](c.b, `steps.every((s, i) => s.ply === i) && [...document.querySelectorAll("#turns div")].every((d, i) => Number(d.dataset.i) === i) && document.querySelectorAll("#turns div").length === steps.length`) {
			t.Errorf("%s's page: the turns are not each there once, in order: %v", c.name, eval[[]int](c.b, `steps.map(s => s.ply)`))
		}
		if res := eval[string](c.b, `document.getElementById("result").textContent`); !strings.Contains(res, "wins") && !strings.Contains(res, "Draw") {
			t.Errorf("%s's page at the game's end reads %q", c.name, res)
		}
		shown := eval[[]string](c.b, `[...new Set(steps.filter(s => /secret of/.test(s.stderrTail || "")).map(s => s.side))]`)
		hidden := eval[int](c.b, `steps.filter(s => s.ply > 0 && s.stderrTail !== `+string(hidden)+` && !/secret of/.test(s.stderrTail || "")).length`)
		want := []string{}
		if c.own != "" {
			want = []string{c.own}
		}
		if strings.Join(shown, ",") != strings.Join(want, ",") || hidden != 0 {
			t.Errorf("%s's page shows the stderr of %v (want %v); %d turns neither show nor hide it", c.name, shown, want, hidden)
		}
		c.b.noExceptions()
		c.b.noRefusals()
	}
	alpha.screenshot("live-game-alpha")

	// Round 2, frozen: no board and no result on the projector.
	projector.waitFor("round 2's boards", boards+`.length > 0 && `+boards+`.every(b => /round 2/.test(b.textContent))`, time.Minute)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/freeze", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("freeze: %d %s", res.StatusCode, body)
	}
	projector.waitFor("the boards hidden", boards+`.length === 0 && !document.getElementById("boards-frozen").hidden && document.getElementById("frozen") !== null`, 30*time.Second)
	frozenDone := eval[string](projector, `/(\d+) of \d+ games played/.exec(document.querySelector("#final").textContent)[1]`)
	b := e.finalEnded(t)
	time.Sleep(time.Second) // the board's watcher looks every 20 ms
	if n := eval[int](projector, boards+`.length`); n != 0 {
		t.Errorf("the frozen projector shows %d boards", n)
	}
	if now := eval[string](projector, `/(\d+) of \d+ games played/.exec(document.querySelector("#final").textContent)[1]`); now != frozenDone {
		t.Errorf("the frozen projector's count of games went from %s to %s: it tells results", frozenDone, now)
	}
	projector.screenshot("projector-frozen")
	if b.Games["done"] != 4 {
		t.Errorf("the final played %d games, want 4", b.Games["done"])
	}
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/reveal", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("reveal: %d %s", res.StatusCode, body)
	}
	projector.waitFor("the standings revealed", `/4 of 4 games played/.test(document.querySelector("#final").textContent) && document.getElementById("frozen") === null`, 30*time.Second)
	projector.noExceptions()
	projector.noRefusals()
}

// wholeTable says what hides part of the projector's standings: a column
// under the boards, or cut off at the edge of the screen or of its box
// ("": nothing).
const wholeTable = `(() => {
	const t = document.querySelector("#final table"), box = document.getElementById("final"), boards = document.getElementById("live-boards");
	if (!t) return "no standings table";
	const r = t.getBoundingClientRect(), b = boards.getBoundingClientRect();
	if (r.right > window.innerWidth + 1) return "the table ends at " + r.right + " px, past the screen's " + window.innerWidth;
	if (t.scrollWidth > box.clientWidth + 1) return "the table is " + t.scrollWidth + " px wide in a box of " + box.clientWidth;
	if (r.right > b.left + 1 && r.left < b.right - 1 && r.bottom > b.top + 1 && r.top < b.bottom - 1) return "the table (" + r.left + "-" + r.right + ") runs under the boards (" + b.left + "-" + b.right + ")";
	return "";
})()`
