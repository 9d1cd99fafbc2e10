package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/ziptest"
)

// callAPI is one call of the event's JSON API as token's holder: the status
// and the body.
func callAPI(t *testing.T, base, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(data)
}

// goBotZip is a Code Clash submission that passes: an example bot built
// static, its source and a README.
func goBotZip(t *testing.T, example string) string {
	t.Helper()
	exe, err := os.ReadFile(gobuild.MustStatic(t, "./examples/"+example))
	if err != nil {
		t.Fatal(err)
	}
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "examples", example, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	readme := "# " + example + "\n\nAlgorithm: a " + example + " mover.\n\nBuild: `CGO_ENABLED=0 go build -o bot .`\n"
	return writeFile(t, example+".zip", ziptest.Bytes(t,
		ziptest.Entry{Name: "bot", Data: exe, Mode: 0o755},
		ziptest.Entry{Name: "main.go", Data: src},
		ziptest.Entry{Name: "README.md", Data: []byte(readme)}))
}

// arenaCmd runs the arena binary and returns its output; it must exit with
// code.
func arenaCmd(t *testing.T, code int, args ...string) string {
	t.Helper()
	cmd := exec.Command(gobuild.MustStatic(t, "./cmd/arena"), args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if got != code {
		t.Fatalf("arena %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, out.String(), errs.String())
	}
	return out.String() + errs.String()
}

var tokenAtEnd = regexp.MustCompile(`\s([0-9a-f]{64})\s*$`)

// TestTheOrganizersDay walks an event's day as its organizer does, with the
// arena binary on the local sandbox and a real browser for the organizer's
// pages: teams whose names collide and one named with markup; uploads that
// pass, one that fails and is admitted, one that never passes; a team
// locked out by nobody after another's failed logins; the ladder with
// deterministic bots, no repeated game rated; a final refused until it can
// start; the close confirmed; a backup taken while the final plays,
// restored and served; the final started from the page with a team
// missing, and finished; a freeze that leaks nothing; a dispute answered.
func TestTheOrganizersDay(t *testing.T) {
	t.Parallel() // its own event, server processes and browser
	chromiumPath(t)
	shots := os.Getenv("ARENA_SCREENSHOTS")
	dir := filepath.Join(t.TempDir(), "event")
	arenaCmd(t, 0, "event", "init", dir, "--game", "codeclash")
	toml, err := os.ReadFile(filepath.Join(dir, event.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	toml = bytes.Replace(toml, []byte("uploads_per_hour = 12"), []byte("uploads_per_hour = 50"), 1)
	if err := os.WriteFile(filepath.Join(dir, event.ConfigFile), toml, 0o644); err != nil {
		t.Fatal(err)
	}

	// 1. Teams, two of whose names reduce to one bot name, one named with
	// markup: each gets a bot name of its own, and the organizer is told.
	csv := "name,members,contact\nC++ Wizards,Ann,\nC# Wizards,Bob,\n\"<b>Bold</b> & \"\"Quotes\"\"\",,\nLate Fixers,,\nNever Passes,,\n"
	out := arenaCmd(t, 0, "event", "teams", "import", dir, writeFile(t, "teams.csv", []byte(csv)))
	tokens := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if m := tokenAtEnd.FindStringSubmatch(line); m != nil {
			for _, name := range []string{"C++ Wizards", "C# Wizards", `<b>Bold</b> & "Quotes"`, "Late Fixers", "Never Passes"} {
				if strings.HasPrefix(line, name+" ") {
					tokens[name] = m[1]
				}
			}
		}
	}
	if len(tokens) != 5 || !strings.Contains(out, "C-Wizards-2") || !strings.Contains(out, `"C# Wizards" plays as C-Wizards-2`) {
		t.Fatalf("the import does not give every team a token and a bot name of its own:\n%s", out)
	}
	admin := regexp.MustCompile(`(?m)^[0-9a-f]{64}$`).FindString(arenaCmd(t, 0, "event", "admin-token", dir))
	if admin == "" {
		t.Fatal("arena event admin-token printed no token")
	}
	srv := startServe(t, dir, "--sandbox", "local", "--games", "2", "--validators", "2")
	base := srv.URL

	// The organizer logs in and, before anything passed, tries to start
	// the final: it is refused, with the reason on the page, and nothing
	// is closed.
	b := openTab(t, base, 12*time.Minute)
	b.login(admin)
	if p := b.path(); p != "/admin" {
		t.Fatalf("after the organizer's login the page is %s", p)
	}
	b.follow(`#start-final button`)
	refused := value(b, "read the refusal", chromedp.Text(chromedp.CSS("#refused")))
	if !strings.Contains(refused, "the final cannot start") || !strings.Contains(refused, "at least 2 teams") {
		t.Errorf("the refused final says %q", refused)
	}
	b.screenshot("organizer-refused-final")
	if code, body := callAPI(t, base, "POST", "/api/v1/admin/final", admin, `{"games_per_pair": 2}`); code != http.StatusConflict || !strings.Contains(body, `"refused"`) {
		t.Errorf("the API's refused final: %d %s", code, body)
	}
	if code, body := callAPI(t, base, "GET", "/api/v1/admin/outlook", admin, ""); code != http.StatusOK || strings.Contains(body, `"closed": true`) {
		t.Errorf("a refused final closed the event: %d %s", code, body)
	}

	// 5. Another team at the same address guesses tokens; a valid token
	// is never refused.
	for i := range 12 {
		callAPI(t, base, "GET", "/api/v1/me", fmt.Sprintf("%064d", i), "")
	}

	// 3. Uploads: three pass, one fails on its README only (the organizer
	// admits it), one never passes.
	pyDir := filepath.Join(t.TempDir(), "python")
	root, _ := gobuild.ModuleRoot()
	for _, f := range []string{"random_bot.py", "README.md"} {
		data, err := os.ReadFile(filepath.Join(root, "examples", "python", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(pyDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pyDir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broken := writeFile(t, "bot.py", []byte("def main(:\n    pass\n"))
	uploads := []struct {
		team, path string
		code       int
	}{
		{"C++ Wizards", goBotZip(t, "greedy"), 0},
		{"C# Wizards", goBotZip(t, "random"), 0},
		{`<b>Bold</b> & "Quotes"`, pyDir, 0},
		{"Late Fixers", filepath.Join(pyDir, "random_bot.py"), 1},
		{"Never Passes", broken, 1},
	}
	late := ""
	for _, u := range uploads {
		tf := writeFile(t, "token", []byte(tokens[u.team]))
		out := arenaCmd(t, u.code, "submit", "--server", base, "--token-file", tf, "--timeout", "5m", u.path)
		if u.team == "Late Fixers" {
			if !strings.Contains(out, "readme") {
				t.Errorf("%s's upload failed for another reason than its README:\n%s", u.team, out)
			}
			late = regexp.MustCompile(`as submission (\d+)`).FindStringSubmatch(out)[1]
		}
	}

	// The organizer's page before the close: who plays, and who will not.
	b.open("/admin")
	missing := value(b, "read who will not play", chromedp.Text(chromedp.CSS("#missing")))
	if !strings.Contains(missing, "Never Passes") || !strings.Contains(missing, "Late Fixers") {
		t.Errorf("the organizer's page before the close lists as missing: %q", missing)
	}
	// The failed upload is admitted from the page, with a reason.
	b.do("give the reason", chromedp.SendKeys(chromedp.CSS(`#admit-`+late+` textarea[name=reason]`), "Its README came by mail before the deadline."))
	b.follow(`#admit-` + late + ` button`)
	if !strings.Contains(b.path(), "notice=admitted") {
		t.Errorf("after the admission the page is %s", b.path())
	}
	b.open("/admin")
	missing = value(b, "read who will not play", chromedp.Text(chromedp.CSS("#missing")))
	if strings.Contains(missing, "Late Fixers") || !strings.Contains(missing, "Never Passes") {
		t.Errorf("after the admission the missing teams are %q", missing)
	}
	b.screenshot("organizer-before-close")
	if code, body := callAPI(t, base, "GET", "/team", tokens["Late Fixers"], ""); code != http.StatusOK || !strings.Contains(body, "admitted by the organizer") ||
		!strings.Contains(body, "README came by mail") {
		t.Errorf("the admitted team's page does not say so: %d %.3000s", code, body)
	}

	// 6 and 4. The ladder plays the four teams that play, deterministic
	// bots all: it stops once every pair's games are known, and no game
	// that repeats another is rated.
	type gamesAnswer struct {
		Games []event.Game `json:"games"`
		Total int          `json:"total"`
	}
	ladderGames := func() []event.Game {
		var all []event.Game
		for page := 1; ; page++ {
			code, body := callAPI(t, base, "GET", fmt.Sprintf("/api/v1/games?kind=ladder&page=%d", page), admin, "")
			var ga gamesAnswer
			if code != http.StatusOK || json.Unmarshal([]byte(body), &ga) != nil {
				t.Fatalf("ladder games: %d %s", code, body)
			}
			all = append(all, ga.Games...)
			if len(all) >= ga.Total || len(ga.Games) == 0 {
				return all
			}
		}
	}
	var ladder []event.Game
	lastChange, last := time.Now(), -1
	for deadline := time.Now().Add(6 * time.Minute); ; time.Sleep(time.Second) {
		ladder = ladderGames()
		if len(ladder) != last {
			last, lastChange = len(ladder), time.Now()
		}
		// Idle: every pair's games are known. Each of the 6 pairs of the
		// 4 teams that play has met until its last pair of games only
		// repeated earlier ones (the ladder then never pairs them again),
		// and nothing changed since; or nothing changed for 20 s.
		quiet := time.Since(lastChange)
		if len(ladder) > 0 && (quiet > 20*time.Second || quiet > 3*time.Second && exhausted(ladder) == 6) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ladder did not settle in 6 minutes: %d games\n%s", len(ladder), srv.Logs())
		}
	}
	courses := map[string]int64{}
	rated, repeats := 0, 0
	for _, g := range ladder {
		code, body := callAPI(t, base, "GET", fmt.Sprintf("/api/v1/games/%d/transcript", g.ID), admin, "")
		if code != http.StatusOK {
			t.Fatalf("transcript of game %d: %d", g.ID, code)
		}
		lines, err := transcript.Read(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		c, err := transcript.Course(lines)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%d/%d/%s", g.White.Submission, g.Black.Submission, c)
		if !g.Rated {
			repeats++
			continue
		}
		rated++
		if other, ok := courses[key]; ok {
			t.Errorf("ladder games %d and %d are the same game, and both were rated", other, g.ID)
		}
		courses[key] = g.ID
	}
	t.Logf("the ladder played %d games: %d rated, all distinct; %d repeats kept unrated (distinct-game ratio of the rated games 1.0, of all %.2f)",
		len(ladder), rated, repeats, float64(rated)/float64(len(ladder)))
	if rated == 0 || repeats == 0 || len(ladder) > 4*3*2*2 {
		t.Errorf("the ladder played %d games, %d rated and %d repeats: want the 12 games of 6 pairs rated once, and it stopped after their repeats",
			len(ladder), rated, repeats)
	}
	// What the ladder keeps per game (docs/serve.md gives it).
	var games, dbs int64
	err = filepath.WalkDir(filepath.Join(dir, event.LadderDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil && strings.HasPrefix(d.Name(), "tournament.db") {
			dbs += fi.Size()
		} else if err == nil {
			games += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the ladder keeps %.1f KiB a game, and %.1f KiB of tournament database a pair", float64(games)/1024/float64(len(ladder)),
		float64(dbs)/1024/float64(len(ladder)/2))

	// The close, confirmed on its page; a scrimmage after it is refused.
	b.open("/admin")
	b.follow(`#close`)
	if b.path() != "/admin/close" {
		t.Fatalf("the close button leads to %s, want the confirmation", b.path())
	}
	b.follow(`#confirm-close`)
	if code, body := callAPI(t, base, "POST", "/api/v1/scrimmages", tokens["C++ Wizards"], `{"rival": 2}`); code != http.StatusConflict || !strings.Contains(body, "closed") {
		t.Errorf("a scrimmage after the close: %d %s", code, body)
	}

	// The final, started from the page, with Never Passes left out.
	b.open("/admin")
	b.follow(`#start-final button`)
	if txt := value(b, "read the final's state", chromedp.Text(chromedp.CSS("#final"))); !strings.Contains(txt, "playing since") {
		t.Errorf("after starting the final the page says %q", txt)
	}

	// 2. A backup while the final plays, served on its own.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var ga gamesAnswer
		_, body := callAPI(t, base, "GET", "/api/v1/games?kind=final", admin, "")
		if json.Unmarshal([]byte(body), &ga) == nil && ga.Total >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no game of the final within 2 minutes\n%s", srv.Logs())
		}
	}
	copyDir := filepath.Join(t.TempDir(), "copy")
	start := time.Now()
	out = arenaCmd(t, 0, "event", "backup", dir, copyDir)
	t.Logf("backup while the final plays, in %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	copied := startServe(t, copyDir, "--sandbox", "local", "--games", "1", "--validators", "1")
	code, body := callAPI(t, copied.URL, "GET", "/api/v1/games?page=1", admin, "")
	var ga gamesAnswer
	if code != http.StatusOK || json.Unmarshal([]byte(body), &ga) != nil || ga.Total < len(ladder)+2 {
		t.Fatalf("the copy's games: %d %.500s", code, body)
	}
	for _, g := range ga.Games {
		if code, _ := callAPI(t, copied.URL, "GET", fmt.Sprintf("/api/v1/games/%d/transcript", g.ID), admin, ""); code != http.StatusOK {
			t.Errorf("the copy's game %d: transcript %d", g.ID, code)
		}
		if code, _ := callAPI(t, copied.URL, "GET", fmt.Sprintf("/games/%d/view", g.ID), admin, ""); code != http.StatusOK {
			t.Errorf("the copy's game %d: viewer %d", g.ID, code)
		}
	}
	if out := arenaCmd(t, 0, "standings", filepath.Join(copyDir, event.FinalDir)); !strings.Contains(out, "C-Wizards-2") {
		t.Errorf("arena standings of the copy's final:\n%s", out)
	}
	copied.Stop(t)

	// The final ends; its standings name the teams as they are named.
	var board event.Board
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		_, body := callAPI(t, base, "GET", "/api/v1/standings", admin, "")
		if err := json.Unmarshal([]byte(body), &board); err != nil {
			t.Fatal(err)
		}
		if !board.Run.Finished.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the final did not end in 5 minutes: %+v\n%s", board, srv.Logs())
		}
	}
	if board.Run.Error != "" || board.Games["done"] != 12 || len(board.Standings) != 4 {
		t.Fatalf("the final ended with %+v, want the 12 games of 4 teams", board)
	}
	_, home := callAPI(t, base, "GET", "/", "", "")
	standings := regexp.MustCompile(`(?s)<table class="list" id="standings">.*?</table>`).FindString(home)
	for _, want := range []string{"C++ Wizards", "C# Wizards", `<b>Bold</b> & "Quotes"`, "Late Fixers"} {
		if !strings.Contains(html.UnescapeString(standings), want) {
			t.Errorf("the home page's standings lack %s:\n%s", want, standings)
		}
	}
	if strings.Contains(standings, "b-Bold-b-Quotes") || strings.Contains(standings, "<b>Bold") || !strings.Contains(standings, "&lt;b&gt;Bold") {
		t.Errorf("the home page shows a bot name, or markup, for the team named with markup")
	}

	// A freeze from the third game's end: nothing after it shows.
	var finals gamesAnswer
	_, body = callAPI(t, base, "GET", "/api/v1/games?kind=final", admin, "")
	if err := json.Unmarshal([]byte(body), &finals); err != nil || len(finals.Games) != 12 {
		t.Fatalf("the final's games: %v %.300s", err, body)
	}
	at := finals.Games[len(finals.Games)-3].Finished // the third to finish: the list is newest first
	if code, body := callAPI(t, base, "POST", "/api/v1/admin/freeze", admin, fmt.Sprintf(`{"at": %q}`, at.Format(time.RFC3339Nano))); code != http.StatusOK {
		t.Fatalf("freeze: %d %s", code, body)
	}
	for _, who := range []string{"", tokens["C# Wizards"]} {
		_, body := callAPI(t, base, "GET", "/api/v1/standings", who, "")
		var fb event.Board
		if err := json.Unmarshal([]byte(body), &fb); err != nil {
			t.Fatal(err)
		}
		if fb.FrozenAt.IsZero() || fb.Games["done"] >= 12 || !fb.Run.Finished.IsZero() {
			t.Errorf("the frozen board tells what came after the freeze: %s", body)
		}
		if _, page := callAPI(t, base, "GET", "/", who, ""); strings.Contains(page, "Over.") || !strings.Contains(page, `id="frozen"`) {
			t.Errorf("the frozen home page says the final is over, or not that it is frozen")
		}
	}
	b.open("/admin")
	b.screenshot("organizer-frozen")

	// A dispute, answered.
	// The teams were made in the file's order: ids 1 to 5.
	byID := map[int64]string{}
	for i, name := range []string{"C++ Wizards", "C# Wizards", `<b>Bold</b> & "Quotes"`, "Late Fixers", "Never Passes"} {
		byID[int64(i+1)] = tokens[name]
	}
	g := finals.Games[0]
	team := byID[g.White.Team]
	code, body = callAPI(t, base, "POST", fmt.Sprintf("/api/v1/games/%d/disputes", g.ID), team, `{"message": "Was turn 3 timed right?"}`)
	var filed struct{ Dispute event.Dispute }
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &filed) != nil {
		t.Fatalf("dispute: %d %s", code, body)
	}
	if code, body := callAPI(t, base, "POST", fmt.Sprintf("/api/v1/admin/disputes/%d/answer", filed.Dispute.ID), admin, `{"answer": "Yes: 12 ms of 5 s."}`); code != http.StatusOK {
		t.Fatalf("answer: %d %s", code, body)
	}
	if _, page := callAPI(t, base, "GET", fmt.Sprintf("/games/%d", g.ID), team, ""); !strings.Contains(page, "12 ms of 5 s.") {
		t.Errorf("the team does not see the answer on the game's page")
	}

	// The organizer's actions, in the audit log and the server's log.
	code, body = callAPI(t, base, "GET", "/api/v1/admin/audit", admin, "")
	for _, a := range []string{event.ActionAdmit, event.ActionClose, event.ActionFinal, event.ActionFreeze, event.ActionAnswer} {
		if code != http.StatusOK || !strings.Contains(body, `"action": "`+a+`"`) {
			t.Errorf("the audit log lacks %s: %d %.500s", a, code, body)
		}
	}
	logs := srv.Logs()
	for _, want := range []string{"organizer: close", "organizer: admit", "organizer: freeze", "msg=\"ladder pair\""} {
		if !strings.Contains(logs, want) {
			t.Errorf("the server's log says nothing of %q", want)
		}
	}
	b.noExceptions()
	b.noRefusals()
	if shots != "" {
		t.Logf("screenshots in %s", shots)
	}
}

// exhausted counts the pairs of submissions whose last two ladder games
// (a ladder pair's) were both unrated repeats.
func exhausted(games []event.Game) int {
	byPair := map[[2]int64][]event.Game{}
	for _, g := range games {
		a, b := g.White.Submission, g.Black.Submission
		k := [2]int64{min(a, b), max(a, b)}
		byPair[k] = append(byPair[k], g)
	}
	n := 0
	for _, gs := range byPair {
		slices.SortFunc(gs, func(x, y event.Game) int { return int(x.ID - y.ID) })
		if len(gs) >= 2 && !gs[len(gs)-1].Rated && !gs[len(gs)-2].Rated {
			n++
		}
	}
	return n
}
