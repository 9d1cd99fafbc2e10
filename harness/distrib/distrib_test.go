package distrib_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/distrib/distribtest"
)

// Every game is played and counted exactly once, though one worker dies in
// the middle of a game (its connection gone, no ack): the game goes to
// another worker once its ack wait runs out.
func TestAWorkerThatDiesLosesNoGame(t *testing.T) {
	c := distribtest.Start(t, "cup-2026", 2*time.Second, "w1", "w2", "dies")
	coord := c.Coordinator(t)
	const games = 12
	for g := 1; g <= games; g++ {
		if dup, err := coord.Publish(context.Background(), distrib.Job{Game: g, Attempt: 1, Spec: json.RawMessage(fmt.Sprintf(`{"seed":%d}`, g))}); err != nil || dup {
			t.Fatalf("publish %d: %v %v", g, err, dup)
		}
	}
	play := func(name string) distrib.Player {
		return func(ctx context.Context, j distrib.Job) ([]byte, error) {
			time.Sleep(20 * time.Millisecond)
			return []byte(fmt.Sprintf("game %d played by %s: %s", j.Game, name, j.Spec)), nil
		}
	}
	// The dying worker takes a game and never comes back. It asks first:
	// the others, started after, would otherwise play every game before
	// it asked on a loaded host, and it would wait for one for ever.
	dq, dyingConn := c.Worker(t, "dies")
	taken := make(chan int, 1)
	dying := &distrib.Worker{Queue: dq, Slots: 1,
		Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
			taken <- j.Game
			dyingConn.Close() // as kill -9 would: no ack, no nak
			<-ctx.Done()
			return nil, ctx.Err()
		}}
	dctx, dcancel := context.WithCancel(context.Background())
	go dying.Run(dctx)
	var lost int
	select {
	case lost = <-taken:
	case <-time.After(time.Minute):
		dcancel()
		t.Fatal("the dying worker was handed no game in a minute")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, name := range []string{"w1", "w2"} {
		q, _ := c.Worker(t, name)
		w := &distrib.Worker{Queue: q, Slots: 2, Play: play(name)}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}

	seen := map[int][]distrib.Result{}
	var mu sync.Mutex
	collectCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	err := coord.Collect(collectCtx, func(r distrib.Result, ar io.Reader) error {
		mu.Lock()
		defer mu.Unlock()
		archive, err := io.ReadAll(ar)
		if err != nil {
			return err
		}
		want := fmt.Sprintf("game %d played by %s: {\"seed\":%d}", r.Game, r.Worker, r.Game)
		if string(archive) != want || r.Error != "" {
			return fmt.Errorf("result %+v with archive %q", r, archive)
		}
		seen[r.Game] = append(seen[r.Game], r)
		if len(seen) == games {
			stop()
		}
		return nil
	})
	dcancel()
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for g := 1; g <= games; g++ {
		if len(seen[g]) != 1 {
			t.Errorf("game %d: %d results", g, len(seen[g]))
		}
	}
	if r := seen[lost]; len(r) != 1 || r[0].Delivered < 2 || r[0].Worker == "dies" {
		t.Fatalf("the game the dead worker took: %+v", r)
	}
	// A worker acks its game just after it published the result: the queue
	// empties a moment after the last result is taken.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := coord.Pending(context.Background())
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d games left in the queue (%v)", n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Publishing a game again within a run is harmless; the games queued are
// the coordinator's own: a restarted coordinator starts with none, and
// publishes again, as new, what has no result.
func TestRepublishingIsHarmlessAndARestartPublishesAnew(t *testing.T) {
	c := distribtest.Start(t, "cup-2026", 2*time.Second)
	q := c.Coordinator(t)
	for range 2 {
		for g := 1; g <= 3; g++ {
			if _, err := q.Publish(context.Background(), distrib.Job{Game: g, Attempt: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dup, err := q.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 1}); err != nil || !dup {
		t.Fatalf("a republished game is not seen as one: %v %v", dup, err)
	}
	if dup, _ := q.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 2}); dup {
		t.Fatal("a new attempt was taken for a duplicate")
	}
	if n, _ := q.Pending(context.Background()); n != 4 {
		t.Fatalf("%d games queued, want 4", n)
	}
	q.Close()
	c.Server.Close()
	c.Restart(t)
	q = c.Coordinator(t)
	if n, err := q.Pending(context.Background()); err != nil || n != 0 {
		t.Fatalf("after a restart %d games queued (%v), want none", n, err)
	}
	if dup, err := q.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 1}); err != nil || dup {
		t.Fatalf("a resumed coordinator's game was taken for a duplicate: %v %v", dup, err)
	}
	if n, _ := q.Pending(context.Background()); n != 1 {
		t.Fatalf("%d games queued, want 1", n)
	}
}

// A game whose earlier attempt failed on a host waits until its NotBefore:
// the coordinator hands it to no worker sooner.
func TestADelayedGameIsNotPlayedBeforeItsTime(t *testing.T) {
	c := distribtest.Start(t, "cup", 2*time.Second, "w1")
	coord := c.Coordinator(t)
	notBefore := time.Now().Add(1500 * time.Millisecond)
	if _, err := coord.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 2, NotBefore: notBefore}); err != nil {
		t.Fatal(err)
	}
	q, _ := c.Worker(t, "w1")
	played := make(chan time.Time, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &distrib.Worker{Queue: q, Slots: 1, Play: func(ctx context.Context, j distrib.Job) ([]byte, error) {
		played <- time.Now()
		return []byte("played"), nil
	}}
	go w.Run(ctx)
	select {
	case at := <-played:
		if at.Before(notBefore) {
			t.Fatalf("played %v before its time", notBefore.Sub(at))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the delayed game was never played")
	}
}

// A hundred enrolled workers each get their upload bucket, whatever the
// disk's free space: a bucket's cap (2 GiB) is no reservation of the disk
// (the server's own ledger, 75% of the free space, refused the 33rd on a
// disk with 72 GB free).
func TestAHundredEnrolledWorkersStart(t *testing.T) {
	t.Parallel()
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("w%03d", i)
	}
	c := distribtest.Start(t, "hundred", time.Minute, names...)
	c.Coordinator(t) // makes every enrolled worker's bucket, or fails the test
	// The last one joins as a worker does: its bucket is there.
	if q, _ := c.Worker(t, names[len(names)-1]); q == nil {
		t.Fatal("the last worker did not join")
	}
}

// A worker silent past its ack wait hands in its result after all, once
// the game is back in the queue: the result is taken, and the copy that
// waited leaves the queue with it, so no worker plays the game again.
func TestAGameWhoseLateResultIsTakenLeavesTheQueue(t *testing.T) {
	t.Parallel()
	c := distribtest.Start(t, "late", 500*time.Millisecond, "late", "other")
	coord := c.Coordinator(t)
	if _, err := coord.Publish(context.Background(), distrib.Job{Game: 1, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{}, 1)
	stopWatch, err := coord.WatchPlaying(func(p distrib.Playing) {
		if p.Returned {
			select {
			case returned <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stopWatch()
	late := c.Conn(t, "late")
	j := askForGame(t, late, "arena.late.want.late")
	// Silent past the ack wait: the game goes back to the queue.
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the silent worker's game did not go back to the queue")
	}
	data, _ := json.Marshal(distrib.Result{Tournament: "late", Game: 1, Attempt: 1, Worker: "late", Handout: j.Handout, Error: "played late"})
	if err := late.Publish("arena.late.results.late", data); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	var took []distrib.Result
	if err := coord.Collect(ctx, func(r distrib.Result, _ io.Reader) error {
		took = append(took, r)
		stop()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(took) != 1 || took[0].Stale || took[0].Forged != "" {
		t.Fatalf("results taken: %+v, want the late one", took)
	}
	if n, err := coord.Pending(context.Background()); err != nil || n != 0 {
		t.Fatalf("%d games still queued or held after their result was taken (%v)", n, err)
	}
	// Asked for a game, the queue has none.
	m, err := c.Conn(t, "other").Request("arena.late.want.other", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Data) != 0 {
		t.Fatalf("the game whose result was taken is handed out again: %s", m.Data)
	}
}
