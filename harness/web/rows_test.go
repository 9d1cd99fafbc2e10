package web

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/validate"
)

// A games table's row (the template "game-row") shows every text of it
// (names, kind, result, reason, length) as text, whatever it holds, in a
// table cell or an attribute.
func TestAGameRowShowsEveryTextAsText(t *testing.T) {
	t.Parallel()
	const hostile = `<img src=x onerror="alert(1)">'&</td>`
	plain := func() gameRow {
		return gameRow{ID: 7, Kind: "ladder", Reason: "checkmate", Plies: 40, Length: "40 plies", Finished: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC),
			WhiteName: "white team", BlackName: "black team", Result: "white won"}
	}
	// The markup a row is made of: its tags and its attributes' quotes.
	shape := func(html string) (tags, quotes int) { return strings.Count(html, "<"), strings.Count(html, `"`) }
	for _, mine := range []bool{false, true} {
		base := plain()
		base.Rated = true // no "(unrated)" whatever the kind
		fields := map[string]func(*gameRow){
			"kind":   func(r *gameRow) { r.Kind = hostile },
			"reason": func(r *gameRow) { r.Reason = hostile },
			"result": func(r *gameRow) { r.Result = hostile },
			"length": func(r *gameRow) { r.Length = hostile },
		}
		if mine {
			base.Me, base.Rival, base.MySubmission = "black", "white team", 3
			fields["me"] = func(r *gameRow) { r.Me = hostile }
			fields["rival"] = func(r *gameRow) { r.Rival = hostile }
		} else {
			fields["white"] = func(r *gameRow) { r.WhiteName = hostile }
			fields["black"] = func(r *gameRow) { r.BlackName = hostile }
		}
		tags, quotes := shape(gameRowHTML(t, base))
		for name, set := range fields {
			r := base
			set(&r)
			html := gameRowHTML(t, r)
			if gt, gq := shape(html); gt != tags || gq != quotes {
				t.Errorf("a %s of markup (mine: %t) changed the row's markup: %d tags and %d quotes, want %d and %d:\n%s", name, mine, gt, gq, tags, quotes, html)
			}
			if !strings.Contains(html, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&#39;&amp;&lt;/td&gt;") {
				t.Errorf("the row does not show its %s (mine: %t) as text:\n%s", name, mine, html)
			}
		}
	}
	// What the row says: the game, the side, the submission, the length.
	r := plain()
	r.Me, r.Rival, r.MySubmission, r.Turns = "black", "white team", 3, 12
	want := `<tr><td><a href="/games/7">#7</a></td><td>ladder <span class="muted" title="not rated: a repeat of an earlier game, or played after the close">(unrated)</span></td>
<td>black</td><td>white team</td><td><a href="/submissions/3">#3</a></td>
<td class="result-white won">white won</td><td>checkmate</td><td title="40 plies">12</td><td>2026-11-26 08:00:00 UTC</td></tr>
`
	if got := gameRowHTML(t, r); got != want {
		t.Errorf("the row:\n%s\nwant\n%s", got, want)
	}
}

// A row of a team's versions (the template "version-row"): its file's
// name, hash, state, summary and the organizer's reason show as text; the form to make it active is there only for a submission that
// plays and is not active.
func TestAVersionRowShowsEveryTextAsText(t *testing.T) {
	t.Parallel()
	const hostile = `<img src=x onerror="alert(1)">'&</td>`
	base := event.Submission{ID: 4, SHA256: "0123456789abcdef", Size: 1536, Filename: "bot.zip", Uploaded: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC),
		State: event.Failed, Summary: "no README", Admitted: "came by mail"}
	shape := func(html string) (tags, quotes int) { return strings.Count(html, "<"), strings.Count(html, `"`) }
	tags, quotes := shape(versionRowHTML(t, base, "tok", -1))
	for name, set := range map[string]func(*event.Submission){
		"file name": func(s *event.Submission) { s.Filename = hostile },
		"hash":      func(s *event.Submission) { s.SHA256 = hostile },
		"summary":   func(s *event.Submission) { s.Summary = hostile },
		"reason":    func(s *event.Submission) { s.Admitted = hostile },
	} {
		sub := base
		set(&sub)
		html := versionRowHTML(t, sub, "tok", -1)
		if gt, gq := shape(html); gt != tags || gq != quotes {
			t.Errorf("a %s of markup changed the row's markup: %d tags and %d quotes, want %d and %d:\n%s", name, gt, gq, tags, quotes, html)
		}
		if !strings.Contains(html, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&#39;&amp;") {
			t.Errorf("the row does not show its %s as text:\n%s", name, html)
		}
	}
	want := `
<tr data-submission="4">
<td><a href="/submissions/4">#4</a></td><td>2026-11-26 08:00:00 UTC</td><td>bot.zip</td><td>1.5 KiB</td>
<td><code title="0123456789abcdef">0123456789ab</code></td>
<td><span class="state state-failed">failed</span></td>
<td class="summary">no README<br><strong>admitted by the organizer:</strong> came by mail</td>
<td>
<form method="post" action="/team/submissions/4/activate" class="inline"><input type="hidden" name="csrf" value="tok"><button class="small">Make active</button></form>
</td>
</tr>
`
	if got := versionRowHTML(t, base, "tok", -1); got != want {
		t.Errorf("an admitted submission's row:\n%s\nwant\n%s", got, want)
	}
	active := base
	active.State, active.Admitted, active.Active = event.Passed, "", true
	if got := versionRowHTML(t, active, "tok", -1); strings.Contains(got, "<form") || !strings.Contains(got, `<tr data-submission="4" class="active">`) ||
		!strings.Contains(got, "<strong>active</strong> no README") {
		t.Errorf("the active submission's row:\n%s", got)
	}
	failed := base
	failed.Admitted = ""
	if got := versionRowHTML(t, failed, "tok", -1); strings.Contains(got, "<form") {
		t.Errorf("a failed submission's row offers to make it active:\n%s", got)
	}
}

// A scrimmage's row (the template "scrimmage-row") shows every text as
// text, whatever a team's name, a game's reason or the scrimmage's message
// holds.
func TestAScrimmageRowShowsEveryTextAsText(t *testing.T) {
	t.Parallel()
	const hostile = `<img src=x onerror="alert(1)">'&</td>`
	names := event.TeamNames{ByID: map[int64]string{1: "Alpha", 2: "Beta"}}
	base := event.Scrimmage{ID: 7, Team: 1, RivalTeam: 2, State: event.ScrimmageDone, Message: "two games", Created: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	games := []gameRow{{ID: 31, Me: "white", Result: "won", Reason: "checkmate"}, {ID: 32, Me: "black", Result: "draw", Reason: "stalemate"}}
	shape := func(html string) (tags, quotes int) { return strings.Count(html, "<"), strings.Count(html, `"`) }
	tags, quotes := shape(scrimmageRowHTML(t, base, games, names, -1))
	for name, set := range map[string]func(*event.Scrimmage, []gameRow, *event.TeamNames){
		"challenger's name": func(_ *event.Scrimmage, _ []gameRow, n *event.TeamNames) {
			n.ByID = map[int64]string{1: hostile, 2: "Beta"}
		},
		"rival's name": func(_ *event.Scrimmage, _ []gameRow, n *event.TeamNames) {
			n.ByID = map[int64]string{1: "Alpha", 2: hostile}
		},
		"message":       func(sc *event.Scrimmage, _ []gameRow, _ *event.TeamNames) { sc.Message = hostile },
		"game's reason": func(_ *event.Scrimmage, g []gameRow, _ *event.TeamNames) { g[0].Reason = hostile },
	} {
		sc, g, n := base, slices.Clone(games), names
		set(&sc, g, &n)
		html := scrimmageRowHTML(t, sc, g, n, -1)
		if gt, gq := shape(html); gt != tags || gq != quotes {
			t.Errorf("a %s of markup changed the row's markup: %d tags and %d quotes, want %d and %d:\n%s", name, gt, gq, tags, quotes, html)
		}
		if !strings.Contains(html, "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&#39;&amp;") {
			t.Errorf("the row does not show its %s as text:\n%s", name, html)
		}
	}
	want := `<tr><td>7</td><td>Alpha</td><td>Beta</td><td>2026-11-26 08:00:00 UTC</td>
<td><span class="state state-done">done</span></td><td><a href="/games/31">#31</a> as white: <span class="result-won">won</span> (checkmate) <a href="/games/32">#32</a> as black: <span class="result-draw">draw</span> (stalemate) two games</td></tr>
`
	if got := scrimmageRowHTML(t, base, games, names, -1); got != want {
		t.Errorf("a scrimmage's row:\n%s\nwant\n%s", got, want)
	}
}

// drawRow is the row template name of page drawn from data.
func drawRow(t *testing.T, page, name string, data any) string {
	t.Helper()
	html, err := fragment(page, name, data)
	if err != nil {
		t.Fatal(err)
	}
	return string(html)
}

// gameRowHTML is r drawn as a games table's row.
func gameRowHTML(t *testing.T, r gameRow) string {
	t.Helper()
	return drawRow(t, "games", "game-row", r)
}

// versionRowHTML is sub drawn as a row of its team's versions.
func versionRowHTML(t *testing.T, sub event.Submission, csrf string, ahead int) string {
	t.Helper()
	return drawRow(t, "team", "version-row", versionRow{Submission: sub, CSRF: csrf, Ahead: ahead})
}

// scrimmageRowHTML is sc drawn as a row of its team's scrimmages.
func scrimmageRowHTML(t *testing.T, sc event.Scrimmage, games []gameRow, names event.TeamNames, ahead int) string {
	t.Helper()
	return drawRow(t, "team", "scrimmage-row", newScrimmageRow(sc, games, names, ahead))
}

// The organizer's list of failures offers Admit for a failure that could
// play (a README missing) and not for one with nothing that could play (a
// syntax error): it says why instead, and the API refuses it all the same.
func TestAFailureThatCannotPlayIsNotOfferedForAdmission(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	ctx := context.Background()
	fail := func(team int64, rep *validate.Report) event.Submission {
		sub, err := e.store.AddSubmission(ctx, e.server.Config, team, "bot.py", strings.NewReader(fmt.Sprintf("print(%d)\n", team)))
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Save(e.store.ValidationDir(sub.ID)); err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetValidated(ctx, sub.ID, event.Failed, rep.Summary(), rep.CannotPlay()); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	readme := validate.Check{Name: "readme", Status: validate.Fail, Detail: "no README.md or README.txt"}
	could := fail(e.a.ID, &validate.Report{Entry: "bot.py", Checks: []validate.Check{readme}, Failures: 1})
	cannot := fail(e.b.ID, &validate.Report{Checks: []validate.Check{{Name: "syntax", Status: validate.Fail,
		Detail: "bot.py, line 1: SyntaxError: expected ':'"}, readme}, Failures: 2})
	res, page := e.do(t, "GET", "/admin", e.admin, nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/admin: %d", res.StatusCode)
	}
	if !strings.Contains(page, fmt.Sprintf(`id="admit-%d"`, could.ID)) {
		t.Errorf("no Admit for the submission that could play")
	}
	if strings.Contains(page, fmt.Sprintf(`id="admit-%d"`, cannot.ID)) || !strings.Contains(page, "Cannot be admitted: it has nothing that could play.") {
		t.Errorf("the submission with a syntax error is offered for admission, or not said why not")
	}
	res, body := e.do(t, "POST", fmt.Sprintf("/api/v1/admin/submissions/%d/admit", cannot.ID), e.admin, strings.NewReader(`{"reason": "please"}`), "application/json")
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "nothing that could play") {
		t.Errorf("admitting the syntax error over the API: %d %s", res.StatusCode, body)
	}
}

// The organizer's page lists the first hundred teams that would play, and
// says where the rest are: a thousand rows were most of its drawing.
func TestTheOrganizersPageListsAHundredTeamsThatWouldPlay(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "game = \"codeclash\"\n[quotas]\nuploads_per_hour = 1000\npending_validations = 1000\n")
	ctx := context.Background()
	for i := range 103 {
		team, err := e.store.AddTeam(ctx, fmt.Sprintf("Team %03d", i), "", "")
		if err != nil {
			t.Fatal(err)
		}
		sub, err := e.store.AddSubmission(ctx, e.server.Config, team.ID, "bot.py", strings.NewReader(fmt.Sprintf("print(%d)\n", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
			t.Fatal(err)
		}
	}
	res, page := e.do(t, "GET", "/admin", e.admin, nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/admin: %d", res.StatusCode)
	}
	table := regexp.MustCompile(`(?s)<table class="list" id="would-play">.*?</table>`).FindString(page)
	if rows := strings.Count(table, "<tr><td>"); rows != 100 || !strings.Contains(page, "103 teams would play") ||
		!strings.Contains(page, `id="would-play-more"`) || !strings.Contains(page, "lists all 103") {
		t.Errorf("the organizer's page lists %d teams that would play of 103", rows)
	}
}

// A team sees where each of its queued uploads stands in the validation
// queue, which takes uploads in their order, every team's.
func TestATeamSeesItsPlaceInTheValidationQueue(t *testing.T) {
	e := newTestEvent(t, "")
	ctx := context.Background()
	upload := func(team int64, name string) event.Submission {
		t.Helper()
		sub, err := e.store.AddSubmission(ctx, e.server.Config, team, name, strings.NewReader("print(1)\n"))
		if err != nil {
			t.Fatal(err)
		}
		if sub.State != event.Queued {
			t.Fatalf("%s is %s, not queued", name, sub.State)
		}
		return sub
	}
	first := upload(e.a.ID, "first.py")
	upload(e.b.ID, "theirs.py")
	third := upload(e.a.ID, "third.py")
	res, page := e.do(t, http.MethodGet, "/team", e.a.Token, nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the team page: %d", res.StatusCode)
	}
	row := func(id int64) string {
		return regexp.MustCompile(`(?s)<tr data-submission="` + fmt.Sprint(id) + `".*?</tr>`).FindString(page)
	}
	if r := row(first.ID); !strings.Contains(r, `<span class="queue-place muted">next in line</span>`) {
		t.Errorf("the first upload's row: %s", r)
	}
	if r := row(third.ID); !strings.Contains(r, `<span class="queue-place muted">2 ahead</span>`) {
		t.Errorf("the third upload's row (another team's upload and its own first ahead): %s", r)
	}
	if strings.Contains(page, "theirs.py") {
		t.Error("the team page names another team's upload")
	}
	// The queue moves with another team's validation: the page says so at
	// its next view.
	if _, err := e.store.Claim(ctx); err != nil {
		t.Fatal(err)
	}
	if _, page = e.do(t, http.MethodGet, "/team", e.a.Token, nil, ""); !strings.Contains(regexp.MustCompile(`(?s)<tr data-submission="`+fmt.Sprint(third.ID)+`".*?</tr>`).FindString(page), "1 ahead") {
		t.Errorf("after a validation was taken the third upload's place did not move")
	}
}

// A team's queued scrimmages show their place in the scrimmages' queue,
// played in the order they were asked for.
func TestATeamSeesItsScrimmagesPlaceInTheQueue(t *testing.T) {
	e := newTestEvent(t, "")
	ctx := context.Background()
	passedUpload(t, e, e.a.ID, "./examples/random")
	passedUpload(t, e, e.b.ID, "./examples/random")
	theirs, err := e.store.AddScrimmage(ctx, e.server.Config, e.b.ID, e.a.ID)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := e.store.AddScrimmage(ctx, e.server.Config, e.a.ID, e.b.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, page := e.do(t, http.MethodGet, "/team", e.a.Token, nil, "")
	row := func(id int64) string {
		return regexp.MustCompile(`(?s)<tr><td>` + fmt.Sprint(id) + `</td>.*?</tr>`).FindString(page)
	}
	if r := row(theirs.ID); !strings.Contains(r, "next in line") {
		t.Errorf("the challenge of the team, asked first: %s", r)
	}
	if r := row(ours.ID); !strings.Contains(r, "1 ahead") {
		t.Errorf("the team's own challenge, asked second: %s", r)
	}
}
