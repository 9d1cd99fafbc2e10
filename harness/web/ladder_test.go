package web

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/ladder"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
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
	t.Parallel()
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
	p := &services.Player{Store: e.store, Settings: resolved, Backend: backend, Builder: &build.Builder{Backend: backend,
		Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}, Intake: submission.DefaultLimits(),
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

// TestAPairsNumberHeldByAnotherTournamentIsPlayedAnew: the directory of
// the ladder's first pair already holds a tournament of other bots (what a
// backup restored leaves: its files were copied after its database). The
// database is the truth: the pair is played in a directory of its own, the
// one found kept aside (never deleted), and its games are the pair's.
func TestAPairsNumberHeldByAnotherTournamentIsPlayedAnew(t *testing.T) {
	t.Parallel()
	e := newTestEvent(t, "game = \"codeclash\"\n[rules]\nmaxPlies = \"20\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	passedUpload(t, e, e.a.ID, "./examples/greedy")
	passedUpload(t, e, e.b.ID, "./examples/random")
	stale := filepath.Join(e.dir, event.LadderDir, "1")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := tournament.OpenStore(stale, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Init(ctx, tournament.Config{Game: "codeclash", GamesPerPair: 2, Seed: 99,
		Bots: []tournament.BotEntry{{Name: "Someone"}, {Name: "Else"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	_, key, _ := ed25519.GenerateKey(nil)
	var logs strings.Builder
	var logsMu sync.Mutex
	p := &services.Player{Store: e.store, Settings: resolved, Backend: backend, Builder: &build.Builder{Backend: backend,
		Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}, Intake: submission.DefaultLimits(),
		ArenaVersion: "test", Signer: key, Log: slog.New(slog.NewTextHandler(lockedWriter{&logsMu, &logs}, nil)),
		Ladder: true, Open: e.server.Config.Open, Seed: 7, Slots: 1}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var games []event.Game
	for deadline := time.Now().Add(2 * time.Minute); len(games) < 2; time.Sleep(100 * time.Millisecond) {
		if games, err = e.store.GamesOf(ctx, e.a.ID, 10); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			logsMu.Lock()
			t.Fatalf("the first pair was not played in 2 minutes: %+v\n%s", games, logs.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, g := range games[:2] {
		if !strings.HasPrefix(g.Dir, filepath.Join(event.LadderDir, "1")+string(filepath.Separator)) ||
			min(g.White.Team, g.Black.Team) != min(e.a.ID, e.b.ID) || max(g.White.Team, g.Black.Team) != max(e.a.ID, e.b.ID) {
			t.Errorf("a game of the first pair: %+v", g)
		}
	}
	aside, err := filepath.Glob(filepath.Join(e.dir, event.AsideDir, "ladder-1-*", tournament.DBFile))
	if err != nil || len(aside) != 1 {
		t.Fatalf("the directory found is not kept aside: %v %v", aside, err)
	}
	kept, err := tournament.OpenStore(filepath.Dir(aside[0]), true)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if c, err := kept.Config(context.Background()); err != nil || c == nil || c.Seed != 99 {
		t.Errorf("what is kept aside is not what was found: %+v %v", c, err)
	}
	logsMu.Lock()
	defer logsMu.Unlock()
	if !strings.Contains(logs.String(), "kept aside") {
		t.Errorf("the server's log does not say it kept a directory aside:\n%s", logs.String())
	}
}

// lockedWriter is a writer goroutines share.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
