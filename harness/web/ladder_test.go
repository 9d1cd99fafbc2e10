package web

import (
	"github.com/arenabots/arena/harness/ladder"

	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox/local"
)

// TestTheLadderRatesItsGames: eight teams of known strength on the local
// sandbox (the greedy example three times, the random one three times, a
// bot that plays an illegal move every turn twice); the player keeps ladder
// pairs going, four at once, until every pair of teams has met: each pair
// met one game a side, greedy ends above random above faulting, the copies
// of a bot end within their deviations of each other, and the team page,
// the home page and arena event ladder's data agree.
func TestTheLadderRatesItsGames(t *testing.T) {
	// Two greedy bots play each other to the ply limit: a shorter limit
	// makes those games draws sooner and changes no other result. Half the
	// opponents are drawn from every team ([ladder] far, 0.1 by default):
	// the pairs far apart in rating meet within a few hundred games, not
	// after a thousand (the default's mixing is ladder's pure test's).
	e := newTestEvent(t, "game = \"codeclash\"\n[rules]\nmaxPlies = \"20\"\n[ladder]\nfar = 0.5\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faulting, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/ccfixture"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[int64]string{}
	upload := func(team int64, kind string) {
		switch kind {
		case "greedy", "random":
			passedUpload(t, e, team, "./examples/"+kind)
		default:
			sub, err := e.store.AddSubmission(ctx, e.server.Config, team, "illegal", strings.NewReader(string(faulting)))
			if err != nil {
				t.Fatal(err)
			}
			if err := e.store.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
				t.Fatal(err)
			}
		}
		kinds[team] = kind
	}
	upload(e.a.ID, "greedy")
	upload(e.b.ID, "random")
	for i, kind := range []string{"faulting", "greedy", "random", "faulting", "greedy", "random"} {
		team, err := e.store.AddTeam(ctx, []string{"Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta"}[i], "", "")
		if err != nil {
			t.Fatal(err)
		}
		upload(team.ID, kind)
	}

	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	_, key, _ := ed25519.GenerateKey(nil)
	p := &event.Player{Store: e.store, Settings: resolved, Backend: backend, Builder: &build.Builder{Backend: backend,
		Langs: build.Default(), Limits: resolved.Limits, Timeout: time.Minute}, Intake: submission.DefaultLimits(),
		ArenaVersion: "test", Signer: key, Changed: e.server.TeamChanged, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ladder: true, Open: e.server.Config.Open, Seed: 7, Slots: 4,
		Matchmaking: &ladder.Options{Near: ladder.DefaultOptions.Near, Far: e.server.Config.Ladder.Far}}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	const pairs = 8 * 7 / 2
	var games []event.Game
	met := map[[2]int64]int{}
	for deadline := time.Now().Add(6 * time.Minute); len(met) < pairs; time.Sleep(500 * time.Millisecond) {
		games, met = nil, map[[2]int64]int{}
		for team := range kinds {
			g, err := e.store.GamesOf(context.Background(), team, 1000)
			if err != nil {
				t.Fatal(err)
			}
			games = append(games, g...)
		}
		for _, g := range games {
			met[[2]int64{min(g.White.Team, g.Black.Team), max(g.White.Team, g.Black.Team)}]++
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 6 minutes and %d ladder games %d of the %d pairs have met: %v", len(games)/2, len(met), pairs, met)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	asWhite := map[[2]int64]int{}
	for _, g := range games {
		if g.Kind != event.LadderGame || g.White.Team == 0 || g.Black.Team == 0 {
			t.Fatalf("a game that is not a ladder game between two teams: %+v", g)
		}
		k := [2]int64{min(g.White.Team, g.Black.Team), max(g.White.Team, g.Black.Team)}
		if g.White.Team == k[0] {
			asWhite[k]++
		}
	}
	for k, n := range met {
		if d := 2*asWhite[k] - n; d < -2 || d > 2 { // each game listed twice: within one game a side
			t.Errorf("pair %v: %d of %d listed games with the first as white", k, asWhite[k], n)
		}
	}
	table, err := e.store.Ladder(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 8 {
		t.Fatalf("the ladder has %d rows, want 8: %+v", len(table), table)
	}
	strength := map[string]int{"greedy": 2, "random": 1, "faulting": 0}
	for i, s := range table {
		if s.Games == 0 || s.Rating.Deviation >= 350 {
			t.Errorf("%s: %d games, deviation %.1f", s.Name, s.Games, s.Rating.Deviation)
		}
		for _, o := range table[i+1:] {
			a, b := strength[kinds[s.Team]], strength[kinds[o.Team]]
			switch {
			case a < b:
				t.Errorf("%s (%s, %.0f) is ranked above %s (%s, %.0f)", s.Name, kinds[s.Team], s.Rating.Rating, o.Name, kinds[o.Team], o.Rating.Rating)
			case a == b && math.Abs(s.Rating.Rating-o.Rating.Rating) > s.Rating.Deviation+o.Rating.Deviation:
				t.Errorf("two copies of %s: %s %.0f±%.0f and %s %.0f±%.0f are not within their deviations", kinds[s.Team],
					s.Name, s.Rating.Rating, s.Rating.Deviation, o.Name, o.Rating.Rating, o.Rating.Deviation)
			}
		}
	}
	t.Logf("every pair met after %d ladder games", len(games)/2)
	if t.Failed() {
		t.Logf("the ladder: %+v", table)
	}
	// A team's page plots its rating after each of its pairs.
	history, err := e.store.RatingPlot(context.Background(), e.a.ID)
	if err != nil || len(history) == 0 || history[len(history)-1].Rating != table[rankOf(table, "Alpha")].Rating.Rating {
		t.Errorf("Alpha's rating history %+v (%v) does not end at its rating", history, err)
	}
	if _, page := e.do(t, http.MethodGet, "/team", e.a.Token, nil, ""); !strings.Contains(page, `<svg class="plot"`) ||
		strings.Count(newRatingPlot(history).Line, ",") != len(history) || !strings.Contains(page, newRatingPlot(history).Line) {
		t.Errorf("Alpha's page does not plot its %d rated pairs", len(history))
	}
	// The home page shows the same table.
	e.server.homeAt = time.Time{}
	_, page := e.do(t, http.MethodGet, "/", "", nil, "")
	if !strings.Contains(page, `id="ladder"`) || strings.Index(page, table[7].Name) < strings.Index(page, table[0].Name) {
		t.Errorf("the home page's ladder does not rank as the store does")
	}
}

// rankOf is the index of name's row in the ladder.
func rankOf(table []event.Standing, name string) int {
	for i, s := range table {
		if s.Name == name {
			return i
		}
	}
	return -1
}
