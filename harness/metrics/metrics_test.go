package metrics_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arenabots/arena/harness/metrics"
)

// exposedBy are the arena_ metrics each process exposes, every one of them
// observed once so that each family is there.
func exposedBy(t *testing.T) map[string]*prometheus.Registry {
	t.Helper()
	e := metrics.NewEvent(func(context.Context) (metrics.Gauges, error) {
		return metrics.Gauges{Submissions: map[string]int{"queued": 1}, Scrimmages: map[string]int{"queued": 1},
			Final: map[string]int{"done": 1}, Workers: map[string]int{"admitted": 1}, DBBytes: 1,
			Live: map[string]int{"ladder": 1}, Spectators: 1}, nil
	}, nil)
	queue := func() metrics.QueueStats {
		return metrics.QueueStats{Waiting: 1, Strikes: map[string]int{"w1": 1}, Results: map[string]int{"taken": 1}}
	}
	e.WatchQueue(queue)
	e.Request("GET /{$}", 200, time.Millisecond, false)
	e.Game("ladder", "white", []metrics.Turn{{WallMs: 3, HostWaitMs: 1}})
	e.Write(time.Millisecond)

	tm := metrics.NewTournament(func(context.Context) (metrics.TournamentGauges, error) {
		return metrics.TournamentGauges{Games: map[string]int{"pending": 1}, Workers: map[string]int{"admitted": 1}}, nil
	}, nil)
	tm.WatchQueue(queue)
	tm.Game("white", []metrics.Turn{{WallMs: 3, HostWaitMs: 1}})
	tm.Aborted()

	w := metrics.NewWorker(2)
	w.Measured("docker backend turn", 2, 5)
	w.Took()
	w.Played("draw", []metrics.Turn{{WallMs: 3, HostWaitMs: 1}})
	w.HostFault()
	w.Released(metrics.HandedIn)
	w.Refused()
	return map[string]*prometheus.Registry{"serve": e.Registry(), "tournament": tm.Registry(), "worker": w.Registry()}
}

// Every arena_ metric docs/operations.md and its Grafana dashboard name is
// one a process exposes, every one the event server, a tournament's
// coordinator or a worker exposes is documented, and the table's "exposed
// by" column names exactly the processes that expose it.
func TestTheDocsNameTheMetricsThereAre(t *testing.T) {
	t.Parallel()
	exposed := map[string][]string{} // metric -> the processes exposing it
	for process, reg := range exposedBy(t) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		goroutines := false
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "arena_") {
				exposed[mf.GetName()] = append(exposed[mf.GetName()], process)
			}
			goroutines = goroutines || mf.GetName() == "go_goroutines"
		}
		if !goroutines {
			t.Errorf("%s exposes no go_goroutines", process)
		}
	}
	name := regexp.MustCompile(`arena_[a-z_]+[a-z]`)
	documented := map[string]bool{}
	for _, f := range []string{"../../docs/operations.md", "../../docs/grafana/arena.json"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range name.FindAllString(string(data), -1) {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
			if exposed[base] == nil {
				t.Errorf("%s names %s, which no process exposes", f, n)
			}
			documented[base] = true
		}
	}
	rows := tableRows(t, "../../docs/operations.md")
	for n, processes := range exposed {
		if !documented[n] {
			t.Errorf("%s is exposed but docs/operations.md does not say what it means", n)
		}
		sort.Strings(processes)
		if by, ok := rows[n]; !ok {
			t.Errorf("docs/operations.md's table has no row for %s", n)
		} else if !slices.Equal(by, processes) {
			t.Errorf("docs/operations.md says %s is exposed by %v; it is by %v", n, by, processes)
		}
	}
	if by := rows["go_*"]; !slices.Equal(by, []string{"serve", "tournament", "worker"}) {
		t.Errorf("docs/operations.md says the process's own metrics are exposed by %v", by)
	}
}

// tableRows reads the metrics table of a document: each row's metric (its
// first cell's first code span) and the processes its "exposed by" cell
// names, sorted.
func tableRows(t *testing.T, file string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	span := regexp.MustCompile("`([^`]+)`")
	process := regexp.MustCompile(`\b(serve|tournament|worker)\b`)
	rows := map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 7 { // | metric | type | labels | exposed by | meaning |
			continue
		}
		m := span.FindStringSubmatch(cells[1])
		if m == nil {
			continue
		}
		by := process.FindAllString(cells[4], -1)
		sort.Strings(by)
		rows[m[1]] = slices.Compact(by)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no metrics table of five columns", file)
	}
	return rows
}

// Metrics served at an address with no host are the loopback's alone;
// a named host is served as named.
func TestMetricsWithNoHostListenOnTheLoopback(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	stop, err := metrics.Serve(context.Background(), ":0", h, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.Contains(logs.String(), "http://127.0.0.1:") {
		t.Fatalf("metrics at \":0\" are served at %q, want the loopback's", logs.String())
	}
}
