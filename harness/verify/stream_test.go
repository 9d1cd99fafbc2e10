package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/verify"
)

// writeLong writes a transcript of n lines of about 64 KiB each whose
// chain holds (a header, turns, a footer), a line at a time: a game no
// rules would play, long enough to be felt if it were read whole.
func writeLong(w io.Writer, n int) error {
	pad := strings.Repeat("x", 64<<10)
	prev := ""
	for i := range n {
		typ := transcript.TypeTurn
		switch i {
		case 0:
			typ = transcript.TypeHeader
		case n - 1:
			typ = transcript.TypeFooter
		}
		line := fmt.Sprintf(`{"type":%q,"seq":%d,"prev":%q,"pad":%q}`, typ, i, prev, pad)
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
		prev = transcript.Hash([]byte(line))
	}
	return nil
}

// peakHeap runs f, sampling the heap in use, and returns how far above
// its start it rose.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// A transcript is read once, a line at a time, as it is served: hashed,
// its chain followed and its game replayed together. A served transcript
// of 44 MiB is checked holding about a line of it; one served without its
// length past the most a transcript may weigh is cut off there. (Not
// parallel: the heap it measures is its own.)
func TestATranscriptIsCheckedALineAtATime(t *testing.T) {
	const lines = 700 // 44 MiB
	sum := sha256.New()
	if err := writeLong(sum, lines); err != nil {
		t.Fatal(err)
	}
	public := hex.EncodeToString(sum.Sum(nil))
	entry := func(id int) event.LogEntry {
		return event.LogEntry{Kind: event.LogGame, Game: &event.LoggedGame{ID: id, White: "aa", Black: "bb", Seed: uint64(id), Winner: "white", Dir: fmt.Sprintf("final/games/%d", id), Public: public}}
	}
	dir, key := bundle(t, append(final(1, 2), entry(1), entry(2))...)
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/final/games/{id}/"+transcript.FileName, func(w http.ResponseWriter, r *http.Request) {
		n := lines
		if r.PathValue("id") == "2" {
			n = 1100 // 69 MiB, more than a transcript may weigh
		}
		// Flushed as written: served without a length.
		if err := writeLong(flushing{w}, n); err != nil {
			t.Logf("serving game %s: %v", r.PathValue("id"), err)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var err error
	// Bounded by a deadline of its own, not hangBound: 113 MiB hashed and
	// replayed under the race detector on a host busy with other packages'
	// tests takes longer than a hostile bundle may, and the time is not
	// what this test measures.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rose := peakHeap(func() {
		_, err = verify.Bundle(ctx, verify.URL(srv.URL), verify.Options{Key: key, Partial: true})
	})
	var p verify.Problems
	if !errors.As(err, &p) {
		t.Fatalf("a bundle of two games no rules play: %v, want its problems", err)
	}
	var one, two string
	for _, s := range p {
		switch {
		case strings.Contains(s, "game 1:"):
			one = s
		case strings.Contains(s, "game 2:"):
			two = s
		}
	}
	if !strings.Contains(one, "does not replay") {
		t.Errorf("game 1, 44 MiB whose chain holds: %q, want it read to its end and replayed", one)
	}
	if want := fmt.Sprintf("%s/final/games/2/%s is more than %d bytes", srv.URL, transcript.FileName, verify.MaxTranscript); !strings.Contains(two, want) {
		t.Errorf("game 2, 69 MiB served without a length: %q, want %q", two, want)
	}
	if rose > 16<<20 {
		t.Errorf("the heap rose by %d MiB checking transcripts of 44 and 69 MiB: read whole, not a line at a time", rose>>20)
	}
	t.Logf("the heap rose by %.1f MiB", float64(rose)/(1<<20))
}

// flushing flushes each write, so that the response has no length.
type flushing struct{ w http.ResponseWriter }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.w.(http.Flusher).Flush()
	return n, err
}
