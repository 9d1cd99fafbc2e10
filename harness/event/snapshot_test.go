package event

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestASnapshotSeesTheEventAsAtItsFirstRead: the reads of a snapshot agree
// with each other while the event changes beside them, a snapshot inside
// it is the same one, and the event's changes show once it ends.
func TestASnapshotSeesTheEventAsAtItsFirstRead(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.AddTeam(ctx, "first", "", ""); err != nil {
		t.Fatal(err)
	}
	teams := func(ctx context.Context) int {
		t.Helper()
		list, err := s.Teams(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	err := s.Snapshot(ctx, func(ctx context.Context) error {
		// Begun at its first read: the team added now is seen, and until
		// then it holds no connection.
		if _, err := s.AddTeam(ctx, "second", "", ""); err != nil {
			return err
		}
		if n := s.r.Stats().InUse; n != 0 {
			return fmt.Errorf("before its first read, the snapshot holds %d connections", n)
		}
		if n := teams(ctx); n != 2 {
			return fmt.Errorf("the first read saw %d teams, want 2", n)
		}
		if n := s.r.Stats().InUse; n != 1 {
			return fmt.Errorf("after its first read, the snapshot holds %d connections, want 1", n)
		}
		if _, err := s.AddTeam(ctx, "third", "", ""); err != nil {
			return err
		}
		if n := teams(ctx); n != 2 {
			return fmt.Errorf("a later read saw %d teams: the team added after the first read, want 2", n)
		}
		return s.Snapshot(ctx, func(ctx context.Context) error {
			if n := teams(ctx); n != 2 {
				return fmt.Errorf("a snapshot inside saw %d teams, want the outer's 2", n)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := teams(ctx); n != 3 {
		t.Fatalf("after the snapshot: %d teams, want 3", n)
	}
}

// TestASnapshotEndsAtTheReadAfterItsContextDoes: a reader gone stops the
// snapshot's reads at the next one, with the context's error; so it does
// a read outside one.
func TestASnapshotEndsAtTheReadAfterItsContextDoes(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	var second error
	err := s.Snapshot(ctx, func(ctx context.Context) error {
		if _, err := s.Teams(ctx); err != nil {
			return err
		}
		cancel()
		_, second = s.Teams(ctx)
		return second
	})
	if !errors.Is(second, context.Canceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a read after the context ended: %v (the snapshot: %v), want context.Canceled", second, err)
	}
	// The connection went back to the readers clean: a new read works.
	if _, err := s.Teams(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Outside a snapshot too, a read is checked before it begins.
	if _, err := s.Teams(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a read with its context ended: %v, want context.Canceled", err)
	}
}

// TestManySnapshotsAtOnceNeverWaitOnEachOther: more snapshots than the
// store has readers, each preparing statements no one prepared yet (which
// takes a connection of its own) and reading outside the snapshot too,
// all finish.
func TestManySnapshotsAtOnceNeverWaitOnEachOther(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4*readers)
	hold := make(chan struct{})
	for i := range 4 * readers {
		wg.Go(func() {
			errs <- s.Snapshot(ctx, func(in context.Context) error {
				var n int
				if err := s.readRow(in, fmt.Sprintf(`SELECT count(*) + %d FROM teams`, i)).Scan(&n); err != nil {
					return err
				}
				<-hold // every snapshot that can be open at once is
				if err := s.readRow(in, fmt.Sprintf(`SELECT count(*) - %d FROM teams`, i)).Scan(&n); err != nil {
					return err
				}
				_, err := s.Teams(ctx) // outside the snapshot
				return err
			})
		})
	}
	time.Sleep(100 * time.Millisecond)
	close(hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestASnapshotThatPanicsLetsItsConnectionGo: a view that panics (the
// server answers it with an error and goes on) ends its snapshot, so
// that more such views than the store has readers leave every reader
// free.
func TestASnapshotThatPanicsLetsItsConnectionGo(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 * readers {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the panic did not reach the caller")
				}
			}()
			err := s.Snapshot(ctx, func(ctx context.Context) error {
				if _, err := s.Teams(ctx); err != nil {
					return err
				}
				panic("a view's defect")
			})
			t.Fatalf("the snapshot ended without its panic: %v", err)
		}()
	}
	if n := s.r.Stats().InUse; n != 0 {
		t.Fatalf("after the panics, %d connections are still held", n)
	}
	if err := s.Snapshot(ctx, func(ctx context.Context) error { _, err := s.Teams(ctx); return err }); err != nil {
		t.Fatalf("a snapshot after the panics: %v", err)
	}
}
