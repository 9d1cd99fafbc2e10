package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
)

// The organizer's teams table holds any number of teams: a hundred a page,
// by name, a pager to the rest, and a search by part of a name (its
// wildcards taken as letters).
func TestTheOrganizersTeamsTableIsPaged(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	ctx := context.Background()
	for i := range 228 {
		if _, err := e.store.AddTeam(ctx, fmt.Sprintf("Team %03d", i), "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.AddTeam(ctx, "100% pure_", "", ""); err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`<a href="/games\?team=\d+">([^<]+)</a></td><td><code>`)
	table := func(path string) (names []string, page string) {
		t.Helper()
		res, body := e.do(t, http.MethodGet, path, e.admin, nil, "")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		section := regexp.MustCompile(`(?s)<section id="teams">.*?</section>`).FindString(body)
		for _, m := range rows.FindAllStringSubmatch(section, -1) {
			names = append(names, m[1])
		}
		return names, section
	}
	// 231 teams: Alpha, Beta, the 228 and the one with wildcards.
	names, page := table("/admin")
	if len(names) != 100 || names[0] != "100% pure_" || !strings.Contains(page, "Teams 1 to 100 of 231, by name.") || !strings.Contains(page, "page 1 of 3") {
		t.Errorf("the first page: %d teams from %q; %s", len(names), names[0], page)
	}
	names, page = table("/admin?teams=3")
	if len(names) != 31 || names[len(names)-1] != "Team 227" || !strings.Contains(page, "Teams 201 to 231 of 231") || !strings.Contains(page, `href="/admin?teams=2#teams" rel="prev"`) {
		t.Errorf("the last page: %d teams; %s", len(names), page)
	}
	names, _ = table("/admin?find=team+01")
	if len(names) != 10 || names[0] != "Team 010" {
		t.Errorf("teams named like team 01: %v", names)
	}
	// % and _ are letters to look for, not wildcards.
	if names, _ = table("/admin?find=%25"); len(names) != 1 || names[0] != "100% pure_" {
		t.Errorf("teams whose name holds %%: %v", names)
	}
	if names, page = table("/admin?find=nobody"); len(names) != 0 || !strings.Contains(page, "No team's name holds &ldquo;nobody&rdquo;.") {
		t.Errorf("a name no team has: %v; %s", names, page)
	}
	for path, want := range map[string]int{"/admin?teams=0": http.StatusBadRequest, "/admin?teams=x": http.StatusBadRequest, "/admin?teams=4": http.StatusNotFound,
		"/admin?find=" + strings.Repeat("a", 101): http.StatusBadRequest} {
		if res, _ := e.do(t, http.MethodGet, path, e.admin, nil, ""); res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
}

// A team's games list, drawn once and kept, is drawn again as soon as its
// games or a team's name change: a new game shows, a rival's new name too.
func TestAGamesListFollowsItsGamesAndNames(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	ctx := context.Background()
	seedGames(t, e.store, e.a, e.b, 2)
	list := func() string {
		t.Helper()
		res, body := e.do(t, http.MethodGet, "/games", e.a.Token, nil, "")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/games: %d", res.StatusCode)
		}
		return body
	}
	if body := list(); !strings.Contains(body, "Games 1 to 2 of 2") || !strings.Contains(body, "<td>Beta</td>") {
		t.Fatalf("the list of two games: %s", body)
	}
	list() // drawn from the cache
	if _, err := e.store.Rename(ctx, e.b.ID, "Beta Renamed"); err != nil {
		t.Fatal(err)
	}
	if body := list(); !strings.Contains(body, "<td>Beta Renamed</td>") || strings.Contains(body, "<td>Beta</td>") {
		t.Errorf("after the rival's rename: %s", body)
	}
	dir := filepath.Join(e.store.Dir, "seeded", "extra")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(e.store.Dir, "seeded", "0"))); err != nil {
		t.Fatal(err)
	}
	g, err := e.store.AddGame(ctx, event.ScrimmageGame, dir, event.Side{Team: e.b.ID}, event.Side{Team: e.a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if body := list(); !strings.Contains(body, "Games 1 to 3 of 3") || !strings.Contains(body, fmt.Sprintf(`<a href="/games/%d">`, g.ID)) {
		t.Errorf("after a third game: %s", body)
	}
}
