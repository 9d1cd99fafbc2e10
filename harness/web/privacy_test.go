package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// TestLogsArePrivateGamesAreShared: in a game between A and B whose bots
// both print to stderr and keep a data file of their own name, A's game
// page, viewer, transcript and API hold its own stderr and none of B's, no
// path of the server and none of B's file names; B's likewise; the
// organizer's hold both. The copy a team gets says what it leaves out, and
// its chain's links can still be followed.
func TestLogsArePrivateGamesAreShared(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	ctx := context.Background()
	root, _ := gobuild.ModuleRoot()
	py, err := os.ReadFile(filepath.Join(root, "examples", "python", "random_bot.py"))
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	builder := &build.Builder{Backend: backend, Langs: build.Default(), Limits: sandbox.DefaultLimits(), Timeout: time.Minute}
	bot := func(team event.NewTeam, who string) (event.Side, *submission.Bot) {
		src := strings.Replace(string(py), `DATA_FILE = "py-bot.json"`, `DATA_FILE = "`+who+`-private-memory.json"`, 1)
		src = strings.Replace(src, "def main():\n", "def main():\n    print(\""+strings.ToUpper(who)+"-STDERR-MARKER\", file=sys.stderr)\n", 1)
		sub, err := e.store.AddSubmission(ctx, e.server.Config, team.ID, who+"-private-name.py", strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
			t.Fatal(err)
		}
		b, err := services.LoadBot(ctx, e.store, sub.ID, codeclash.Game{}, builder, submission.DefaultLimits(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return event.Side{Team: team.ID, Submission: sub.ID}, b
	}
	sa, ba := bot(e.a, "alpha")
	sb, bb := bot(e.b, "beta")
	dir := filepath.Join(e.dir, event.ScrimmagesDir, "1", "game")
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 5 * time.Second
	if _, err := match.Run(ctx, match.Config{Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "12"}, Seed: 5, White: ba, Black: bb,
		Backend: backend, Limits: lim, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	g, err := e.store.AddGame(ctx, event.ScrimmageGame, dir, sa, sb)
	if err != nil {
		t.Fatal(err)
	}
	answers := func(token string) string {
		var all strings.Builder
		for _, p := range []string{"/games/%d", "/games/%d/view", "/api/v1/games/%d", "/api/v1/games/%d/transcript"} {
			res, body := e.do(t, http.MethodGet, fmt.Sprintf(p, g.ID), token, nil, "")
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", fmt.Sprintf(p, g.ID), res.StatusCode)
			}
			all.WriteString(body)
		}
		return all.String()
	}
	for _, c := range []struct {
		who, token, own, other string
	}{{"A", e.a.Token, "alpha", "beta"}, {"B", e.b.Token, "beta", "alpha"}} {
		got := answers(c.token)
		if !strings.Contains(got, strings.ToUpper(c.own)+"-STDERR-MARKER") {
			t.Errorf("%s does not see its own bot's stderr", c.who)
		}
		for _, secret := range []string{strings.ToUpper(c.other) + "-STDERR-MARKER", c.other + "-private-name", c.other + "-private-memory", e.dir, event.UploadsDir + "/"} {
			if strings.Contains(got, secret) {
				t.Errorf("%s's answers hold %q", c.who, secret)
			}
		}
	}
	all := answers(e.admin)
	for _, want := range []string{"ALPHA-STDERR-MARKER", "BETA-STDERR-MARKER", "beta-private-memory"} {
		if !strings.Contains(all, want) {
			t.Errorf("the organizer does not see %q", want)
		}
	}
	if strings.Contains(all, e.dir) {
		t.Errorf("the transcript holds the server's path %s", e.dir)
	}
	// A's copy: each line that lost fields says so, with the hash the next
	// line's prev names.
	_, body := e.do(t, http.MethodGet, fmt.Sprintf("/api/v1/games/%d/transcript", g.ID), e.a.Token, nil, "")
	lines, err := transcript.Read(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	redacted := 0
	for i, l := range lines[:len(lines)-1] {
		var r struct {
			Redacted *transcript.Redacted `json:"redacted"`
		}
		if err := l.Decode(&r); err != nil {
			t.Fatal(err)
		}
		hash := l.Hash
		if r.Redacted != nil {
			redacted++
			hash = r.Redacted.Hash
		}
		if lines[i+1].Prev != hash {
			t.Fatalf("line %d's prev is not the hash its line %d gives", i+2, i+1)
		}
	}
	if redacted == 0 {
		t.Error("A's copy says nothing was left out")
	}
}
