package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
)

// After the close, a team's page says once that uploads are closed (with
// when, and the submission the final plays), and free text ends with one
// full stop whatever its author typed.
func TestTheTeamPageAfterTheCloseSaysItOnce(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	passedUpload(t, e, e.a.ID, "./examples/random")
	if _, err := e.store.CloseUploads(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, body := e.do(t, http.MethodGet, "/team", e.a.Token, nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/team: %d", res.StatusCode)
	}
	if n := strings.Count(body, "Uploads closed at") + strings.Count(body, "Uploads are closed"); n != 1 || !strings.Contains(body, "The final plays your submission") {
		t.Errorf("the team page says %d times that uploads closed:\n%s", n, body)
	}
	for in, want := range map[string]string{
		"Its README came by mail.":  "Its README came by mail.",
		"Its README came by mail":   "Its README came by mail.",
		"Is it late?":               "Is it late?",
		"late fix  ":                "late fix.",
		"":                          "",
		"the build failed: exit 1.": "the build failed: exit 1.",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// A team with no rated game is not ranked among the rated (its 1500 ± 350
// says nothing): the home page lists it apart, "not yet rated".
func TestUnratedTeamsAreListedApart(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	passedUpload(t, e, e.a.ID, "./examples/random")
	passedUpload(t, e, e.b.ID, "./examples/greedy")
	table, err := e.store.Ladder(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 2 || table[0].Rank != 0 || table[1].Rank != 0 || table[0].Name != "Alpha" {
		t.Fatalf("the ladder of two unrated teams: %+v", table)
	}
	res, body := e.do(t, http.MethodGet, "/", "", nil, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/: %d", res.StatusCode)
	}
	if !strings.Contains(body, `<p id="unrated"><strong>Not yet rated</strong>`) || !strings.Contains(body, "Alpha, Beta.") || strings.Contains(body, "1500 ± 350") ||
		strings.Contains(body, `id="ladder"`) {
		t.Errorf("the home page does not list the unrated apart:\n%s", body)
	}
}

// A game says how long it went in turns, setup included, beside its play
// plies: a game lost in its setup shows its turns, not "0 plies".
func TestAGameSaysItsTurns(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	sub := passedUpload(t, e, e.a.ID, "./examples/random")
	g := playGame(t, e, event.Side{Team: e.a.ID, Submission: sub.ID}, event.ValidationGame)
	if g.Turns <= g.Plies || g.Turns == 0 {
		t.Fatalf("the game recorded %d turns and %d plies", g.Turns, g.Plies)
	}
	res, body := e.do(t, http.MethodGet, fmt.Sprintf("/games/%d", g.ID), e.a.Token, nil, "")
	if want := fmt.Sprintf("after %d turns (%d play plies)", g.Turns, g.Plies); res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("the game page does not say %q: %d", want, res.StatusCode)
	}
}

// Places decided by a random draw are marked so on the final's standings,
// as arena standings says it.
func TestPlacesDrawnByLotAreMarked(t *testing.T) {
	rows := []tournament.Row{
		{Rank: 1, Name: "a", Points: 6, DecidedBy: tournament.SonnebornBerger},
		{Rank: 2, Name: "b", Points: 6, DecidedBy: tournament.RandomDraw, ByLot: true},
		{Rank: 3, Name: "c", Points: 6, DecidedBy: tournament.RandomDraw, ByLot: true},
		{Rank: 4, Name: "d", Points: 0},
	}
	var board event.Board
	for _, r := range rows {
		board.Standings = append(board.Standings, event.BoardRow{Row: r, Team: r.Name})
	}
	board.Games = map[string]int{"done": 6, "total": 6}
	var buf bytes.Buffer
	if err := pages["home"].ExecuteTemplate(&buf, "board", boardData{Board: &board}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "(drawn)</span>"); n != 2 || !strings.Contains(page, `id="by-lot"`) {
		t.Errorf("%d places marked drawn, want 2:\n%s", n, page)
	}
}

// At the final's start, before its first games are paired, the organizer's
// page says so, not "0 of 0 games played, 0 left: unknown"; then how far it
// is and how long the rest takes.
func TestTheFinalsProgressBeforeItsFirstGames(t *testing.T) {
	t.Parallel()
	d := adminData{Run: event.FinalRun{Started: time.Now()}, Final: boardData{Board: &event.Board{Games: map[string]int{}}},
		Estimate: event.Estimate{MeanGame: time.Minute, AtOnce: 2}}
	var buf bytes.Buffer
	if err := pages["admin"].ExecuteTemplate(&buf, "final-progress", d); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); !strings.Contains(page, "first games are being paired") || strings.Contains(page, "0 of 0") {
		t.Errorf("at the start: %s", page)
	}
	d.Final.Board.Games = map[string]int{"total": 60, "done": 20}
	buf.Reset()
	if err := pages["admin"].ExecuteTemplate(&buf, "final-progress", d); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); !strings.Contains(page, "20 of 60 games played, 40 left: about 20 min at 2 at once") {
		t.Errorf("under way: %s", page)
	}
}
