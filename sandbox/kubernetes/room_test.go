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
