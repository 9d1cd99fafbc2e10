package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/tournament"
)

// longestRefusal is the longest reason the coordinator writes of a
// worker's result: a field of the header that differs, with both of its
// values as JSON (here a bot's whole description, its hash unbroken).
func longestRefusal() string {
	side := func(name string) string {
		return fmt.Sprintf(`{"name":%q,"sha256":"%s","language":"cpp","entry":"bin/bot","files":["bin/bot","README.md","src/main.cpp","src/board.hpp"],"builtBy":"g++-14 -O2 -std=c++20"}`, name, strings.Repeat("9f86d081884c7d65", 4))
	}
	return "it is not the game it was sent: white differs: the transcript has " + side("C++ Wizards") + ", the job " + side("C# Wizards")
}

// The organizer's page at 1280 x 800, with a worker suspended for the
// longest reason the server writes and another readmitted (its audit row
// quoting the reason), and the pages a team and the organizer read most:
// no page is wider than the window, no table runs past it, and every
// button is inside it.
func TestPagesFitA1280PixelWindow(t *testing.T) {
	chromiumPath(t)
	e := newTestEvent(t, "")
	seedGames(t, e.store, e.a, e.b, 3)
	wdir := tournament.WorkersDir(e.dir)
	for _, w := range []string{"volunteer-machine-in-room-b-17", "mended"} {
		if _, err := distrib.Enroll(wdir, runner.QueueName(e.dir), w, ""); err != nil {
			t.Fatal(err)
		}
		reason, detail := roster.Why(longestRefusal())
		if err := roster.Suspend(wdir, roster.Suspension{Worker: w, At: time.Now().UTC(), Game: 2<<40 + 4*12 + 2, Reason: reason, Detail: detail}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.Readmit(context.Background(), "mended"); err != nil {
		t.Fatal(err)
	}

	b := openTab(t, e.http.URL, 3*time.Minute)
	b.do("a 1280 x 800 window", chromedp.EmulateViewport(1280, 800))
	b.login(e.admin)
	games, err := e.store.GamesOf(context.Background(), e.a.ID, 1)
	if err != nil || len(games) == 0 {
		t.Fatalf("no game: %v", err)
	}
	for _, path := range []string{"/admin", "/", "/games", fmt.Sprintf("/games/%d", games[0].ID), "/how-to-submit"} {
		b.open(path)
		if bad := eval[string](b, overflows); bad != "" {
			t.Errorf("%s at 1280 x 800:\n%s", path, bad)
		}
		b.screenshot("fit" + strings.ReplaceAll(path, "/", "-"))
	}
	b.open("/admin")
	text := eval[string](b, `document.querySelector("#workers").innerText`)
	for _, want := range []string{"ladder pair 12, game 2", "It is not the game it was sent: white differs."} {
		if !strings.Contains(text, want) {
			t.Errorf("the workers' section does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "2199023256") || strings.Contains(text, `"sha256"`) {
		t.Errorf("the workers' section shows a job number or the raw values at a glance:\n%s", text)
	}
	if audit := eval[string](b, `document.querySelector("#audit").innerText`); !strings.Contains(audit, "ladder pair 12, game 2") {
		t.Errorf("the readmit's audit row: %s", audit)
	}
}

// overflows lists what runs past the window's right edge: the page itself,
// a table, a button or a field, every detail opened (a table inside a box
// that scrolls is that box's to hold).
const overflows = `(() => {
  for (const d of document.querySelectorAll("details")) d.open = true;
  const W = document.documentElement.clientWidth, bad = [];
  if (document.documentElement.scrollWidth > W) bad.push("the page is " + document.documentElement.scrollWidth + " px wide");
  const scrolls = el => { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll") return true; } return false; };
  for (const el of document.querySelectorAll("table, button, input, select, textarea, summary")) {
    if (el.type === "hidden" || scrolls(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 0.5) bad.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className : "") + " " + JSON.stringify(el.innerText.slice(0, 40)) + " ends at x=" + Math.round(r.right));
  }
  return bad.join("\n");
})()`
