package distrib

import (
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
