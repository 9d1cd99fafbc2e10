package web

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/metrics/metricstest"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox/local"
)

// scrape and sampled read metrics as Prometheus does (metricstest).
var (
	scrape  = func(t *testing.T, url string) map[string]*dto.MetricFamily { return metricstest.Scrape(t, url) }
	sampled = metricstest.Sampled
)

// The metrics, scraped by Prometheus' own parser while the ladder plays:
// the games counted are the ladder games the database holds, the turn
// histograms count their turns, the requests count by route and status,
// and the queue, database and process gauges are there.
func TestTheMetricsFollowTheLadder(t *testing.T) {
	e := newTestEvent(t, "game = \"codeclash\"\n[rules]\nmaxPlies = \"20\"\n")
	m := metrics.NewEvent(e.store.Gauges, nil)
	e.store.Metrics, e.server.Metrics = m, m
	site := httptest.NewServer(e.server.Handler())
	defer site.Close()
	mon := httptest.NewServer(m.Handler())
	defer mon.Close()
	ctx := context.Background()
	passedUpload(t, e, e.a.ID, "./examples/greedy")
	passedUpload(t, e, e.b.ID, "./examples/random")
	before := scrape(t, mon.URL)
	if n := sampled(before, "arena_games_recorded_total", "kind", "ladder"); n > 0 {
		t.Fatalf("%v ladder games counted before the ladder", n)
	}
	if n := sampled(before, "arena_submissions", "state", "passed"); n != 2 {
		t.Errorf("arena_submissions{state=passed} is %v, want 2", n)
	}
	lctx, stop := context.WithCancel(ctx)
	p := ladderPlayer(t, e)
	done := make(chan error, 1)
	go func() { done <- p.Run(lctx) }()
	ladderGames := func() []event.Game {
		games, err := e.store.GamesOf(ctx, e.a.ID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return slices.DeleteFunc(games, func(g event.Game) bool { return g.Kind != event.LadderGame })
	}
	// The counter moves as the games are played.
	var moved []float64
	// Two deterministic bots meet in both colours, two pairs: 4 games.
	for deadline := time.Now().Add(2 * time.Minute); len(ladderGames()) < 4; time.Sleep(200 * time.Millisecond) {
		n := sampled(scrape(t, mon.URL), "arena_games_recorded_total", "kind", "ladder")
		if len(moved) == 0 || moved[len(moved)-1] != n {
			moved = append(moved, n)
		}
		if time.Now().After(deadline) {
			t.Fatal("fewer than 4 ladder games in 2 minutes")
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(moved) < 2 {
		t.Errorf("the ladder games' counter read %v while they were played: it did not move", moved)
	}
	for _, path := range []string{"/", "/", "/nope"} {
		res, err := http.Get(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	// A request is counted once its handler returned, which may be just
	// after its client read the answer, and its time and its count are two
	// updates: the scrape waits for both of the two requests.
	after := scrape(t, mon.URL)
	counted := func() bool {
		return sampled(after, "arena_http_request_duration_seconds", "route", "GET /{$}") >= 2 &&
			sampled(after, "arena_http_requests_total", "route", "GET /{$}", "code", "200") >= 2
	}
	for deadline := time.Now().Add(10 * time.Second); !counted() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		after = scrape(t, mon.URL)
	}
	games := ladderGames()
	turns := 0
	for _, g := range games {
		turns += g.Turns
	}
	if n := sampled(after, "arena_games_recorded_total", "kind", "ladder"); n != float64(len(games)) {
		t.Errorf("arena_games_recorded_total{kind=ladder} is %v, the database holds %d ladder games", n, len(games))
	}
	if n := sampled(after, "arena_turn_seconds", "kind", "ladder"); n != float64(turns) {
		t.Errorf("arena_turn_seconds{kind=ladder} counts %v turns, the ladder games in the database %d", n, turns)
	}
	if n := sampled(after, "arena_turn_host_wait_seconds", "kind", "ladder"); n != float64(turns) {
		t.Errorf("arena_turn_host_wait_seconds{kind=ladder} counts %v turns, want %d", n, turns)
	}
	if n := sampled(after, "arena_http_requests_total", "route", "GET /{$}", "code", "200"); n < 2 {
		t.Errorf("the home page's requests: %v, want 2 at least", n)
	}
	if n := sampled(after, "arena_http_request_duration_seconds", "route", "GET /{$}"); n < 2 {
		t.Errorf("the home page's timed requests: %v", n)
	}
	for _, f := range []string{"arena_db_bytes", "arena_db_write_seconds", "go_goroutines", "process_resident_memory_bytes"} {
		if sampled(after, f) <= 0 {
			t.Errorf("%s is missing or zero", f)
		}
	}
	// No label a client chooses: a path nobody routes is not a route.
	for _, mf := range after {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "/nope" {
					t.Errorf("%s has a label a client chose: %s", mf.GetName(), l.GetValue())
				}
			}
		}
	}
}

// ladderPlayer is a player of e's ladder on the local sandbox, one pair at
// a time, logging its games as e's configuration says.
func ladderPlayer(t *testing.T, e *testEvent) *services.Player {
	t.Helper()
	resolved, err := e.server.Config.Settings().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	backend := &local.Backend{Dir: t.TempDir()}
	_, signer, _ := ed25519.GenerateKey(nil)
	return &services.Player{Store: e.store, Settings: resolved, Backend: backend, Builder: &build.Builder{Backend: backend,
		Langs: langs.Default(), Limits: resolved.Limits, Timeout: time.Minute}, Intake: submission.DefaultLimits(),
		ArenaVersion: "test", Signer: signer, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ladder: true, LogGames: e.server.Config.Log.Ladder, Open: e.server.Config.Open, Seed: 7, Slots: 1}
}
