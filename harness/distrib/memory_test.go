package distrib_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
)

// TestMain runs the test binary as a worker's own process when asked
// (uploaderEnv): a coordinator's memory is measured with its workers
// outside it.
func TestMain(m *testing.M) {
	if creds := os.Getenv(uploaderEnv); creds != "" {
		if err := upload(creds, os.Getenv(uploaderURLEnv), os.Getenv(uploaderSizeEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	uploaderEnv     = "ARENA_TEST_UPLOADER_CREDS"
	uploaderURLEnv  = "ARENA_TEST_UPLOADER_URL"
	uploaderSizeEnv = "ARENA_TEST_UPLOADER_SIZE"
)

// upload is a worker whose every game's archive is size bytes of noise; it
// plays until killed.
func upload(creds, url, size string) error {
	cr, err := distrib.ReadCredentials(creds)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(size)
	if err != nil {
		return err
	}
	opts, err := cr.Options()
	if err != nil {
		return err
	}
	nc, err := distrib.Connect(url, opts...)
	if err != nil {
		return err
	}
	q, err := distrib.Join(context.Background(), nc, cr.Tournament, cr.Worker)
	if err != nil {
		return err
	}
	archive := make([]byte, n)
	noise().Read(archive)
	w := &distrib.Worker{Queue: q, Slots: 1, Play: func(context.Context, distrib.Job) ([]byte, error) { return archive, nil }}
	return w.Run(context.Background())
}

// noise is the stream of bytes every uploader's archive is made of.
func noise() *rand.ChaCha8 { return rand.NewChaCha8([32]byte{'a', 'r', 'e', 'n', 'a'}) }

// coordinatorMemoryBound is what a coordinator may hold beyond its
// resting memory while archives arrive and are fetched, however large and
// however many at once: docs/scale.md states it.
const coordinatorMemoryBound = 160 << 20

// Three workers upload large archives at once while the coordinator fetches
// them: each arrives whole (spooled to a file, its digest checked, the
// spool emptied once judged), and the coordinator's memory stays within
// coordinatorMemoryBound, below one archive's size.
func TestTheCoordinatorsMemoryIsBoundedWhileArchivesArrive(t *testing.T) {
	const workers, size = 3, 192 << 20
	names := []string{"w1", "w2", "w3"}
	c := distribtest.Start(t, "mem", time.Minute, names...)
	coord := c.Coordinator(t)
	spool := t.TempDir()
	coord.SpoolIn(spool)
	h := sha256.New()
	if _, err := io.CopyN(h, noise(), size); err != nil {
		t.Fatal(err)
	}
	want := string(h.Sum(nil))
	for g := 1; g <= workers; g++ {
		if _, err := coord.Publish(context.Background(), distrib.Job{Game: g, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	base := heldMemory()
	var peak uint64
	var pmu sync.Mutex
	sampling := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sampling:
				return
			case <-t.C:
				m := heldMemory()
				pmu.Lock()
				peak = max(peak, m)
				pmu.Unlock()
			}
		}
	}()
	for _, w := range names {
		creds := filepath.Join(t.TempDir(), w+".creds")
		if err := c.Creds[w].Write(creds); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), uploaderEnv+"="+creds, uploaderURLEnv+"="+c.Server.URL(), uploaderSizeEnv+"="+strconv.Itoa(size))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Minute)
	defer stop()
	got := map[int]int64{}
	start := time.Now()
	err := coord.Collect(ctx, func(r distrib.Result, ar io.Reader) error {
		if r.Lost != "" || r.Forged != "" || r.Stale || r.Error != "" {
			return fmt.Errorf("game %d: %+v", r.Game, r)
		}
		if _, ok := ar.(*os.File); !ok {
			return fmt.Errorf("game %d's archive is not spooled to a file: %T", r.Game, ar)
		}
		h := sha256.New()
		n, err := io.Copy(h, ar)
		if err != nil {
			return err
		}
		if string(h.Sum(nil)) != want {
			return fmt.Errorf("game %d's archive does not match what its worker sent", r.Game)
		}
		got[r.Game] = n
		if len(got) == workers {
			stop()
		}
		return nil
	})
	close(sampling)
	if err != nil {
		t.Fatal(err)
	}
	for g := 1; g <= workers; g++ {
		if got[g] != size {
			t.Errorf("game %d's archive: %d bytes, want %d", g, got[g], size)
		}
	}
	if left, _ := os.ReadDir(spool); len(left) != 0 {
		t.Errorf("the spool keeps %d files after judging", len(left))
	}
	pmu.Lock()
	defer pmu.Unlock()
	grew := int64(peak) - int64(base)
	t.Logf("%d archives of %d MiB in %v: the coordinator's memory grew by %d MiB at most", workers, size>>20, time.Since(start).Round(time.Millisecond), grew>>20)
	if grew > coordinatorMemoryBound {
		t.Errorf("the coordinator's memory grew by %d MiB while archives arrived, more than %d MiB", grew>>20, coordinatorMemoryBound>>20)
	}
}

// heldMemory is what the Go runtime holds from the system and has not
// given back: the process's memory, bar its binary.
func heldMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// A worker floods the results stream with results of a hand-out another
// run made (stale: never fetched), each with its own message id of 60
// KiB, as large as a result's message may be. The coordinator's live
// memory does not keep them (the server's duplicate window held every id
// for 7 days: 384 MB per 5,000), and the flood is struck against its
// sender as a flood of asks is.
func TestAFloodOfResultsLeavesTheCoordinatorsMemoryAsItWas(t *testing.T) {
	const results = 10_000
	c := distribtest.Start(t, "flood", time.Minute, "flooder")
	coord := c.Coordinator(t)
	var smu sync.Mutex
	var strikes []string
	coord.OnStrike(func(s distrib.Strike) {
		smu.Lock()
		strikes = append(strikes, s.Why)
		smu.Unlock()
	})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	collected := make(chan error, 1)
	var taken atomic.Int64
	go func() {
		collected <- coord.Collect(ctx, func(r distrib.Result, _ io.Reader) error {
			if !r.Stale {
				return fmt.Errorf("a result of another run's hand-out is not stale: %+v", r)
			}
			taken.Add(1)
			return nil
		})
	}()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	nc := c.Conn(t, "flooder")
	body := []byte(`{"tournament":"flood","game":1,"attempt":1,"worker":"flooder","handout":"0123456789abcdef-1","object":"result-0123456789abcdef-1"}`)
	id := make([]byte, 60<<10-len(body)-512)
	for i := range id {
		id[i] = 'a' + byte(i%26)
	}
	refused := 0
	for i := range results {
		copy(id, fmt.Sprintf("%08d", i))
		m := &nats.Msg{Subject: "arena.flood.results.flooder", Data: body, Header: nats.Header{"Nats-Msg-Id": []string{string(id)}}}
		if err := nc.PublishMsg(m); err != nil {
			refused++ // the connection is closed once the flooder is shut out
		}
	}
	nc.Flush()
	// The results that went in are taken (each a lookup), however slowly a
	// loaded host takes them, and the window passes.
	for last, still := taken.Load(), 0; still < 20; time.Sleep(100 * time.Millisecond) {
		if n := taken.Load(); n != last {
			last, still = n, 0
		} else {
			still++
		}
	}
	time.Sleep(time.Second)
	stop()
	if err := <-collected; err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d results of 60 KiB sent, %d taken as stale: the live heap grew by %d MiB", results, taken.Load(), grew>>20)
	if grew > 64<<20 {
		t.Errorf("the live heap grew by %d MiB after %d results with 60 KiB message ids, want it bounded (at most 64 MiB)", grew>>20, results)
	}
}
