package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/metrics/metricstest"
)

// metricsAt finds where a process serves its metrics in its log.
var metricsAt = regexp.MustCompile(`msg="serving metrics" addr=(http://[^ \n]+)`)

// startLogged starts arena with args and returns where it serves its
// metrics, as its log says; the process is killed at the test's end.
func startLogged(t *testing.T, arena string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(arena, append([]string{"--log-level", "info"}, args...)...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cmd.Process.Kill(); err != nil {
			t.Logf("kill arena %s: %v", args[0], err)
		}
		cmd.Wait() // killed: its exit says nothing
	})
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := metricsAt.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1]
		}
	}
	t.Fatalf("arena %s logged no metrics address:\n%s", args[0], log.String())
	return ""
}

// arena tournament --listen and arena worker serve their metrics with
// --metrics-listen, at the address they log: the coordinator its games,
// queued for workers, and its enrolled worker; the worker its slots while
// it waits for its coordinator. A bad address is refused by name.
func TestTournamentAndWorkerServeMetrics(t *testing.T) {
	t.Parallel()
	arena, bots := arenaWithBots(t, "legal", "shuffle", "slow-40")
	dir := t.TempDir()
	env := append(os.Environ(), "ARENA_SIGNING_KEY=none")
	out := filepath.Join(dir, "cup")
	creds := filepath.Join(dir, "w1.creds")
	if b, err := exec.Command(arena, "enroll", "--out", out, "--creds", creds, "w1").CombinedOutput(); err != nil {
		t.Fatalf("arena enroll: %v\n%s", err, b)
	}
	common := []string{"--sandbox", "local", "--seed", "9", "-q", "--min-free", "0"}
	for _, args := range [][]string{
		append([]string{"tournament", "--out", filepath.Join(dir, "bad"), "--metrics-listen", "nowhere:port", bots}, common...),
		{"worker", "--creds", creds, "--join", "tls://127.0.0.1:1", "--sandbox", "local", "--metrics-listen", "nowhere:port"},
	} {
		cmd := exec.Command(arena, args...)
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(b), "--metrics-listen") {
			t.Errorf("arena %s with a bad --metrics-listen: %v\n%s", args[0], err, b)
		}
	}

	coordinator := startLogged(t, arena, env, append([]string{"tournament", "--out", out, "--listen", "127.0.0.1:0",
		"--metrics-listen", "127.0.0.1:0", bots}, common...)...)
	// Nothing plays the games: once published, all 6 wait for a worker,
	// and the store counts them playing. The queue and the store are two
	// updates a scrape can fall between: wait for both.
	var got = metricstest.Scrape(t, coordinator)
	published := func() bool {
		return metricstest.Sampled(got, "arena_worker_queue_games", "state", "waiting") == 6 &&
			metricstest.Sampled(got, "arena_tournament_games", "state", "playing") == 6
	}
	for deadline := time.Now().Add(time.Minute); !published(); got = metricstest.Scrape(t, coordinator) {
		if time.Now().After(deadline) {
			t.Fatalf("the coordinator's games did not reach its queue in a minute: arena_worker_queue_games{state=waiting} is %v, arena_tournament_games{state=playing} %v",
				metricstest.Sampled(got, "arena_worker_queue_games", "state", "waiting"), metricstest.Sampled(got, "arena_tournament_games", "state", "playing"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"arena_tournament_games", []string{"state", "playing"}, 6},
		{"arena_tournament_games", nil, 6},
		{"arena_workers", []string{"state", "admitted"}, 1},
		{"arena_worker_handouts_total", nil, 0},
	} {
		if v := metricstest.Sampled(got, c.family, c.labels...); v != c.want {
			t.Errorf("the coordinator's %s%v is %v, want %v", c.family, c.labels, v, c.want)
		}
	}
	if metricstest.Sampled(got, "go_goroutines") <= 0 {
		t.Error("the coordinator exposes no go_goroutines")
	}

	// A port nothing listens on: the worker waits for its coordinator.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	worker := startLogged(t, arena, env, "worker", "--creds", creds, "--join", "tls://"+closed, "--sandbox", "local",
		"--concurrency", "3", "--metrics-listen", "127.0.0.1:0")
	played := metricstest.Scrape(t, worker)
	for _, c := range []struct {
		family string
		want   float64
	}{
		{"arena_worker_slots", 3},
		{"arena_worker_games_playing", 0},
		{"arena_worker_host_faults_total", 0},
	} {
		if v := metricstest.Sampled(played, c.family); v != c.want {
			t.Errorf("the worker's %s is %v, want %v", c.family, v, c.want)
		}
	}
	if metricstest.Sampled(played, "process_resident_memory_bytes") <= 0 {
		t.Error("the worker exposes no process_resident_memory_bytes")
	}
}
