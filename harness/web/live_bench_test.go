package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/live"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules/codeclash"
)

// BenchmarkLiveSpectators: spectators follow live games over the server's
// streams, 1,000 on one game and 100 on each of 10; each iteration records
// one turn in every game and waits until every spectator read it. It
// reports the delay from a turn's record to its arrival at a spectator
// (p50, p99, max), the time the match's goroutine spends telling the
// watchers (record-ns: what a bot's turn is slowed by), the CPU time and
// the heap per turn, and the heap per spectator once connected. The
// spectators are in this process: the CPU and memory are the server's and
// theirs together.
func BenchmarkLiveSpectators(b *testing.B) {
	for _, c := range []struct{ games, each int }{{1, 1000}, {10, 100}} {
		b.Run(fmt.Sprintf("%dx%d", c.games, c.each), func(b *testing.B) { benchSpectators(b, c.games, c.each) })
	}
}

func benchSpectators(b *testing.B, games, each int) {
	dir := b.TempDir()
	st, err := event.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := New(st, event.Config{Game: "codeclash"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	defer s.CloseStreams()
	state, err := codeclash.Game{}.New(nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	gs := make([]*live.Game, games)
	for i := range gs {
		gs[i] = s.Watch(event.LadderGame, event.Side{Name: "w"}, event.Side{Name: "b"}, 0, 0).(*live.Game)
		gs[i].Started(transcript.Header{Game: "codeclash", White: transcript.Bot{Name: "w"}, Black: transcript.Bot{Name: "b"}}, state)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: games * each, MaxConnsPerHost: 0}}
	// recorded[ply] is when ply was recorded; each spectator sends the
	// delay of each ply it reads.
	var mu sync.Mutex
	recorded := map[int]time.Time{}
	delays := make(chan time.Duration, games*each*4)
	ready := sync.WaitGroup{}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, g := range gs {
		for range each {
			ready.Add(1)
			go spectate(ctx, b, client, srv.URL+"/live/"+g.ID+"/events", &ready, func(ply int) {
				mu.Lock()
				at := recorded[ply]
				mu.Unlock()
				delays <- time.Since(at)
			})
		}
	}
	ready.Wait()
	var connected runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&connected)
	var all []time.Duration
	var record time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		ply := i + 1
		mu.Lock()
		recorded[ply] = time.Now()
		mu.Unlock()
		side := "white"
		if ply%2 == 0 {
			side = "black"
		}
		t0 := time.Now()
		for _, g := range gs {
			g.Turn(transcript.Turn{Ply: ply, Side: side, Verdict: "ok", StderrTail: "own"}, state)
		}
		record += time.Since(t0)
		for range games * each {
			select {
			case d := <-delays:
				all = append(all, d)
			case <-time.After(10 * time.Second):
				b.Fatalf("ply %d: a spectator did not read it in 10 s", ply)
			}
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
	b.ReportMetric(float64(record.Nanoseconds())/float64(b.N*games), "record-ns")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/turn")
	b.ReportMetric(float64(connected.HeapInuse-before.HeapInuse)/float64(games*each), "heap-B/spectator")
}

// spectate follows a game's stream as a page does, telling read each
// step's number after the start; ready is done once the start was read.
func spectate(ctx context.Context, b *testing.B, client *http.Client, url string, ready *sync.WaitGroup, read func(ply int)) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		b.Error(err)
		ready.Done()
		return
	}
	res, err := client.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Errorf("follow %s: %v %v", url, err, res)
		ready.Done()
		return
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	started := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "id: ") {
			continue
		}
		n, err := strconv.Atoi(line[4:])
		if err != nil {
			b.Error(err)
			return
		}
		if n == 0 && !started {
			started = true
			ready.Done()
			continue
		}
		read(n)
	}
}

// cpuTime is the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
