package runner

import (
	"context"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// remoteRun is a run whose games workers play: it publishes each pending
// game to the queue (remote_publish.go), takes and judges what workers
// hand back, checking a sample by playing it again here
// (remote_collect.go), and aborts a game whose holder let its deadline
// pass (remote_deadline.go), until no game is left in flight.
type remoteRun struct {
	*run
	x       *Exchange
	q       *distrib.Queue
	rt      *route
	facts   Facts
	objects []string // each bot's object in the queue's store, by index

	// held guards holders: who was handed each game, and when. A game's
	// deadline runs from its hand-out, and the holder of a game past it
	// is charged with it. A game waiting in the queue for a worker has no
	// deadline running.
	held    sync.Mutex
	holders map[int]handout

	// inflight is what was published for each game in flight, by its
	// job's number: a result counts only if its transcript is that game
	// (match.Bound).
	inflight map[int]published
	// checking holds the results whose games are being played again here
	// (see Checks), at most checkSlots at once; their outcomes come on
	// checked.
	checking   map[int]parked
	checked    chan checkOutcome
	checkSlots chan struct{}
	checks     sync.WaitGroup

	overdue  map[string]int // games each worker held past their deadlines
	waitSaid time.Time      // when the run last said it waits for a worker
}

// handout is a game handed out to a worker, and when.
type handout struct {
	distrib.Playing
	at time.Time
}

// published is a game in flight: its record and the match it was sent as.
type published struct {
	rec tournament.Record
	cfg match.Config
}

// parked is a result held while its check plays.
type parked struct {
	rec tournament.Record
	res transcript.Result
}

// playRemote publishes every pending game to the queue and records the
// results workers send back, each re-judged before it counts, until none is
// left (or ctx ends).
func (rn *run) playRemote(ctx context.Context) error {
	x := rn.Remote
	r := &remoteRun{
		run: rn, x: x, q: x.Queue,
		holders:    map[int]handout{},
		inflight:   map[int]published{},
		checking:   map[int]parked{},
		checked:    make(chan checkOutcome),
		checkSlots: make(chan struct{}, max(rn.Concurrency, 1)),
		overdue:    map[string]int{},
		// First said a few seconds in: workers already there take games first.
		waitSaid: time.Now().Add(waitFirstSaid - waitSaidEvery),
	}
	if err := r.upload(ctx); err != nil {
		return err
	}
	stopWatch, err := r.q.WatchPlaying(r.handedOut)
	if err != nil {
		return err
	}
	defer stopWatch()
	r.rt = x.open()
	defer x.close(r.rt)
	if err := r.publish(ctx); err != nil {
		return err
	}
	if len(r.inflight) == 0 {
		if !x.shared {
			rn.finished(r.q)
		}
		return nil
	}
	chctx, stopChecks := context.WithCancel(ctx)
	defer r.checks.Wait()
	defer stopChecks()

	// A sole queue's collector runs while this run takes results; a shared
	// one's runs for its owner.
	cctx, stop := context.WithCancel(ctx)
	collected := make(chan error, 1)
	if !x.shared {
		go func() { collected <- x.Collect(cctx) }()
	}
	err = r.loop(ctx, chctx, collected)
	stop()
	if !x.shared {
		if cerr := <-collected; err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if len(r.inflight) == 0 {
		if !x.shared {
			rn.finished(r.q)
		}
		return nil
	}
	if ctx.Err() != nil {
		// Stopped: the games in flight go back to pending; a worker still
		// playing one publishes a result the next run takes.
		for _, p := range r.inflight {
			if err := rn.st.Release(context.WithoutCancel(ctx), p.rec.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// loop takes results, checks' outcomes and the clock's ticks until no game
// is in flight, the collector fails, the exchange ends or ctx does.
func (r *remoteRun) loop(ctx, chctx context.Context, collected chan error) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	ended, why := r.x.ended()
	for len(r.inflight) > 0 {
		select {
		case now := <-tick.C:
			if err := r.expire(ctx, now); err != nil {
				return err
			}
		case d := <-r.rt.in:
			err := r.accept(ctx, chctx, d.r, d.archive)
			d.taken <- err
			if err != nil {
				return err
			}
		case c := <-r.checked:
			if err := r.conclude(ctx, c); err != nil {
				return err
			}
		case err := <-collected:
			collected <- err
			return err
		case <-ended:
			if ctx.Err() == nil {
				return why()
			}
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}
