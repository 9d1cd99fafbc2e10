package metrics_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arenabots/arena/harness/metrics"
)

// Every arena_ metric docs/operations.md and its Grafana dashboard name is
// one the server exposes, and every one it exposes is documented.
func TestTheDocsNameTheMetricsThereAre(t *testing.T) {
	t.Parallel()
	m := metrics.NewEvent(func(context.Context) (metrics.Gauges, error) {
		return metrics.Gauges{Submissions: map[string]int{"queued": 1}, Scrimmages: map[string]int{"queued": 1},
			Final: map[string]int{"done": 1}, Workers: map[string]int{"admitted": 1}, DBBytes: 1}, nil
	}, nil)
	m.WatchQueue(func() metrics.QueueStats {
		return metrics.QueueStats{Waiting: 1, Strikes: map[string]int{"w1": 1}, Results: map[string]int{"taken": 1}}
	})
	m.Request("GET /{$}", 200, time.Millisecond, false)
	m.Game("ladder", "white", []metrics.Turn{{WallMs: 3, HostWaitMs: 1}})
	m.Write(time.Millisecond)
	exposed := map[string]bool{}
	families, err := testutil.GatherAndCount(m.Registry())
	if err != nil || families == 0 {
		t.Fatalf("gathered %d metrics: %v", families, err)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "arena_") {
			exposed[mf.GetName()] = true
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
			if !exposed[base] {
				t.Errorf("%s names %s, which the server does not expose", f, n)
			}
			documented[base] = true
		}
	}
	for n := range exposed {
		if !documented[n] {
			t.Errorf("%s is exposed but docs/operations.md does not say what it means", n)
		}
	}
}
