package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// chromiumPath finds the browser the pages are tested in.
func chromiumPath(t *testing.T) string {
	t.Helper()
	return dockertest.Tool(t, "the event's pages in a real browser", "chromium", "chromium", "chromium-browser", "google-chrome")
}

// tab is one tab of a headless Chromium on the server at base. What the page
// reports (uncaught exceptions, console errors, the browser's own log, such as
// a Content-Security-Policy refusal) is kept for the test to read.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu      sync.Mutex
	reports []string
}

// openTab starts a headless Chromium for the test and opens a tab on base;
// the browser stops at the test's end, or when timeout is over so that a hang
// fails the test instead of blocking it.
func openTab(t *testing.T, base string, timeout time.Duration) *tab {
	t.Helper()
	path := chromiumPath(t)
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancel()
	})
	b := &tab{t: t, ctx: bctx, base: strings.TrimSuffix(base, "/")}
	err := chromedp.Listen(bctx, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			line = "exception: " + d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				line += " " + d.Exception.Description
			}
			line += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
				return
			}
			line = "console." + string(ev.Type) + ":"
			for _, a := range ev.Args {
				if a.Description != "" {
					line += " " + a.Description
				} else {
					line += " " + string(a.Value)
				}
			}
		case *cdplog.EventEntryAdded:
			line = "log " + string(ev.Entry.Source) + " " + string(ev.Entry.Level) + ": " + ev.Entry.Text
			if ev.Entry.URL != "" {
				line += " (" + ev.Entry.URL + ")"
			}
		default:
			return
		}
		b.mu.Lock()
		b.reports = append(b.reports, line)
		b.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(bctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium: enable the log: %v", err)
	}
	return b
}

// do runs actions in the tab; what fails the test names what was done.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\nthe page reported:\n%s", what, err, strings.Join(b.reported(), "\n"))
	}
}

// value runs an action that returns a value.
func value[T any](b *tab, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v\nthe page reported:\n%s", what, err, strings.Join(b.reported(), "\n"))
	}
	return v
}

// eval is the value of a JavaScript expression in the page.
func eval[T any](b *tab, expr string) T {
	b.t.Helper()
	return value(b, "evaluate "+expr, chromedp.Evaluate[T](expr))
}

// open loads the page at path (from the server's root) and waits until it is
// the tab's document and complete.
func (b *tab) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path))
	quoted, err := json.Marshal(path)
	if err != nil {
		b.t.Fatal(err)
	}
	b.waitFor("open "+path, `location.pathname + location.search === `+string(quoted)+` && document.readyState === "complete"`, 10*time.Second)
}

// waitFor waits until the JavaScript expression is true in the page.
func (b *tab) waitFor(what, expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			b.t.Fatalf("%s: %s is not true within %s (%v)\nthe page reported:\n%s", what, expr, timeout, err, strings.Join(b.reported(), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// login logs in with token on the login page, as a person types it.
func (b *tab) login(token string) {
	b.t.Helper()
	b.open("/login")
	b.do("type the token", chromedp.SendKeys(chromedp.CSS("#token"), token))
	b.follow(`form[action="/login"] button[type=submit]`)
}

// follow clicks what sel finds and waits until the page it leads to loaded.
func (b *tab) follow(sel string) {
	b.t.Helper()
	_ = value(b, "click "+sel, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel))))
}

// path is the page's path and query.
func (b *tab) path() string {
	b.t.Helper()
	return eval[string](b, `location.pathname + location.search`)
}

// reported is what the page reported so far.
func (b *tab) reported() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.reports...)
}

// noExceptions fails the test if a script of the pages threw.
func (b *tab) noExceptions() {
	b.t.Helper()
	for _, r := range b.reported() {
		if strings.HasPrefix(r, "exception:") {
			b.t.Errorf("a script threw: %s", r)
		}
	}
}

// noRefusals fails the test if the browser refused something a page asked
// for under its Content-Security-Policy: the pages must work under their own
// policy.
func (b *tab) noRefusals() {
	b.t.Helper()
	for _, r := range b.reported() {
		if strings.HasPrefix(r, "log security") {
			b.t.Errorf("the browser refused: %s", r)
		}
	}
}

// screenshot writes the whole page as name.png into $ARENA_SCREENSHOTS, when
// it is set.
func (b *tab) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("ARENA_SCREENSHOTS")
	if dir == "" {
		return
	}
	png := value(b, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// TestTeamUploadsAndSeesItPassInTheBrowser: a team logs in through the form,
// uploads a ZIP through the file input, and its version's state goes from
// queued to passed on the page it landed on, told by the server-sent events,
// with no reload; the submission's page says PASSED and links the games of
// the validation, and the viewer of such a game steps ply by ply.
func TestTeamUploadsAndSeesItPassInTheBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	e := newLiveEventWith(t, "game = \"codeclash\"\n", func(st *event.Store, teams []event.NewTeam) {
		seedGames(t, st, teams[0], teams[1], 30)
	})
	b := openTab(t, e.srv.URL, 5*time.Minute)

	b.login(e.a.Token)
	if p := b.path(); p != "/team" {
		t.Fatalf("after logging in the page is %s, want /team", p)
	}
	if h := value(b, "read the title", chromedp.Text(chromedp.CSS("main h1"))); h != "Alpha" {
		t.Errorf("the team page's title reads %q, want Alpha", h)
	}

	// How to submit, from the team's page: a starter, downloaded as it is.
	b.follow(`#howto`)
	if p := b.path(); p != "/how-to-submit" {
		t.Fatalf("the team page's link leads to %s", p)
	}
	for _, sec := range []string{"#what", "#required", "#languages", "#limits", "#starters", "#protocol"} {
		if n := eval[int](b, `document.querySelectorAll("`+sec+`").length`); n != 1 {
			t.Errorf("how to submit has no %s section", sec)
		}
	}
	if req := value(b, "read what is required", chromedp.Text(chromedp.CSS("#required"))); !strings.Contains(req, "A README") || !strings.Contains(req, "Source") {
		t.Errorf("how to submit does not say what the event requires: %q", req)
	}
	// The versions are read from the image once the server has started.
	for deadline := time.Now().Add(90 * time.Second); !eval[bool](b, `/Python 3\.\d+/.test(document.querySelector("#languages").innerText)`); {
		if time.Now().After(deadline) {
			t.Fatalf("the languages' versions are not shown:\n%s\nserver log:\n%s", eval[string](b, `document.querySelector("#languages").innerText`), e.srv.Logs())
		}
		time.Sleep(time.Second)
		b.open("/how-to-submit")
	}
	b.screenshot("how-to-submit")
	href := eval[string](b, `document.querySelector("#starters a").getAttribute("href")`)
	res, err := http.Get(e.srv.URL + href)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("download the starter %s: %v %v", href, res, err)
	}
	starter, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	zipPath := writeFile(t, path.Base(href), starter)
	b.open("/team")

	b.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{zipPath}))
	b.follow(`#upload button[type=submit]`)
	if p := b.path(); p != "/team?notice=uploaded" {
		t.Fatalf("after the upload the page is %s, want /team?notice=uploaded", p)
	}
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__marker = 1`))

	type seen struct {
		State   string `json:"state"`
		Summary string `json:"summary"`
		Marker  int    `json:"marker"`
		ID      string `json:"id"`
	}
	read := `(() => { const row = document.querySelector("tr[data-submission]");
		return { state: row ? row.querySelector(".state").textContent : "",
			summary: row ? row.querySelector(".summary").textContent : "",
			marker: window.__marker || 0, id: row ? row.dataset.submission : "" }; })()`
	var states []string
	var now seen
	start := time.Now()
	for deadline := start.Add(3 * time.Minute); ; {
		now = eval[seen](b, read)
		if now.Marker != 1 {
			t.Fatalf("the page was left or reloaded while it waited (state %q)", now.State)
		}
		if len(states) == 0 || states[len(states)-1] != now.State {
			states = append(states, now.State)
			t.Logf("%5.1fs: the page shows %q", time.Since(start).Seconds(), now.State)
		}
		if now.State == "passed" || now.State == "failed" || now.State == "error" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the state did not reach passed within 3 minutes: it read %v\nserver log:\n%s", states, e.srv.Logs())
		}
		time.Sleep(300 * time.Millisecond)
	}
	if now.State != "passed" {
		t.Fatalf("the upload %s: %s\nserver log:\n%s", now.State, now.Summary, e.srv.Logs())
	}
	if len(states) < 2 {
		t.Errorf("the page showed only %v: the validation was over before the page could follow it", states)
	}
	if !strings.HasPrefix(now.Summary, "active") {
		t.Errorf("the row's outcome reads %q: the passed version should be active", now.Summary)
	}
	if cls := eval[string](b, `document.querySelector("tr[data-submission] .state").className`); cls != "state state-passed" {
		t.Errorf("the badge's class is %q", cls)
	}
	// The validation's games against the built-in bot appear on the same
	// page, still without a reload; the notice that waited for them is gone.
	b.waitFor("see the validation's games", `[...document.querySelectorAll('#games a[href^="/games/"]')].some(a => a.closest("tr").textContent.includes("validation"))`, 30*time.Second)
	b.waitFor("the notice goes", `!document.querySelector(".notice.until-done")`, 10*time.Second)
	if m := eval[int](b, `window.__marker || 0`); m != 1 {
		t.Errorf("the page was reloaded to show the games")
	}
	b.screenshot("team-passed")

	// Every game of the team, 25 a page, by kind.
	b.follow(`#all-games`)
	if p := b.path(); p != "/games" {
		t.Fatalf("the team page's games link leads to %s", p)
	}
	if n := eval[int](b, `document.querySelectorAll("table.games tbody tr").length`); n != 25 {
		t.Errorf("the first page of games lists %d, want 25", n)
	}
	b.follow(`a[rel=next]`)
	if n := eval[int](b, `document.querySelectorAll("table.games tbody tr").length`); n != 32-25 {
		t.Errorf("the second page of games lists %d, want the other %d", n, 32-25)
	}
	b.follow(`.filters a[href$="kind=ladder"]`)
	kinds := eval[[]string](b, `[...document.querySelectorAll("table.games tbody tr td:nth-child(2)")].map(td => td.textContent.split(" ")[0])`)
	if len(kinds) == 0 || slices.ContainsFunc(kinds, func(k string) bool { return k != "ladder" }) {
		t.Errorf("the ladder games are %v", kinds)
	}
	if rival := eval[string](b, `document.querySelector("table.games tbody tr td:nth-child(4)").textContent`); rival != "Beta" {
		t.Errorf("the games list names the rival %q, want Beta", rival)
	}
	b.screenshot("games")
	// A game opened at a ply: the viewer shows it.
	gameHref := eval[string](b, `document.querySelector("table.games tbody a").getAttribute("href")`)
	b.do("open "+gameHref+"#ply=3", chromedp.Navigate(e.srv.URL+gameHref+"#ply=3"))
	b.waitFor("open the game", `location.pathname === "`+gameHref+`" && document.readyState === "complete"`, 10*time.Second)
	atPly := value(b, "find the viewer", chromedp.Nodes(chromedp.CSS("iframe#viewer")))
	_ = value(b, "the viewer at ply 3", chromedp.Poll[chromedp.Void](`document.getElementById("jump") && document.getElementById("jump").value === "3"`,
		chromedp.WithPollingInFrame(atPly[0]), chromedp.WithPollingTimeout(10*time.Second)))

	// The submission's page.
	b.open("/submissions/" + now.ID)
	b.waitFor("read the verdict", `/PASSED|FAILED/.test((document.querySelector("#report .verdict") || {}).textContent)`, 10*time.Second)
	verdict := value(b, "read the verdict", chromedp.Text(chromedp.CSS("#report .verdict")))
	if !strings.Contains(verdict, "PASSED") {
		t.Fatalf("the submission's page says %q, want PASSED; its report reads:\n%s\nthe page reported:\n%s", verdict,
			eval[string](b, `document.getElementById("report").outerHTML`), strings.Join(b.reported(), "\n"))
	}
	if n := eval[int](b, `document.querySelectorAll("#report tr.check-fail").length`); n != 0 {
		t.Errorf("%d checks failed on a passed submission", n)
	}
	games := eval[[]string](b, `[...document.querySelectorAll("#report table.list a[href^='/games/']")].map(a => a.getAttribute("href"))`)
	if len(games) == 0 {
		t.Fatalf("the submission's page links no game against the built-in bot")
	}
	t.Logf("the validation's games: %v", games)
	b.screenshot("submission-passed")

	// A game's page and its viewer, in the page's iframe.
	b.open(games[0])
	if h := value(b, "read the game's title", chromedp.Text(chromedp.CSS("main h1"))); !regexp.MustCompile(`^Game #\d+`).MatchString(h) {
		t.Errorf("the game's page is titled %q", h)
	}
	frames := value(b, "find the viewer", chromedp.Nodes(chromedp.CSS("iframe#viewer")))
	viewer := frames[0]
	b.do("wait for the viewer", chromedp.WaitVisible(chromedp.CSS("#next"), chromedp.FromNode(viewer)))
	inViewer := func(expr string) string {
		t.Helper()
		return value(b, "read the viewer: "+expr, chromedp.Poll[string](expr, chromedp.WithPollingInFrame(viewer)))
	}
	const plyShown = `document.getElementById("jump").value`
	const factsShown = `document.getElementById("facts").innerText`
	const boardShown = `[...document.querySelectorAll("#board .cell")].map(c => c.dataset.piece || ".").join("")`
	last := inViewer(`document.getElementById("jump").max`)
	// The game's page opens its viewer at the game's end, no dispute
	// naming a turn (opened alone, the viewer starts where play begins:
	// the view package's test).
	if p, f := inViewer(plyShown), inViewer(factsShown); p != last {
		t.Errorf("the viewer opens at ply %s (%q), want the game's end, ply %s", p, f, last)
	}
	step := func(what string, a chromedp.Action[chromedp.Void], want string) {
		t.Helper()
		b.do(what, a)
		_ = value(b, "after "+what+", wait for the viewer to show ply "+want,
			chromedp.Poll[chromedp.Void](`document.getElementById("jump").value === "`+want+`"`,
				chromedp.WithPollingInFrame(viewer), chromedp.WithPollingTimeout(10*time.Second)))
		wantFacts := want + " of " + last
		if want == "0" {
			wantFacts = "start of the match"
		}
		if facts := inViewer(factsShown); !strings.Contains(facts, wantFacts) {
			t.Errorf("after %s (ply %s) the viewer's facts read %q, want %q", what, want, facts, wantFacts)
		}
	}
	step("click first", chromedp.Click(chromedp.CSS("#first"), chromedp.FromNode(viewer)), "0")
	board0 := inViewer(boardShown)
	step("click next", chromedp.Click(chromedp.CSS("#next"), chromedp.FromNode(viewer)), "1")
	step("click next again", chromedp.Click(chromedp.CSS("#next"), chromedp.FromNode(viewer)), "2")
	if board2 := inViewer(boardShown); board2 == board0 {
		t.Errorf("the board at ply 2 is the board at ply 0")
	}
	step("press the right arrow", chromedp.KeyEvent(kb.ArrowRight), "3")
	step("click previous", chromedp.Click(chromedp.CSS("#prev"), chromedp.FromNode(viewer)), "2")
	step("click last", chromedp.Click(chromedp.CSS("#last"), chromedp.FromNode(viewer)), last)
	step("click first", chromedp.Click(chromedp.CSS("#first"), chromedp.FromNode(viewer)), "0")
	step("jump to ply 2", chromedp.Click(chromedp.CSS(`#turns div[data-i="2"]`), chromedp.FromNode(viewer)), "2")
	b.screenshot("game")

	// A Python file with a syntax error, from a Windows editor, alone (no
	// README): its report's first failure is the syntax error, with its
	// line and the fix that fits, not the missing README.
	broken := writeFile(t, "bot.py", []byte("\xef\xbb\xbfimport sys\r\n\r\ndef main(:\r\n    pass\r\n"))
	b.open("/team")
	b.do("choose the broken file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{broken}))
	b.follow(`#upload button[type=submit]`)
	b.waitFor("the broken upload fails", `[...document.querySelectorAll("tr[data-submission] .state")].some(s => s.textContent === "failed")`, 3*time.Minute)
	failedID := eval[string](b, `[...document.querySelectorAll("tr[data-submission]")].find(r => r.querySelector(".state").textContent === "failed").dataset.submission`)
	b.open("/submissions/" + failedID)
	b.waitFor("read the first failure", `!!document.querySelector("#report .first-failure")`, 10*time.Second)
	first := value(b, "read the first failure", chromedp.Text(chromedp.CSS("#report .first-failure")))
	if !strings.Contains(first, "SyntaxError") || !strings.Contains(first, "line 3") || !strings.Contains(first, "fix the syntax error") || strings.Contains(first, "README") {
		t.Errorf("the first failure of a syntax error reads:\n%s", first)
	}
	if strings.Contains(first, "exit 0") {
		t.Errorf("a check's output (exit status 1) is shown with a turn's exit 0:\n%s", first)
	}
	b.screenshot("report-syntax-error")

	b.noExceptions()
	b.noRefusals()
	for _, r := range b.reported() {
		t.Logf("the page reported: %s", r)
	}
}

// TestMarkupInATeamNameIsShownAsText: a team whose name is markup sees it as
// text on the home page and on its own page, and none of it runs; the pages'
// policy refuses inline script in the browser too.
func TestMarkupInATeamNameIsShownAsText(t *testing.T) {
	chromiumPath(t)
	e := newTestEvent(t, "")
	const name = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`
	team, err := e.store.AddTeam(context.Background(), name, "", "")
	if err != nil {
		t.Fatal(err)
	}

	res, err := http.Get(e.http.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("the home page's Content-Security-Policy is %q: it must allow scripts from the site only", csp)
	}

	b := openTab(t, e.http.URL, 2*time.Minute)
	pwned := func(where string) {
		t.Helper()
		if v := eval[string](b, `typeof window.__pwned === "undefined" ? "" : String(window.__pwned)`); v != "" {
			t.Errorf("on %s the team's name ran as script: window.__pwned = %s", where, v)
		}
		if n := eval[int](b, `document.querySelectorAll("main img, header img").length`); n != 0 {
			t.Errorf("on %s the team's name made %d img elements", where, n)
		}
	}

	b.open("/")
	teams := eval[[]string](b, `[...document.querySelectorAll("ul.teams li")].map(li => li.textContent)`)
	found := false
	for _, s := range teams {
		found = found || s == name
	}
	if !found {
		t.Errorf("the home page's teams read %q: the markup is not shown as text", teams)
	}
	pwned("the home page")

	b.login(team.Token)
	if p := b.path(); p != "/team" {
		t.Fatalf("after logging in the page is %s, want /team", p)
	}
	if h := value(b, "read the title", chromedp.TextContent(chromedp.CSS("main h1"))); !strings.Contains(h, "<img src=x") || h != name {
		t.Errorf("the team page's title reads %q, want the name as text", h)
	}
	if w := value(b, "read the header", chromedp.TextContent(chromedp.CSS("header a.who"))); w != name {
		t.Errorf("the header's team reads %q, want the name as text", w)
	}
	pwned("the team page")
	if title := value(b, "read the title", chromedp.Title()); !strings.Contains(title, "<script>") {
		t.Errorf("the document's title is %q, want the name as text", title)
	}

	b.open("/")
	pwned("the home page, logged in")
	refusals := func() int {
		n := 0
		for _, r := range b.reported() {
			if strings.HasPrefix(r, "log security") && strings.Contains(r, "Content Security Policy") {
				n++
			}
		}
		return n
	}
	// The name was never markup: the browser had nothing to refuse.
	if n := refusals(); n != 0 {
		t.Errorf("the browser refused %d scripts of the pages: %q", n, b.reported())
	}
	// A script put into the page as markup would not run either.
	ran := eval[bool](b, `(() => { const s = document.createElement("script"); s.textContent = "window.__inline = 1";
		document.body.appendChild(s); return window.__inline === 1; })()`)
	if ran {
		t.Errorf("an inline script ran on the home page: the policy does not hold in the browser")
	}
	deadline := time.Now().Add(5 * time.Second)
	for refusals() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if refusals() == 0 {
		t.Errorf("the browser did not report refusing the inline script: %q", b.reported())
	}
	b.noExceptions()
}

// TestAWrongTokenShowsTheLoginAlert: a token nobody has brings the login page
// back with its alert, and no session.
func TestAWrongTokenShowsTheLoginAlert(t *testing.T) {
	chromiumPath(t)
	e := newTestEvent(t, "")
	b := openTab(t, e.http.URL, 2*time.Minute)

	b.open("/login")
	if n := eval[int](b, `document.querySelectorAll("[role=alert]").length`); n != 0 {
		t.Errorf("the login page shows %d alerts before any try", n)
	}
	b.do("type a wrong token", chromedp.SendKeys(chromedp.CSS("#token"), "not-a-token-of-anyone"))
	b.follow(`form[action="/login"] button[type=submit]`)
	if p := b.path(); p != "/login" {
		t.Errorf("after a wrong token the page is %s, want /login", p)
	}
	alert := value(b, "read the alert", chromedp.Text(chromedp.CSS(`main [role=alert]`)))
	if alert != "That token is unknown, or its team is disabled." {
		t.Errorf("the alert reads %q", alert)
	}
	if v := value(b, "read the field", chromedp.Value(chromedp.CSS("#token"))); v != "" {
		t.Errorf("the token field holds %q after a failed login", v)
	}
	b.open("/team")
	if msg := value(b, "read the answer", chromedp.Text(chromedp.CSS("main .problem"))); !strings.Contains(msg, "log in") {
		t.Errorf("after a failed login /team says %q, want the request to log in", msg)
	}
	b.noExceptions()
	b.noRefusals()
}

// TestTheFinalIsWatchedLiveAndDisputedInTheBrowser: a visitor's home page
// fills in the final's standings as the games finish, told by the
// server-sent events, without a reload; a team then disputes one of its
// games through the game page's form, and the organizer, logged in, finds
// the dispute on the organizer's page.
func TestTheFinalIsWatchedLiveAndDisputedInTheBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	e := newTestEvent(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	threeTeamsForTheFinal(t, ctx, e)
	if _, err := e.store.CloseUploads(ctx); err != nil {
		t.Fatal(err)
	}

	b := openTab(t, e.http.URL, 3*time.Minute)
	b.open("/")
	if text := eval[string](b, `document.querySelector("#final") ? document.querySelector("#final").textContent : ""`); !strings.Contains(text, "has not started") {
		t.Fatalf("the home page's final reads %q, want that it has not started", text)
	}
	// The key of the final's log, as a team copies it before the final.
	logKey := eval[string](b, `document.querySelector("#log-key").textContent`)
	eval[bool](b, `(window.__stayed = true)`)
	if res, body := e.do(t, http.MethodPost, "/api/v1/admin/final", e.admin, nil, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d %s", res.StatusCode, body)
	}
	b.waitFor("the standings fill in", `document.querySelectorAll("#standings tbody tr").length === 3 && /6 of 6 games played/.test(document.querySelector("#final").textContent)`, 2*time.Minute)
	if !eval[bool](b, `window.__stayed === true`) {
		t.Error("the home page was reloaded: the standings must follow the games in place")
	}
	state, err := tournament.Load(ctx, filepath.Join(e.dir, event.FinalDir))
	if err != nil {
		t.Fatal(err)
	}
	first := eval[string](b, `document.querySelector("#standings tbody tr td:nth-child(2)").textContent`)
	if first != state.Summary.Standings[0].Name {
		t.Errorf("the page's leader is %q, the final's %q", first, state.Summary.Standings[0].Name)
	}
	// Each team's 95% set of ranks, as arena standings gives it.
	sets := eval[[]string](b, `[...document.querySelectorAll("#standings td.rank-set")].map(td => td.textContent)`)
	rows := state.Summary.Standings
	for i, r := range rows {
		if want := tournament.FormatRanks(r, i == len(rows)-1); i >= len(sets) || sets[i] != want {
			t.Errorf("row %d's ranks on the page: %q, want %q (all: %q)", i+1, sets, want, sets)
			break
		}
	}
	b.screenshot("final-live")

	games, err := e.store.GamesOf(ctx, e.a.ID, 10)
	if err != nil || len(games) == 0 {
		t.Fatalf("Alpha's games: %v %v", games, err)
	}
	b.login(e.a.Token)
	if text := eval[string](b, `document.querySelector("#pinned") ? document.querySelector("#pinned").textContent : ""`); !strings.Contains(text, "The final plays your submission") {
		t.Errorf("the team page does not show the pinned submission: %q", text)
	}
	// Each of its final games offers its inclusion proof; one, downloaded
	// from the team's page, checks offline with the key from before the
	// final.
	b.screenshot("team-final-proofs")
	if n := eval[int](b, `document.querySelectorAll("#games a.proof").length`); n != 4 {
		t.Errorf("the team's page offers %d proofs, want one for each of its 4 final games", n)
	}
	proof := value(b, "download a proof", chromedp.Evaluate[string](`fetch(document.querySelector("#games a.proof").href).then(r => r.ok ? r.text() : "HTTP " + r.status)`, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
	if e, n, err := verify.Proof([]byte(proof), logKey); err != nil || e.Game == nil {
		t.Errorf("the proof downloaded from the team's page does not check: %v\n%s", err, proof)
	} else if !slices.ContainsFunc(games, func(g event.Game) bool { return g.Dir == e.Game.Dir }) {
		t.Errorf("the proof is of entry %d, game %s: not one of the team's", n, e.Game.Dir)
	}
	game := fmt.Sprintf("/games/%d", games[0].ID)
	b.open(game)
	const complaint = "Turn 7: my bot timed out, it never takes more than 5 ms."
	b.do("type the dispute", chromedp.SendKeys(chromedp.CSS("#message"), complaint))
	b.follow(`#dispute-form button`)
	if p := b.path(); p != game {
		t.Errorf("after filing the page is %s, want %s", p, game)
	}
	if text := eval[string](b, `document.querySelector("#disputes .dispute") ? document.querySelector("#disputes .dispute").textContent : ""`); !strings.Contains(text, complaint) || !strings.Contains(text, "consistent") {
		t.Errorf("the game page's dispute reads %q", text)
	}
	b.screenshot("dispute-filed")

	b.follow(`form[action="/logout"] button`)
	b.login(e.admin)
	if p := b.path(); p != "/admin" {
		t.Fatalf("the organizer landed on %s", p)
	}
	if text := eval[string](b, `document.querySelector("#open-disputes").textContent`); !strings.Contains(text, complaint) || !strings.Contains(text, "Alpha") {
		t.Errorf("the organizer's page does not list the dispute: %q", text)
	}
	if n := eval[int](b, `document.querySelectorAll("#pinned tbody tr").length`); n != 3 {
		t.Errorf("the organizer's page lists %d pinned submissions, want 3", n)
	}
	b.screenshot("admin-final")
	b.noExceptions()
	b.noRefusals()
}

// seedGames records n games of team against rival in the event (a real
// match's directory, copied): ladder, scrimmage and final games in turn.
func seedGames(t *testing.T, st *event.Store, team, rival event.NewTeam, n int) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "match")
	if _, err := match.Run(context.Background(), match.Config{Game: codeclash.Game{}, Seed: 3, Rules: map[string]string{"maxPlies": "12"},
		White: loadBot(t, "./examples/random"), Black: loadBot(t, "./examples/greedy"), Backend: &local.Backend{Dir: t.TempDir()},
		Limits: sandbox.DefaultLimits(), Dir: src}); err != nil {
		t.Fatal(err)
	}
	kinds := []string{event.LadderGame, event.ScrimmageGame, event.FinalGame}
	for i := range n {
		dir := filepath.Join(st.Dir, "seeded", fmt.Sprint(i))
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		white, black := event.Side{Team: team.ID}, event.Side{Team: rival.ID}
		if i%2 == 1 {
			white, black = black, white
		}
		if _, err := st.AddGame(context.Background(), kinds[i%len(kinds)], dir, white, black, 0); err != nil {
			t.Fatal(err)
		}
	}
}
