package runner

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/metrics/metricstest"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox/local"
)

// scrape reads the metrics h serves as Prometheus does.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	return metricstest.Scrape(t, srv.URL)
}

// sampled is metricstest.Sampled.
var sampled = metricstest.Sampled

// recordedGames are the games of the tournament in dir by outcome (a
// played game's winner, aborted for one unplayed), and the turns their
// transcripts hold.
func recordedGames(t *testing.T, dir string) (byOutcome map[string]int, turns int) {
	t.Helper()
	st, err := tournament.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	byOutcome = map[string]int{}
	for _, g := range st.Games {
		switch g.Status {
		case tournament.Done:
			byOutcome[g.Winner]++
		case tournament.Unplayed:
			byOutcome["aborted"]++
		default:
			t.Fatalf("game %d is %s after the run", g.ID, g.Status)
		}
		lines, err := transcript.ReadFile(filepath.Join(dir, g.Dir, transcript.FileName))
		if err != nil {
			t.Fatalf("game %d: %v", g.ID, err)
		}
		for _, l := range lines {
			if l.Type == transcript.TypeTurn {
				turns++
			}
		}
	}
	return byOutcome, turns
}

// checkRecorded checks a coordinator's scrape against the games of the
// tournament in dir: the games counted by outcome, and their turns.
func checkRecorded(t *testing.T, got map[string]*dto.MetricFamily, dir string) {
	t.Helper()
	byOutcome, turns := recordedGames(t, dir)
	if turns == 0 {
		t.Fatal("the games hold no turns: nothing to count")
	}
	total := 0
	for outcome, n := range byOutcome {
		total += n
		if v := sampled(got, "arena_games_recorded_total", "kind", "tournament", "outcome", outcome); v != float64(n) {
			t.Errorf("arena_games_recorded_total{outcome=%q} is %v, the tournament recorded %d", outcome, v, n)
		}
	}
	if v := sampled(got, "arena_games_recorded_total", "kind", "tournament"); v != float64(total) {
		t.Errorf("arena_games_recorded_total is %v, the tournament recorded %d games", v, total)
	}
	for _, h := range []string{"arena_turn_seconds", "arena_turn_host_wait_seconds"} {
		if v := sampled(got, h, "kind", "tournament"); v != float64(turns) {
			t.Errorf("%s counts %v turns, the transcripts hold %d", h, v, turns)
		}
	}
}

// A tournament played here, some of its games aborted by the host on
// every attempt: the games recorded are counted by outcome (the unplayed
// ones as aborted), the turn histograms count its transcripts' turns, the
// aborted attempts are counted, and the games by state are its database's.
func TestTheMetricsCountTheTournamentsGames(t *testing.T) {
	t.Parallel()
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "garbage")}
	bots[2].Name, bots[2].Program.Name = "broken-host", "broken-host"
	dir := t.TempDir()
	o := options(t, dir, bots, flaky{&local.Backend{Dir: t.TempDir()}, "broken-host"}, "local")
	o.MaxAttempts = 2
	m := NewMetrics(dir, nil, nil)
	o.Metrics = m
	before := scrape(t, m.Handler())
	if v := sampled(before, "arena_games_recorded_total"); v > 0 {
		t.Fatalf("%v games counted before the tournament", v)
	}
	if v := sampled(before, "arena_tournament_games"); v > 0 {
		t.Fatalf("%v games by state before the tournament began", v)
	}
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 2 || sum.Unplayed != 4 || len(sum.Warnings) > 0 {
		t.Fatalf("%+v", sum)
	}
	got := scrape(t, m.Handler())
	checkRecorded(t, got, dir)
	if v := sampled(got, "arena_games_recorded_total", "outcome", "aborted"); v != 4 {
		t.Errorf("%v unplayed games counted as aborted, want 4", v)
	}
	if v := sampled(got, "arena_tournament_attempts_aborted_total"); v != 8 {
		t.Errorf("arena_tournament_attempts_aborted_total is %v: 4 games aborted twice each", v)
	}
	for state, want := range map[string]float64{"done": 2, "unplayed": 4, "pending": 0, "playing": 0} {
		if v := sampled(got, "arena_tournament_games", "state", state); v != want {
			t.Errorf("arena_tournament_games{state=%q} is %v, want %v", state, v, want)
		}
	}
	for _, f := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if sampled(got, f) <= 0 {
			t.Errorf("%s is missing or zero", f)
		}
	}
	if v := sampled(got, "arena_worker_queue_games"); v != -1 {
		t.Errorf("a tournament played here exposes a worker queue: %v", v)
	}
}

// A tournament spread over a worker: the coordinator counts the games it
// records and their turns as one played here, with its queue's figures and
// its enrolled worker; the worker counts the games it played by result,
// their turns (the transcripts the coordinator kept), and each result
// handed in, and holds none once the tournament is over.
func TestTheMetricsCountTheGamesWorkersPlay(t *testing.T) {
	bots := []*submission.Bot{fixtureBot(t, "legal"), fixtureBot(t, "shuffle"), fixtureBot(t, "slow-5")}
	c := distribtest.Start(t, "metrics-test", 2*time.Second, "w1")
	coordinator := c.Coordinator(t)
	// The tournament's directory holds its workers' keys, as arena enroll
	// keeps them.
	dir := filepath.Dir(c.Workers)
	ro := options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	ro.Config.Rules = map[string]string{"maxPlies": "20"}
	remoteOn(&ro, c, coordinator)
	cm := NewMetrics(dir, ro.Remote, nil)
	ro.Metrics = cm
	done := runInBackground(ro)

	wm := metrics.NewWorker(1)
	tw, q, _ := joined(t, c, "w1")
	tw.Metrics = wm
	w := &distrib.Worker{Queue: q, Slots: 1, Play: tw.Play, Metrics: wm, Machine: json.RawMessage(`{"host":"w1","cpus":1,"sandbox":"local"}`)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	var r ran
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the tournament did not end within 3 minutes")
	}
	cancel()
	wg.Wait()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.Done != 6 || r.sum.Unplayed != 0 {
		t.Fatalf("%+v", r.sum)
	}

	got := scrape(t, cm.Handler())
	checkRecorded(t, got, dir)
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"arena_tournament_games", []string{"state", "done"}, 6},
		{"arena_worker_handouts_total", nil, 6},
		{"arena_worker_results_total", []string{"verdict", "taken"}, 6},
		{"arena_worker_queue_games", nil, 0},
		{"arena_workers", []string{"state", "admitted"}, 1},
		{"arena_tournament_attempts_aborted_total", nil, 0},
	} {
		if v := sampled(got, c.family, c.labels...); v != c.want {
			t.Errorf("the coordinator's %s%v is %v, want %v", c.family, c.labels, v, c.want)
		}
	}

	played := scrape(t, wm.Handler())
	byOutcome, turns := recordedGames(t, dir)
	for result, n := range byOutcome {
		if v := sampled(played, "arena_worker_games_played_total", "result", result); v != float64(n) {
			t.Errorf("the worker counts %v games won by %s; the tournament recorded %d", v, result, n)
		}
	}
	for _, h := range []string{"arena_turn_seconds", "arena_turn_host_wait_seconds"} {
		if v := sampled(played, h, "kind", "worker"); v != float64(turns) {
			t.Errorf("the worker's %s counts %v turns, the transcripts it handed in hold %d", h, v, turns)
		}
	}
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"arena_worker_games_played_total", nil, 6},
		{"arena_worker_results_sent_total", []string{"outcome", metrics.HandedIn}, 6},
		{"arena_worker_results_sent_total", nil, 6},
		{"arena_worker_games_playing", nil, 0},
		{"arena_worker_slots", nil, 1},
		{"arena_worker_host_faults_total", nil, 0},
	} {
		if v := sampled(played, c.family, c.labels...); v != c.want {
			t.Errorf("the worker's %s%v is %v, want %v", c.family, c.labels, v, c.want)
		}
	}
	if v := sampled(played, "arena_worker_seconds_since_last_game"); v < 0 {
		t.Errorf("arena_worker_seconds_since_last_game is %v", v)
	}
}
