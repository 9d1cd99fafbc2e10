package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/event"
)

// The organizer's teams table holds any number of teams: a hundred a page,
// by name, a pager to the rest, and a search by part of a name (its
// wildcards taken as letters); the final's outlook counts them and folds
// its lists.
func TestTheOrganizersTeamsTableIsPaged(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "")
	ctx := context.Background()
	for i := range 228 {
		if _, err := e.store.AddTeam(ctx, fmt.Sprintf("Team %03d", i), "", ""); err != nil {
			t.Fatal(err)
		}
	}
	pure, err := e.store.AddTeam(ctx, "100% pure_", "", "")
	if err != nil {
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
	// The final's outlook at this size: the 231 teams that will not play
	// are counted, their list folded.
	res, body := e.do(t, http.MethodGet, "/admin", e.admin, nil, "")
	missing := regexp.MustCompile(`(?s)<div class="problem" id="missing">.*?</div>`).FindString(body)
	if res.StatusCode != http.StatusOK || !strings.Contains(missing, "231 teams will not play") || !strings.Contains(missing, `<details class="fold"><summary>`) ||
		strings.Count(missing, "<li>") != 231 {
		t.Errorf("who will not play, of 231 teams: %s", missing)
	}
	// The organizer's games list offers every team to pick, the one asked
	// for picked, under its name of now.
	options := func(team int64) (all []string, picked string) {
		t.Helper()
		res, body := e.do(t, http.MethodGet, fmt.Sprintf("/games?team=%d", team), e.admin, nil, "")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("the games of team %d: %d", team, res.StatusCode)
		}
		for _, m := range regexp.MustCompile(`<option value="\d+"( selected)?>([^<]*)</option>`).FindAllStringSubmatch(body, -1) {
			all = append(all, m[2])
			if m[1] != "" {
				picked += m[2]
			}
		}
		return all, picked
	}
	if all, picked := options(pure.ID); len(all) != 232 || all[0] != "every team" || picked != "100% pure_" {
		t.Errorf("the organizer's games of 100%% pure_: %d teams offered, from %q; picked %q", len(all), all[0], picked)
	}
	if _, err := e.store.Rename(ctx, pure.ID, "<Pure & Simple>"); err != nil {
		t.Fatal(err)
	}
	if all, picked := options(e.a.ID); len(all) != 232 || picked != "Alpha" || !slices.Contains(all, "&lt;Pure &amp; Simple&gt;") {
		t.Errorf("after a rename, the games of Alpha: %d teams offered, picked %q", len(all), picked)
	}
	for path, want := range map[string]int{"/admin?teams=0": http.StatusBadRequest, "/admin?teams=x": http.StatusBadRequest, "/admin?teams=4": http.StatusNotFound,
		"/admin?find=" + strings.Repeat("a", 101): http.StatusBadRequest} {
		if res, _ := e.do(t, http.MethodGet, path, e.admin, nil, ""); res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
}

// A team's games list, drawn once and kept, is drawn again as soon as its
// games or a team's name change: a new game shows, a rival's new name too;
// the API's list, kept too, follows its games.
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
	g, err := e.store.AddGame(ctx, event.ScrimmageGame, dir, event.Side{Team: e.b.ID}, event.Side{Team: e.a.ID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if body := list(); !strings.Contains(body, "Games 1 to 3 of 3") || !strings.Contains(body, fmt.Sprintf(`<a href="/games/%d">`, g.ID)) {
		t.Errorf("after a third game: %s", body)
	}
	// The API's list, kept the same way, follows too.
	api := func() (ids []int64, total int) {
		t.Helper()
		res, body := e.do(t, http.MethodGet, "/api/v1/games", e.a.Token, nil, "")
		var out struct {
			Games []event.Game
			Total int
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil {
			t.Fatalf("/api/v1/games: %d %s", res.StatusCode, body)
		}
		for _, g := range out.Games {
			ids = append(ids, g.ID)
		}
		return ids, out.Total
	}
	api()
	if ids, total := api(); total != 3 || len(ids) != 3 || ids[0] != g.ID {
		t.Fatalf("the API's list of 3 games: %v of %d", ids, total)
	}
	dir = filepath.Join(e.store.Dir, "seeded", "fourth")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(e.store.Dir, "seeded", "0"))); err != nil {
		t.Fatal(err)
	}
	g4, err := e.store.AddGame(ctx, event.LadderGame, dir, event.Side{Team: e.a.ID}, event.Side{Team: e.b.ID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ids, total := api(); total != 4 || len(ids) != 4 || ids[0] != g4.ID {
		t.Errorf("the API's list after a fourth game: %v of %d", ids, total)
	}
}
