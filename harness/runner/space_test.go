package runner

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox/local"
)

// waitWatch stops the tournament the first time it waits for space.
type waitWatch struct {
	mu     sync.Mutex
	waited int
	stop   context.CancelFunc
}

func (w *waitWatch) Start(int, int)                                     {}
func (w *waitWatch) GameDone(tournament.Record, string, string, string) {}
func (w *waitWatch) Finish()                                            {}
func (w *waitWatch) WaitingForSpace(string, int64, int64) {
	w.mu.Lock()
	w.waited++
	w.mu.Unlock()
	w.stop()
}

// A tournament whose directory runs short of space starts no game it may not
// finish: it waits and says so; no game is scored from a partial record; run
// again once space is freed, it completes.
func TestLowSpaceWaitsAndResumeCompletes(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	dir := filepath.Join(mnt, "t")
	bots := []*submission.Bot{fixtureBot(t, "fresh-10m"), fixtureBot(t, "shuffle")}
	o := options(t, dir, bots, &local.Backend{Dir: t.TempDir()}, "local")
	o.Config.Rules = map[string]string{"maxPlies": "8"}
	o.Config.Evidence = transcript.Evidence{Keep: transcript.KeepChanged, Budget: 20 << 20}
	o.Concurrency, o.MinFree, o.SpacePoll = 1, 4<<20, 20*time.Millisecond
	// 4 MiB + 20 MiB + 32 MiB: the first game starts on 64 MiB, the second
	// does not on what the first left.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &waitWatch{stop: cancel}
	o.Progress = w
	sum, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if w.waited != 1 || !sum.Interrupted || sum.Done != 1 || sum.Pending != 1 {
		t.Fatalf("waited %d times; %+v", w.waited, sum)
	}
	st, err := tournament.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Games {
		if g.Status == tournament.Running {
			t.Fatalf("game %d left running", g.ID)
		}
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, "size=256m"); err != nil {
		t.Fatalf("grow the tmpfs: %v", err)
	}
	o.Progress = nil
	sum, err = Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 2 || sum.Pending != 0 || sum.Unplayed != 0 {
		t.Fatalf("after space was freed: %+v", sum)
	}
}
