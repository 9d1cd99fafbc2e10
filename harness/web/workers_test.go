package web

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox/local"
)

var workersAt = regexp.MustCompile(`games go to workers at (\S+)`)

// TestTheLadderIsPlayedByWorkers: arena serve started with --listen and two
// arena worker processes joined (the local sandbox, so no engine is
// needed): every ladder game is played by one of the workers, each counted
// only once re-judged (it replays, signed by the key its worker was
// enrolled with), and rated in the event. A worker that joins first and
// plays its games with the sides swapped is suspended at its first result,
// shown so on the organizer's page, and the ladder goes on without it.
func TestTheLadderIsPlayedByWorkers(t *testing.T) {
	t.Parallel() // its own event, server processes and browser
	bots := []string{"./examples/greedy", "./examples/random", "./examples/greedy", "./examples/random"}
	e := writeEvent(t, "game = \"codeclash\"\n", func(st *event.Store, teams []event.NewTeam) {
		cfg, err := event.LoadConfig(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i, team := range teams {
			data, err := os.ReadFile(gobuild.MustStatic(t, bots[i]))
			if err != nil {
				t.Fatal(err)
			}
			sub, err := st.AddSubmission(ctx, cfg, team.ID, "bot", strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
				t.Fatal(err)
			}
		}
	}, "Alpha", "Beta", "Gamma", "Delta")
	arena := gobuild.MustStatic(t, "./cmd/arena")
	workers := []string{"w1", "w2"}
	creds := t.TempDir()
	for _, w := range append(workers, "liar") {
		if out, err := exec.Command(arena, "enroll", "--out", e.dir, "--creds", filepath.Join(creds, w+".creds"), w).CombinedOutput(); err != nil {
			t.Fatalf("enroll %s: %v\n%s", w, err, out)
		}
	}
	srv := startServe(t, e.dir, "--sandbox", "local", "--listen", "127.0.0.1:0", "--games", "4", "--metrics-listen", "127.0.0.1:0")
	var url string
	for deadline := time.Now().Add(time.Minute); url == ""; time.Sleep(50 * time.Millisecond) {
		if m := workersAt.FindStringSubmatch(srv.Logs()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not say where workers join:\n%s", srv.Logs())
		}
	}
	liar(t, url, filepath.Join(creds, "liar.creds"))
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(srv.Logs(), "worker liar suspended"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the lying worker was not suspended within 2 minutes:\n%s", srv.Logs())
		}
	}
	if code, body := callAPI(t, srv.URL, "GET", "/api/v1/admin/workers", e.admin, ""); code != 200 || !strings.Contains(body, "white differs") {
		t.Errorf("the organizer's list of workers: %d %s", code, body)
	}
	if _, page := callAPI(t, srv.URL, "GET", "/admin", e.admin, ""); !strings.Contains(page, "suspended</strong>") || !strings.Contains(page, "/admin/workers/liar/readmit") {
		t.Errorf("the organizer's page does not show the suspended worker")
	}
	for _, w := range workers {
		cmd := exec.Command(arena, "worker", "--creds", filepath.Join(creds, w+".creds"), "--join", url,
			"--sandbox", "local", "--bench-runs", "0")
		out, err := os.Create(filepath.Join(creds, w+".log"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-done
				t.Errorf("worker %s did not stop within a minute of SIGTERM", w)
			}
		})
	}

	// The played games, as the ladder pairs' tournaments recorded them.
	played := func() []tournament.Record {
		var recs []tournament.Record
		dirs, _ := filepath.Glob(filepath.Join(e.dir, event.LadderDir, "*"))
		for _, d := range dirs {
			st, err := tournament.Load(context.Background(), d)
			if err != nil {
				continue // not started yet
			}
			for _, r := range st.Games {
				if r.Status == tournament.Done {
					r.Dir = filepath.Join(d, r.Dir)
					recs = append(recs, r)
				}
			}
		}
		return recs
	}
	const want = 8
	var recs []tournament.Record
	for deadline := time.Now().Add(3 * time.Minute); len(recs) < want; time.Sleep(200 * time.Millisecond) {
		if recs = played(); time.Now().After(deadline) {
			t.Fatalf("%d ladder games played after 3 minutes, want %d\nserver:\n%s", len(recs), want, srv.Logs())
		}
	}
	// The queue's metrics: the games handed out and their results, the
	// suspended worker.
	m := metricsAt.FindStringSubmatch(srv.Logs())
	if m == nil {
		t.Fatalf("the server did not say where its metrics are:\n%s", srv.Logs())
	}
	// A result is tallied once it is acknowledged, a moment after its
	// game is recorded.
	got := scrape(t, m[1])
	for deadline := time.Now().Add(10 * time.Second); sampled(got, "arena_worker_results_total", "verdict", "taken") < float64(want) && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = scrape(t, m[1])
	}
	if n := sampled(got, "arena_worker_handouts_total"); n < float64(want) {
		t.Errorf("arena_worker_handouts_total is %v, want the %d games played at least", n, want)
	}
	if n := sampled(got, "arena_worker_results_total", "verdict", "taken"); n < float64(want) {
		t.Errorf("arena_worker_results_total{verdict=taken} is %v, want %d at least", n, want)
	}
	if n := sampled(got, "arena_workers", "state", "suspended"); n != 1 {
		t.Errorf("arena_workers{state=suspended} is %v, want the liar", n)
	}
	if sampled(got, "arena_worker_queue_games", "state", "waiting") < 0 {
		t.Error("arena_worker_queue_games is missing")
	}
	srv.Stop(t)

	keys := map[string]string{}
	for _, w := range workers {
		k, err := distrib.SigningKeyOf(tournament.WorkersDir(e.dir), w)
		if err != nil {
			t.Fatal(err)
		}
		keys[w] = transcript.KeyID(k)
	}
	by := map[string]int{}
	for _, r := range recs {
		by[r.Worker]++
		rep, err := replay.File(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Consistent || rep.SignedBy == "" || rep.SignedBy != keys[r.Worker] {
			t.Errorf("game %s, played by %q: consistent %v, signed by %q, want the key %s was enrolled with (%q)",
				r.Dir, r.Worker, rep.Consistent, rep.SignedBy, r.Worker, keys[r.Worker])
		}
	}
	if by["w1"] == 0 || by["w2"] == 0 || by["w1"]+by["w2"] != len(recs) {
		t.Errorf("games by worker %v, want every game played by w1 or w2, and each playing some", by)
	}

	st, err := event.Open(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Ladder(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rated := 0
	for _, r := range rows {
		rated += r.Games
	}
	if rated < want { // each game counts for both its teams
		t.Errorf("the ladder counts %d team-games, want at least %d: %+v", rated, want, rows)
	}
	for _, w := range workers {
		if out, _ := os.ReadFile(filepath.Join(creds, w+".log")); t.Failed() {
			t.Logf("worker %s:\n%s", w, out)
		}
	}
}

// metricsAt finds where a server serves its metrics in its log.
var metricsAt = regexp.MustCompile(`msg="serving metrics" addr=(http://[^ \n]+)`)

// liar joins the event's queue at url as the worker of credsFile and plays
// every game it takes with the sides swapped, until the test ends.
func liar(t *testing.T, url, credsFile string) {
	t.Helper()
	cr, err := distrib.ReadCredentials(credsFile)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cr.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := distrib.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithCancel(context.Background())
	q, err := distrib.Join(ctx, nc, cr.Tournament, cr.Worker)
	if err != nil {
		t.Fatal(err)
	}
	key, err := cr.SigningKey()
	if err != nil {
		t.Fatal(err)
	}
	tw := &runner.Worker{Queue: q, Backend: &local.Backend{Dir: t.TempDir()}, Scratch: t.TempDir(), Signer: key}
	w := &distrib.Worker{Queue: q, Slots: 2, Machine: json.RawMessage(`{"host":"liar","cpus":2,"sandbox":"local"}`),
		Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
			var sp map[string]json.RawMessage
			if err := json.Unmarshal(j.Spec, &sp); err != nil {
				return nil, err
			}
			sp["white"], sp["black"] = sp["black"], sp["white"]
			spec, err := json.Marshal(sp)
			if err != nil {
				return nil, err
			}
			j.Spec = spec
			return tw.Play(ctx, j)
		}}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestAStuckGameIsFlaggedBeforeItsDeadline: a worker that takes a game and
// holds it, saying it plays it but never handing in a result, is shown on
// the organizer's page and in its API as holding a stuck game, with what
// to do, and counted by arena_worker_games_stuck, while its deadline is
// still ahead; an honest worker's games are not flagged, and its health
// (games played, turns, last heard) is shown.
func TestAStuckGameIsFlaggedBeforeItsDeadline(t *testing.T) {
	t.Parallel() // its own event and server processes
	bots := []string{"./examples/greedy", "./examples/random", "./examples/greedy", "./examples/random"}
	e := writeEvent(t, "game = \"codeclash\"\n", func(st *event.Store, teams []event.NewTeam) {
		cfg, err := event.LoadConfig(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i, team := range teams {
			data, err := os.ReadFile(gobuild.MustStatic(t, bots[i]))
			if err != nil {
				t.Fatal(err)
			}
			sub, err := st.AddSubmission(ctx, cfg, team.ID, "bot", strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetState(ctx, sub.ID, event.Passed, ""); err != nil {
				t.Fatal(err)
			}
		}
	}, "Alpha", "Beta", "Gamma", "Delta")
	arena := gobuild.MustStatic(t, "./cmd/arena")
	creds := t.TempDir()
	for _, w := range []string{"w1", "holder"} {
		if out, err := exec.Command(arena, "enroll", "--out", e.dir, "--creds", filepath.Join(creds, w+".creds"), w).CombinedOutput(); err != nil {
			t.Fatalf("enroll %s: %v\n%s", w, err, out)
		}
	}
	srv := startServe(t, e.dir, "--sandbox", "local", "--listen", "127.0.0.1:0", "--games", "4", "--metrics-listen", "127.0.0.1:0")
	var url string
	for deadline := time.Now().Add(time.Minute); url == ""; time.Sleep(50 * time.Millisecond) {
		if m := workersAt.FindStringSubmatch(srv.Logs()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not say where workers join:\n%s", srv.Logs())
		}
	}
	m := metricsAt.FindStringSubmatch(srv.Logs())
	if m == nil {
		t.Fatalf("the server did not say where its metrics are:\n%s", srv.Logs())
	}
	honestWorker(t, arena, url, filepath.Join(creds, "w1.creds"))
	// The honest worker's games set the pace: StuckSamples of them first.
	view := func() queueJSON {
		t.Helper()
		code, body := callAPI(t, srv.URL, "GET", "/api/v1/admin/queue", e.admin, "")
		var v struct{ View queueJSON }
		if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
			t.Fatalf("the organizer's queue: %d %v\n%s", code, err, body)
		}
		return v.View
	}
	for deadline := time.Now().Add(3 * time.Minute); view().Timed < distrib.StuckSamples; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d games handed in after 3 minutes\nserver:\n%s", distrib.StuckSamples, srv.Logs())
		}
	}
	holder(t, url, filepath.Join(creds, "holder.creds"))
	var first heldJSON
	for deadline := time.Now().Add(time.Minute); first.Worker == ""; time.Sleep(100 * time.Millisecond) {
		for _, h := range view().Held {
			if h.Worker == "holder" {
				first = h
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the holding worker took no game within a minute\nserver:\n%s", srv.Logs())
		}
	}
	if first.Stuck {
		t.Errorf("a game just handed out is flagged stuck: %+v", first)
	}
	// Held past StuckFloor and StuckFactor times the median, it is stuck,
	// its deadline still ahead.
	var v queueJSON
	var stuck heldJSON
	for deadline := time.Now().Add(3 * time.Minute); stuck.Worker == ""; time.Sleep(500 * time.Millisecond) {
		v = view()
		for _, h := range v.Held {
			if h.Worker == "holder" && h.Job == first.Job && h.Stuck {
				stuck = h
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held game is not flagged stuck after 3 minutes: %+v\nserver:\n%s", v, srv.Logs())
		}
	}
	if !strings.HasPrefix(stuck.Deadline, "in ") {
		t.Errorf("the stuck game's deadline is %q, want it still ahead", stuck.Deadline)
	}
	metricStuck := sampled(scrape(t, m[1]), "arena_worker_games_stuck")
	if metricStuck < 1 {
		t.Errorf("arena_worker_games_stuck is %v while the holder's game is stuck, want 1 at least", metricStuck)
	}
	var noted bool
	for _, n := range v.Stuck {
		if strings.Contains(n.What, "Worker holder has held "+stuck.Name) && strings.Contains(n.Action, "stop arena worker on holder") {
			noted = true
		}
		if strings.Contains(n.What, "Worker w1 ") {
			t.Errorf("the honest worker's game is flagged stuck: %s", n.What)
		}
	}
	if !noted {
		t.Errorf("no note says the holder's game is stuck and what to do: %+v", v.Stuck)
	}
	_, page := callAPI(t, srv.URL, "GET", "/admin", e.admin, "")
	for _, want := range []string{"Worker holder has held " + stuck.Name, `<strong class="problem-text">stuck</strong>`, "stop arena worker on holder"} {
		if !strings.Contains(page, html.EscapeString(want)) && !strings.Contains(page, want) {
			t.Errorf("the organizer's page does not say %q", want)
		}
	}
	// As the organizer sees it in a browser.
	b := openTab(t, srv.URL, 2*time.Minute)
	b.login(e.admin)
	b.open("/admin")
	if text := eval[string](b, `[...document.querySelectorAll("#stuck li.problem")].map(li => li.textContent).join("\n")`); !strings.Contains(text, "Worker holder has held "+stuck.Name) {
		t.Errorf("the organizer's page in a browser shows as stuck: %q", text)
	}
	b.screenshot("organizer-queue")
	b.noExceptions()
	b.noRefusals()
	health := map[string]healthJSON{}
	for _, h := range v.Health {
		health[h.Name] = h
	}
	if w := health["w1"]; w.Played < distrib.StuckSamples || w.TurnMs <= 0 || w.HeardAgo == "" {
		t.Errorf("the honest worker's health: %+v, want %d games played at least, its turns timed, heard from", w, distrib.StuckSamples)
	}
	if h := health["holder"]; h.Holding != 1 || h.Played != 0 || h.HeardAgo == "" {
		t.Errorf("the holder's health: %+v, want it holding its game, none played, heard from", h)
	}
	if code, body := callAPI(t, srv.URL, "GET", "/api/v1/admin/workers", e.admin, ""); code != 200 || !strings.Contains(body, `"health"`) {
		t.Errorf("the organizer's list of workers has no health: %d %s", code, body)
	}
}

// queueJSON is the organizer's queue as GET /api/v1/admin/queue gives it.
type queueJSON struct {
	Timed  int
	Held   []heldJSON
	Stuck  []struct{ What, Action string }
	Health []healthJSON
}

type heldJSON struct {
	Name, Worker, Deadline string
	Job                    int
	Stuck                  bool
}

type healthJSON struct {
	Name            string
	Played, Holding int
	TurnMs          float64
	HeardAgo        string
}

// honestWorker runs arena worker with the credentials of credsFile against
// the queue at url until the test ends.
func honestWorker(t *testing.T, arena, url, credsFile string) {
	t.Helper()
	cmd := exec.Command(arena, "worker", "--creds", credsFile, "--join", url, "--sandbox", "local", "--bench-runs", "0")
	out, err := os.Create(credsFile + ".log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Errorf("worker %s did not stop within a minute of SIGTERM", credsFile)
		}
	})
}

// holder joins the event's queue at url as the worker of credsFile and
// holds every game it takes, saying it plays it, with no result, until
// the test ends (then it hands them back).
func holder(t *testing.T, url, credsFile string) {
	t.Helper()
	cr, err := distrib.ReadCredentials(credsFile)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cr.Options()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := distrib.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithCancel(context.Background())
	q, err := distrib.Join(ctx, nc, cr.Tournament, cr.Worker)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &distrib.Worker{Queue: q, Slots: 1, Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the holding worker: %v", err)
		}
	})
}
