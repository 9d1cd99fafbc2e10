package tournament

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/arenabots/arena/harness/distrib"
)

// Exchange is the queue a tournament's games reach workers through, with the
// one collector of its results, which hands each result to the run that
// published its game. A queue is either one tournament's (Sole: arena
// tournament --listen) or shared by many that run at once (Shared: an
// event's scrimmages, ladder pairs and final), whose games then need
// numbers of their own (Options.JobOffset).
type Exchange struct {
	Queue  *distrib.Queue
	shared bool
	// Suspend shuts a worker out of the queue (Coordinator.Suspend): nil
	// refuses what it hands in from then on, and nothing more.
	Suspend func(distrib.Suspension) error
	// Suspended says whether a worker is suspended now (the workers
	// directory: a readmitted worker is not); nil: whether Suspend was
	// called for it.
	Suspended func(worker string) bool

	mu     sync.Mutex
	routes map[int]*route
	out    map[string]bool // the workers suspended
	done   chan struct{}   // closed when a shared exchange's Collect ends
	err    error
}

// route takes the results of one run's games.
type route struct {
	in   chan delivery
	gone chan struct{} // closed when the run stops taking results
}

// delivery is a result on its way to its run, which answers on taken.
type delivery struct {
	r       distrib.Result
	archive []byte
	taken   chan error
}

// Sole is the exchange of a queue one tournament owns: a result of no game
// in flight is stale (taken already, an earlier attempt's) and dropped.
func Sole(q *distrib.Queue) *Exchange { return &Exchange{Queue: q} }

// Shared is the exchange of a queue several tournaments play through at
// once; its owner runs Collect for as long as they play. A result of no
// game in flight may be of a tournament that has not resumed yet: it stays
// queued for a while (distrib.ErrNotYet).
func Shared(q *distrib.Queue) *Exchange {
	return &Exchange{Queue: q, shared: true, done: make(chan struct{})}
}

// Collect takes the results and hands each to its run until ctx ends or a
// run fails to record one (its error).
func (x *Exchange) Collect(ctx context.Context) error {
	err := x.Queue.Collect(ctx, func(r distrib.Result, archive []byte) error {
		x.mu.Lock()
		rt := x.routes[r.Game]
		x.mu.Unlock()
		if rt == nil {
			if x.shared {
				return distrib.ErrNotYet
			}
			slog.Info("tournament: a result already taken, or of an earlier attempt", "game", r.Game, "attempt", r.Attempt, "worker", r.Worker)
			return nil
		}
		d := delivery{r: r, archive: archive, taken: make(chan error, 1)}
		select {
		case rt.in <- d:
		case <-rt.gone:
			return distrib.ErrNotYet
		case <-ctx.Done():
			return distrib.ErrNotYet // the next run takes it
		}
		return <-d.taken
	})
	if x.shared {
		x.mu.Lock()
		x.err = err
		x.mu.Unlock()
		close(x.done)
	}
	return err
}

// open is a run's route for the games it publishes (add); close it when
// the run stops taking results.
func (x *Exchange) open() *route {
	return &route{in: make(chan delivery), gone: make(chan struct{})}
}

func (x *Exchange) add(rt *route, game int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.routes == nil {
		x.routes = map[int]*route{}
	}
	x.routes[game] = rt
}

func (x *Exchange) remove(rt *route, game int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.routes[game] == rt {
		delete(x.routes, game)
	}
}

func (x *Exchange) close(rt *route) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for g, r := range x.routes {
		if r == rt {
			delete(x.routes, g)
		}
	}
	close(rt.gone)
}

// ended says whether a shared exchange's collector has stopped, and why.
func (x *Exchange) ended() (<-chan struct{}, func() error) {
	return x.done, func() error {
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.err == nil {
			return errors.New("the event's result collector stopped")
		}
		return x.err
	}
}

// isSuspended says whether worker is suspended.
func (x *Exchange) isSuspended(worker string) bool {
	if x.Suspended != nil {
		return x.Suspended(worker)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.out[worker]
}

// suspend shuts s.Worker out once; first says it was not already.
func (x *Exchange) suspend(s distrib.Suspension) (first bool, err error) {
	if x.isSuspended(s.Worker) {
		return false, nil
	}
	x.mu.Lock()
	if x.out == nil {
		x.out = map[string]bool{}
	}
	x.out[s.Worker] = true
	x.mu.Unlock()
	if x.Suspend != nil {
		err = x.Suspend(s)
	}
	return true, err
}
