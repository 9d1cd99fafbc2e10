package kubernetes

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The room is learnt: every game is admitted until a box finds none; then
// a game waits while the others hold what was seen to fit, and is let in
// when one of them releases; a game that finds no room alone is not told
// to wait (nothing it waits for would end); now and then a game is let
// past the room learnt, and the room grows when its boxes fit.
func TestTheRoomIsLearntAndGamesWaitForIt(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	r := newRoom()
	r.now = func() time.Time { return now }
	ctx := context.Background()
	admit := func(n int) *admission {
		t.Helper()
		a, err := r.admit(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b, c := admit(2), admit(2), admit(2)
	if !c.full() {
		t.Fatal("a game that finds no room while others hold 4 boxes is told it does not fit even alone")
	}
	c.release()
	if r.most != 4 || r.held != 4 {
		t.Fatalf("after the third game found no room: most %d, held %d; want 4, 4", r.most, r.held)
	}
	// A fourth game waits: admitted only once a game releases.
	got := make(chan *admission)
	go func() {
		d, err := r.admit(ctx, 2)
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	select {
	case <-got:
		t.Fatal("a game was admitted past the room learnt")
	case <-time.After(50 * time.Millisecond):
	}
	a.release()
	a.release() // once only
	d := <-got
	if r.held != 4 {
		t.Fatalf("held %d after one game left and one came, want 4", r.held)
	}
	// Waiting ends with the context.
	cctx, cancel := context.WithCancelCause(ctx)
	cause := errors.New("the tournament was stopped")
	cancel(cause)
	if _, err := r.admit(cctx, 2); !errors.Is(err, cause) {
		t.Errorf("a game waiting for room whose context ended: %v", err)
	}
	// Past probeEvery, one game is let through to find out whether the
	// cluster grew: its boxes fit, and the room is what is held now.
	now = now.Add(probeEvery)
	e := admit(2)
	e.opened()
	if r.most != 6 {
		t.Errorf("a game let past the room learnt whose boxes fit: most %d, want 6", r.most)
	}
	for _, x := range []*admission{b, d, e} {
		x.release()
	}
	// Alone, a game that finds no room is not told to wait.
	f := admit(2)
	if f.full() {
		t.Error("a game alone that finds no room is told to wait for others")
	}
	f.release()
	if r.held != 0 {
		t.Errorf("held %d after every game left", r.held)
	}
}

// Warm Pods live in the room games leave: none is started while a game
// waits or past the room learnt; when a game's box finds no room while
// warm Pods hold some, it is not told to wait for games (none hold any),
// the idle warm Pods are deleted and the pool pauses; a warm Pod that
// finds no room learns the room and pauses the pool too.
func TestWarmPodsGiveWayToGames(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	r := newRoom()
	r.now = func() time.Time { return now }
	shed := 0
	r.shed = func() {
		shed++
		for r.warm > 0 {
			r.warmGone()
		}
	}
	ctx := context.Background()
	// Before the room is known, warm Pods are started.
	for range 2 {
		if !r.warmPlace() {
			t.Fatal("no place for a warm Pod in a room never seen full")
		}
	}
	a, err := r.admit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The game's box finds no room: the warm Pods held it. No game holds
	// any, so the game does not wait for one; the warm Pods are deleted,
	// and none is started or kept for a while.
	if a.full() {
		t.Fatal("a game whose box found no room beside warm Pods alone is told to wait for other games")
	}
	if shed != 1 || r.warm != 0 {
		t.Fatalf("after a game found no room beside two warm Pods: shed %d times, %d warm; want 1, 0", shed, r.warm)
	}
	if r.warmPlace() || r.warmKept() {
		t.Fatal("the warm pool started or kept a Pod right after a game found no room")
	}
	now = now.Add(probeEvery)
	if !r.warmKept() {
		t.Fatal("the warm pool is still paused after probeEvery")
	}
	// Beside another game, a game that finds no room learns the room: the
	// other game's boxes and the warm Pod.
	if !r.warmPlace() {
		t.Fatal("no place for a warm Pod beside one game in a room never seen full")
	}
	b, err := r.admit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !b.full() {
		t.Fatal("a game that found no room beside another game is not told to wait for it")
	}
	if r.most != 3 || shed != 2 || r.warm != 0 {
		t.Fatalf("most %d, shed %d, warm %d; want 3, 2, 0", r.most, shed, r.warm)
	}
	b.release()
	now = now.Add(probeEvery)
	// The room learnt is 3: beside a game's 2 boxes, one warm Pod.
	if !r.warmPlace() {
		t.Fatal("no place for a warm Pod beside a game in a room of 3")
	}
	if r.warmPlace() {
		t.Fatal("a warm Pod was started past the room learnt")
	}
	// A warm Pod handed out to a game frees no room; one that finds no
	// room pauses the pool.
	r.warmTaken()
	if !r.warmPlace() {
		t.Fatal("no place for a warm Pod once one was handed out")
	}
	r.warmNoRoom()
	if r.warm != 0 || r.warmPlace() {
		t.Fatalf("after a warm Pod found no room: %d warm, and the pool started another", r.warm)
	}
	a.release()
	now = now.Add(probeEvery)
	// No warm Pod is started while a game waits for room.
	c, err := r.admit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.most, r.probed = 2, r.now() // full, and no probe lets the next game past
	r.mu.Unlock()
	waiting := make(chan error)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := r.admit(wctx, 2)
		waiting <- err
	}()
	for {
		r.mu.Lock()
		w := r.waiting
		r.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	r.mu.Lock()
	r.most = 10 // as if a probe found more room
	r.mu.Unlock()
	if r.warmPlace() {
		t.Error("a warm Pod was started while a game waited for room")
	}
	cancel()
	<-waiting
	c.release()
	if !r.warmPlace() {
		t.Error("no place for a warm Pod once no game waits and the room has some")
	}
}
