package web

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox/local"
)

// passedUpload stores the static build of an example bot as team's upload
// and marks it passed (as its validation would).
func passedUpload(t *testing.T, e *testEvent, team int64, pkg string) event.Submission {
	t.Helper()
	data, err := os.ReadFile(gobuild.MustStatic(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub, err := e.store.AddSubmission(ctx, e.server.Config, team, "bot", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestAScrimmageIsAPairOfGamesThroughTheTournamentRunner: team A challenges
// team B over the API; the player plays the two active submissions as a
// two-bot tournament, sides swapped, and records both games with both
// submissions and their hashes; the quota and a rival without a passed
// submission are refused with their reasons.
func TestAScrimmageIsAPairOfGamesThroughTheTournamentRunner(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[quotas]\nscrimmages_per_hour = 1\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// B has nothing that passed yet.
	res, out := e.do(t, http.MethodPost, "/api/v1/scrimmages", e.a.Token, strings.NewReader(`{"rival": 2}`), "application/json")
	if res.StatusCode != http.StatusConflict || !strings.Contains(out, "refused") {
		t.Errorf("a challenge without a passed submission: %d %s", res.StatusCode, out)
	}
	subA := passedUpload(t, e, e.a.ID, "./examples/random")
	subB := passedUpload(t, e, e.b.ID, "./examples/greedy")
	if res, out := e.do(t, http.MethodPost, "/api/v1/scrimmages", e.a.Token, strings.NewReader(`{"rival": 1}`), "application/json"); res.StatusCode != http.StatusConflict {
		t.Errorf("a team challenging itself: %d %s", res.StatusCode, out)
	}
	res, out = e.do(t, http.MethodPost, "/api/v1/scrimmages", e.a.Token, strings.NewReader(`{"rival": 2}`), "application/json")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("the challenge: %d %s", res.StatusCode, out)
	}
	res, out = e.do(t, http.MethodPost, "/api/v1/scrimmages", e.a.Token, strings.NewReader(`{"rival": 0}`), "application/json")
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(out, "scrimmages in the last hour") {
		t.Errorf("a second challenge in the hour: %d %s", res.StatusCode, out)
	}

	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan int64, 4)
	p := &services.Player{Store: e.store, Settings: resolved, Backend: backend, Builder: &build.Builder{Backend: backend,
		Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}, Intake: submission.DefaultLimits(),
		ArenaVersion: "test", Signer: key, Changed: func(team int64) { changed <- team },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var sc event.Scrimmage
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if sc, err = e.store.ScrimmageByID(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		if sc.State == event.ScrimmageDone || sc.State == event.ScrimmageError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scrimmage is still %s", sc.State)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sc.State != event.ScrimmageDone || sc.Message != "" || sc.Submission != subA.ID || sc.RivalSubmission != subB.ID {
		t.Fatalf("the scrimmage: %+v", sc)
	}
	games, err := e.store.GamesOf(context.Background(), e.a.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(games) != 2 {
		t.Fatalf("%d games recorded, want 2", len(games))
	}
	asWhite := 0
	for _, g := range games {
		me, rival := g.White, g.Black
		if g.Black.Team == e.a.ID {
			me, rival = g.Black, g.White
		} else {
			asWhite++
		}
		if g.Kind != event.ScrimmageGame || me.Submission != subA.ID || rival.Submission != subB.ID || rival.Team != e.b.ID ||
			me.SHA256 != subA.SHA256 || rival.SHA256 != subB.SHA256 {
			t.Errorf("game %d does not name both submissions and their hashes: %+v", g.ID, g)
		}
	}
	if asWhite != 1 {
		t.Errorf("A played white in %d of the 2 games, want 1", asWhite)
	}
	// B sees the game too, and its page was told.
	if res, _ := e.do(t, http.MethodGet, "/api/v1/games/"+itoa(games[0].ID), e.b.Token, nil, ""); res.StatusCode != http.StatusOK {
		t.Errorf("the rival cannot open the scrimmage's game: %d", res.StatusCode)
	}
	seen := map[int64]bool{}
	for len(changed) > 0 {
		seen[<-changed] = true
	}
	if !seen[e.a.ID] || !seen[e.b.ID] {
		t.Errorf("the teams told of new games: %v", seen)
	}
	// Recording a resumed scrimmage's games again adds none.
	if _, err := e.store.AddGame(context.Background(), event.ScrimmageGame, e.store.MatchDir(games[0]), games[0].White, games[0].Black, 0); err != nil {
		t.Fatal(err)
	}
	if again, _ := e.store.GamesOf(context.Background(), e.a.ID, 10); len(again) != 2 {
		t.Errorf("%d games after recording one again", len(again))
	}
	if _, err := e.store.Active(context.Background(), 99); !errors.Is(err, event.ErrNotFound) {
		t.Errorf("the active submission of no team: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
