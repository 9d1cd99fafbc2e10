package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/rules/codeclash"
)

// TestNoRouteCarriesARivalsOutput: teams A (white) and B (black) play a
// ladder game with the bot that writes a secret of its side to stderr every
// turn; B disputes it and the organizer runs a turn of each side again.
// Then every GET route the server answers, each id in it the game's or a
// submission's, asked by B and by a visitor, carries none of A's secret
// (B's own to B alone), and the organizer's carry A's. A route added later
// is asked the same way. B reads the rerun of its own turn whole and of A's
// turn the verdicts alone, on its game page and over the API; the
// organizer reads both whole.
func TestNoRouteCarriesARivalsOutput(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subA := passedUpload(t, e, e.a.ID, "./internal/testbots/chatty")
	subB := passedUpload(t, e, e.b.ID, "./internal/testbots/chatty")
	playsFinals(t, ctx, e, nil)
	game := playGameOf(t, e, match.Config{Game: codeclash.Game{}, Rules: map[string]string{"maxPlies": "4"}, Seed: 5,
		White: loadBot(t, "./internal/testbots/chatty"), Black: loadBot(t, "./internal/testbots/chatty")},
		event.Side{Team: e.a.ID, Submission: subA.ID}, event.Side{Team: e.b.ID, Submission: subB.ID}, event.LadderGame)
	res, out := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/games/%d/disputes", game.ID), e.b.Token, strings.NewReader(`{"message": "both turns, please"}`), "application/json")
	var filed struct{ Dispute event.Dispute }
	if res.StatusCode != http.StatusCreated || json.Unmarshal([]byte(out), &filed) != nil {
		t.Fatalf("B files a dispute: %d %s", res.StatusCode, out)
	}
	for _, ply := range []int{1, 2} {
		if res, out := e.do(t, http.MethodPost, fmt.Sprintf("/api/v1/admin/disputes/%d/rerun", filed.Dispute.ID), e.admin, strings.NewReader(fmt.Sprintf(`{"ply": %d}`, ply)), "application/json"); res.StatusCode != http.StatusOK {
			t.Fatalf("rerun turn %d: %d %s", ply, res.StatusCode, out)
		}
	}

	const secretA, secretB = "secret of white", "secret of black"
	for _, where := range []string{"/api/v1/disputes", fmt.Sprintf("/games/%d", game.ID)} {
		res, out := e.do(t, http.MethodGet, where, e.b.Token, nil, "")
		if res.StatusCode != http.StatusOK || !strings.Contains(out, secretB) || !strings.Contains(out, "VERDICT") {
			t.Errorf("B's %s: %d; want its own turn's rerun whole (%q) and the rival's verdicts:\n%s", where, res.StatusCode, secretB, out)
		}
		res, out = e.do(t, http.MethodGet, where, e.admin, nil, "")
		if res.StatusCode != http.StatusOK || !strings.Contains(out, secretA) || !strings.Contains(out, secretB) {
			t.Errorf("the organizer's %s: %d; want both sides' stderr", where, res.StatusCode)
		}
	}
	ids := []int64{game.ID, subA.ID, subB.ID}
	fill := strings.NewReplacer("{$}", "", "{file}", "app.js", "{starter}", "python", "{path...}", "0/000", "{name}", "w1")
	asked, seenA := 0, false
	for _, rt := range e.server.Routes() {
		pattern, ok := strings.CutPrefix(rt.Pattern, http.MethodGet+" ")
		if !ok {
			continue
		}
		var paths []string
		for _, id := range ids {
			p := fill.Replace(strings.ReplaceAll(pattern, "{id}", fmt.Sprint(id)))
			if len(paths) == 0 || paths[len(paths)-1] != p {
				paths = append(paths, p)
			}
		}
		for _, path := range paths {
			for _, who := range []struct{ name, token, mine string }{{"B", e.b.Token, secretB}, {"a visitor", "", ""}} {
				res, body := e.do(t, http.MethodGet, path, who.token, nil, "")
				asked++
				if strings.Contains(body, secretA) {
					t.Errorf("%s reads A's stderr at %s (%d)", who.name, path, res.StatusCode)
				}
				if who.mine == "" && strings.Contains(body, secretB) {
					t.Errorf("%s reads B's stderr at %s (%d)", who.name, path, res.StatusCode)
				}
			}
			if _, body := e.do(t, http.MethodGet, path, e.admin, nil, ""); strings.Contains(body, secretA) {
				seenA = true
			}
		}
	}
	if asked < 100 || !seenA {
		t.Errorf("asked %d times; the organizer read A's stderr somewhere: %v (the test proves nothing without both)", asked, seenA)
	}
}
