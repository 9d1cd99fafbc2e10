package web

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
)

// TestEveryRouteChecksWhoAsks asks every route the server has (so a route
// added later is asked too) as nobody, as another team and as the owner,
// about team A's submission and game: nobody gets 401 on a route that is not
// public, team B gets 403 on A's objects and the organizer's routes, and no
// answer to B or to nobody holds a byte of A's data.
func TestEveryRouteChecksWhoAsks(t *testing.T) {
	e := newTestEvent(t, "")
	// The arena binary the site offers (a program of this machine's: the
	// test's own executable holds the markers below as its constants).
	if e.server.Arena, _ = exec.LookPath("true"); e.server.Arena == "" {
		t.Fatal("no true(1) to offer as the arena binary")
	}
	ctx := context.Background()
	secret := []byte("print('alpha secret strategy 8d1f')\n")
	sub, err := e.store.AddSubmission(ctx, e.server.Config, e.a.ID, "alpha-secret.py", strings.NewReader(string(secret)))
	if err != nil {
		t.Fatal(err)
	}
	game := playGame(t, e, event.Side{Team: e.a.ID, Submission: sub.ID}, event.ValidationGame)
	// What must never reach B or nobody: A's code, its file name and hash,
	// A's contact, and the game's transcript.
	markers := []string{"alpha secret strategy", "alpha-secret", sub.SHA256, "alpha@example.org", `"type":"turn"`}

	idFor := func(pattern string) string {
		switch {
		case strings.Contains(pattern, "/games/"):
			return fmt.Sprint(game.ID)
		case strings.Contains(pattern, "/teams/"):
			return fmt.Sprint(e.a.ID)
		}
		return fmt.Sprint(sub.ID)
	}
	routes := e.server.Routes()
	if len(routes) < 30 {
		t.Fatalf("only %d routes", len(routes))
	}
	// B asks for a new token of its own last: its old one stops working.
	slices.SortStableFunc(routes, func(x, y Route) int {
		return boolInt(strings.HasSuffix(x.Pattern, "/token")) - boolInt(strings.HasSuffix(y.Pattern, "/token"))
	})
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		path = strings.TrimSuffix(path, "{$}")
		path = strings.ReplaceAll(path, "{id}", idFor(rt.Pattern))
		path = strings.ReplaceAll(path, "{file}", "style.css")
		path = strings.ReplaceAll(path, "{name}", "w1")
		path = strings.ReplaceAll(path, "{starter}", "python.zip")
		hasObject := strings.Contains(rt.Pattern, "{id}")

		for _, who := range []struct {
			name, token string
		}{{"nobody", ""}, {"team B", e.b.Token}} {
			if who.token != "" {
				who.token = e.b.Token
			}
			res, body := e.do(t, method, path, who.token, strings.NewReader(""), "application/x-www-form-urlencoded")
			want := 0
			switch {
			case rt.Access == Public:
			case who.token == "":
				want = http.StatusUnauthorized
			case rt.Access == Organizer || hasObject:
				want = http.StatusForbidden
			}
			if want != 0 && res.StatusCode != want {
				t.Errorf("%s as %s: status %d, want %d", rt.Pattern, who.name, res.StatusCode, want)
			}
			if want == 0 && (res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden) && rt.Pattern != "POST /login" {
				t.Errorf("%s as %s: status %d on a public route", rt.Pattern, who.name, res.StatusCode)
			}
			for _, m := range markers {
				if strings.Contains(body, m) {
					t.Errorf("%s as %s: the answer holds A's data %q", rt.Pattern, who.name, m)
				}
			}
			if who.token != "" && strings.HasSuffix(rt.Pattern, "/token") {
				if res.StatusCode != http.StatusOK {
					t.Errorf("%s as %s: status %d, want a new token", rt.Pattern, who.name, res.StatusCode)
				}
				// B's old token works no more: give it one to go on with.
				if e.b.Token, err = e.store.NewTeamToken(ctx, e.b.ID); err != nil {
					t.Fatal(err)
				}
			}
			if rt.API && res.StatusCode >= 400 && !strings.Contains(res.Header.Get("Content-Type"), "json") {
				t.Errorf("%s as %s: an API error that is not JSON (%s)", rt.Pattern, who.name, res.Header.Get("Content-Type"))
			}
		}
	}

	// The owner reads every page and API answer about its objects.
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		if method != http.MethodGet || rt.Access == Organizer || rt.Pattern == "GET /team/events" {
			continue
		}
		path = strings.TrimSuffix(path, "{$}")
		path = strings.ReplaceAll(path, "{id}", idFor(rt.Pattern))
		path = strings.ReplaceAll(path, "{file}", "style.css")
		path = strings.ReplaceAll(path, "{starter}", "python.zip")
		res, body := e.do(t, method, path, e.a.Token, nil, "")
		ok := res.StatusCode < 300
		if strings.HasSuffix(rt.Pattern, "report.txt") {
			ok = res.StatusCode == http.StatusConflict // not validated: nothing validates here
		}
		if strings.HasPrefix(rt.Pattern, "GET /log/") || strings.HasSuffix(rt.Pattern, "/proof") {
			ok = res.StatusCode == http.StatusNotFound // the final's log starts with the final; the game is no final's
		}
		if strings.HasPrefix(rt.Pattern, "GET /live/") {
			ok = res.StatusCode == http.StatusNotFound // no game is playing
		}
		if !ok {
			t.Errorf("%s as its owner: status %d: %.300s", rt.Pattern, res.StatusCode, body)
		}
	}
	// The organizer reads every organizer's page.
	for _, p := range []string{"/admin", "/api/v1/admin/teams", "/api/v1/admin/queue", "/games/" + fmt.Sprint(game.ID), "/submissions/" + fmt.Sprint(sub.ID)} {
		if res, body := e.do(t, http.MethodGet, p, e.admin, nil, ""); res.StatusCode != http.StatusOK {
			t.Errorf("%s as the organizer: status %d: %.300s", p, res.StatusCode, body)
		}
	}
}

// TestFailedLoginsAreSlowedAndAValidTokenIsNeverRefused: after ten failed
// tokens from one address, the next wrong one is refused as one too many,
// but a valid token from that address (a team behind the same NAT, or its
// CI) still logs in, on the API and on the page.
func TestFailedLoginsAreSlowedAndAValidTokenIsNeverRefused(t *testing.T) {
	e := newTestEvent(t, "")
	for i := range 10 {
		if res, _ := e.do(t, http.MethodGet, "/api/v1/me", fmt.Sprintf("wrong-%d", i), nil, ""); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong token: status %d", res.StatusCode)
		}
	}
	res, body := e.do(t, http.MethodGet, "/api/v1/me", "wrong-again", nil, "")
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"code": "rate_limited"`) {
		t.Fatalf("an 11th wrong token: status %d %s, want 429 rate_limited", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodPost, "/login", "", strings.NewReader("token=wrong-again"), "application/x-www-form-urlencoded"); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("an 11th wrong token on the page: status %d %.200s", res.StatusCode, body)
	}
	if res, body := e.do(t, http.MethodGet, "/api/v1/me", e.a.Token, nil, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, "Alpha") {
		t.Errorf("a valid token after 11 failures: status %d %s, want it let in", res.StatusCode, body)
	}
	res, _ = e.do(t, http.MethodPost, "/login", "", strings.NewReader("token="+e.b.Token), "application/x-www-form-urlencoded")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/team" {
		t.Errorf("a valid token on the login page after 11 failures: status %d to %q, want a login", res.StatusCode, res.Header.Get("Location"))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
