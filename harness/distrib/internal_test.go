package distrib

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// A strike counts for StrikeWindow: a worker's old strikes are forgotten,
// so one let in again is struck out by strikes of its own.
func TestAStrikeCountsForItsWindow(t *testing.T) {
	var told []Strike
	var mu sync.Mutex
	d := &dispatcher{strikes: map[string][]time.Time{}, onStrike: func(s Strike) { mu.Lock(); told = append(told, s); mu.Unlock() }}
	old := time.Now().Add(-StrikeWindow - time.Second)
	d.strikes["w"] = []time.Time{old, old, old, time.Now().Add(-time.Minute)}
	d.strike("w", "news of a game it does not hold")
	if n := len(d.strikes["w"]); n != 2 {
		t.Errorf("%d strikes counted, want the last minute's 2", n)
	}
	d.strike("other", "a flood")
	if n := len(d.strikes["other"]); n != 1 {
		t.Errorf("another worker's strikes: %d", n)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(told)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d strikes told, want 2", n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range told {
		if s.Worker == "w" && s.Count != 2 {
			t.Errorf("told %+v, want a count of 2", s)
		}
	}
}

// blockingReader gives its bytes, then blocks until ctx ends: an upload
// whose description claims more than its worker sent.
type blockingReader struct {
	ctx  context.Context
	data []byte
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

// A fetch whose bytes stop coming fails after the stall, whatever size
// its description claims; one whose bytes keep coming is not cut.
func TestAStalledFetchFailsAtItsStall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	n, err := copyWatched(&out, &blockingReader{ctx: ctx, data: []byte("some bytes")}, 200*time.Millisecond, cancel)
	if !errors.Is(err, errStalled) || n != 10 || time.Since(start) > 5*time.Second {
		t.Errorf("a stalled copy: %d bytes, %v, after %v", n, err, time.Since(start))
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	slow := &slowReader{left: 20}
	if n, err := copyWatched(io.Discard, slow, 200*time.Millisecond, cancel2); err != nil || n != 20 || ctx2.Err() != nil {
		t.Errorf("a slow copy that never stalls: %d bytes, %v", n, err)
	}
}

// slowReader gives a byte every 50 ms.
type slowReader struct{ left int }

func (s *slowReader) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(50 * time.Millisecond)
	s.left--
	p[0] = 'x'
	return 1, nil
}
