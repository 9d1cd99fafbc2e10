package web

import (
	"context"
	"encoding/json"
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
	if code, body := api(t, srv.URL, "GET", "/api/v1/admin/workers", e.admin, ""); code != 200 || !strings.Contains(body, "white differs") {
		t.Errorf("the organizer's list of workers: %d %s", code, body)
	}
	if _, page := api(t, srv.URL, "GET", "/admin", e.admin, ""); !strings.Contains(page, "suspended</strong>") || !strings.Contains(page, "/admin/workers/liar/readmit") {
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
	tw := &tournament.Worker{Queue: q, Backend: &local.Backend{Dir: t.TempDir()}, Scratch: t.TempDir(), Signer: key}
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
