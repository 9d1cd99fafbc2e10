package web

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
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

// TestTheLadderRatesItsGames: three teams (the greedy example, the random
// one, and a bot that plays an illegal move every turn) on the local
// sandbox; the player keeps ladder pairs going: every pair meets, each pair
// is one game a side, the faulting bot ends last below its start, and the
// home page and arena event ladder's data agree.
func TestTheLadderRatesItsGames(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n")
	c, err := e.store.AddTeam(context.Background(), "Gamma", "", "")
	if err != nil {
		t.Fatal(err)
	}
	passedUpload(t, e, e.a.ID, "./examples/greedy")
	passedUpload(t, e, e.b.ID, "./examples/random")
	data, err := os.ReadFile(gobuild.MustStatic(t, "./internal/testbots/ccfixture"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bad, err := e.store.AddSubmission(ctx, e.server.Config, c.ID, "illegal", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetState(ctx, bad.ID, event.Passed, ""); err != nil {
		t.Fatal(err)
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
		Ladder: true, Open: e.server.Config.Open, Seed: 7}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	const pairs = 6
	var games []event.Game
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		games = nil
		for _, team := range []int64{e.a.ID, e.b.ID, c.ID} {
			g, err := e.store.GamesOf(context.Background(), team, 100)
			if err != nil {
				t.Fatal(err)
			}
			games = append(games, g...)
		}
		if len(games) >= 2*2*pairs { // each game is listed by both of its teams
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d ladder games after 4 minutes", len(games)/2)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	met := map[[2]int64]int{}
	asWhite := map[[2]int64]int{}
	for _, g := range games {
		if g.Kind != event.LadderGame || g.White.Team == 0 || g.Black.Team == 0 {
			t.Fatalf("a game that is not a ladder game between two teams: %+v", g)
		}
		k := [2]int64{min(g.White.Team, g.Black.Team), max(g.White.Team, g.Black.Team)}
		met[k]++
		if g.White.Team == k[0] {
			asWhite[k]++
		}
	}
	if len(met) != 3 {
		t.Errorf("pairs that met: %v, want all 3", met)
	}
	for k, n := range met {
		if d := 2*asWhite[k] - n; d < -4 || d > 4 { // counted twice: within one game a side per pair
			t.Errorf("pair %v: %d of %d listed games with the first as white", k, asWhite[k], n)
		}
	}
	table, err := e.store.Ladder(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 3 || table[2].Name != "Gamma" || table[2].Rating.Rating >= 1500 {
		t.Errorf("the faulting bot is not last below its start: %+v", table)
	}
	for _, s := range table {
		if s.Games == 0 || s.Rating.Deviation >= 350 {
			t.Errorf("%s: %d games, deviation %.1f", s.Name, s.Games, s.Rating.Deviation)
		}
	}
	// The home page shows the same table.
	e.server.homeAt = time.Time{}
	_, page := e.do(t, http.MethodGet, "/", "", nil, "")
	if !strings.Contains(page, `id="ladder"`) || strings.Index(page, "Gamma") < strings.Index(page, "Alpha") {
		t.Errorf("the home page's ladder does not rank as the store does")
	}
}
