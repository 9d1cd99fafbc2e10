package runner

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
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
	Suspend func(roster.Suspension) error
	// Suspended says whether a worker is suspended now (the workers
	// directory: a readmitted worker is not); nil: whether Suspend was
	// called for it.
	Suspended func(worker string) bool
	// Deadline is how long a worker may hold a game without a result
	// (nil: GameDeadline).
	Deadline func(match.Config) time.Duration
	// Judged, when set, is told what became of each result a worker
	// handed in, once the run that published its game judged it (one call
	// at a time).
	Judged func(Judgement)
	// Checks say how often the coordinator plays a worker's game again
	// itself to check its result (see Checks).
	Checks Checks

	mu      sync.Mutex
	results map[string]int // each worker's results judged sound (sample)
	routes  map[int]*route
	out     map[string]bool // the workers suspended
	done    chan struct{}   // closed when a shared exchange's Collect ends
	err     error
}

// route takes the results of one run's games.
type route struct {
	in   chan delivery
	gone chan struct{} // closed when the run stops taking results
}

// delivery is a result on its way to its run, which answers on taken.
type delivery struct {
	r       distrib.Result
	archive io.Reader
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
	err := x.Queue.Collect(ctx, func(r distrib.Result, archive io.Reader) error {
		if r.Forged != "" {
			// Of no game handed to it: nothing in flight is touched, and
			// its sender is shut out.
			reason := "it handed in a result of no game it was given"
			slog.Warn("tournament: "+reason, "worker", r.Worker, "game", r.Game, "why", r.Forged)
			_, err := x.suspend(roster.Suspension{Worker: r.Worker, At: time.Now().UTC(), Game: r.Game, Reason: reason, Detail: r.Forged})
			return err
		}
		if r.Stale {
			slog.Info("tournament: a result of a hand-out no longer held", "game", r.Game, "attempt", r.Attempt, "worker", r.Worker)
			return nil
		}
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
func (x *Exchange) suspend(s roster.Suspension) (first bool, err error) {
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

// deadline is how long a worker may hold a game of cfg without a result.
func (x *Exchange) deadline(cfg match.Config) time.Duration {
	if x.Deadline != nil {
		return x.Deadline(cfg)
	}
	return GameDeadline(cfg)
}

// setupTurns is the room a game's deadline leaves for the turns its ply
// limit does not count (Code Clash's 18 setup turns, a line game's first
// answer).
const setupTurns = 64

// unlimitedTurns bounds the turns of a game that has no ply limit option.
const unlimitedTurns = 1000

// deadlineMargin is what a game's deadline allows beyond its turns: the
// containers' starts, the builds of its bots, the archive's upload.
const deadlineMargin = 2 * time.Minute

// GameDeadline is the longest a worker may hold a game of cfg without a
// result: its most turns (maxTurns), each lasting at most its wall-clock
// cap (sandbox.WallCap of the turn limit: the host's wait included) and its
// program's start, and deadlineMargin. Past it the coordinator gives the
// game to another worker and charges its holder.
func GameDeadline(cfg match.Config) time.Duration {
	return time.Duration(maxTurns(cfg))*(sandbox.WallCap(cfg.Limits.TurnTimeout)+rules.ProgramStart) + deadlineMargin
}

// maxTurns is the most turns a game of cfg can have: its ply limit, from
// its rules or the game's default, and setupTurns; unlimitedTurns for a
// game without a ply limit. It bounds both how long a worker may hold the
// game and how long the transcript it hands in may be.
func maxTurns(cfg match.Config) int {
	if opt := rules.PlyLimitOption(cfg.Game); opt != "" {
		v, ok := cfg.Rules[opt]
		if !ok {
			for _, o := range cfg.Game.Options() {
				if o.Name == opt {
					v = o.Default
				}
			}
		}
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n + setupTurns
		}
	}
	return unlimitedTurns
}

// Outcomes of a result a worker handed in (Judgement.Outcome).
const (
	// Played: the game counts.
	Played = "played"
	// HostFault: the game does not count for this attempt: its worker could
	// not play it, or it was aborted on the worker's host (charged to the
	// worker, not to the bots).
	HostFault = "fault"
	// Refused: the result claimed what is not so; its worker is suspended.
	Refused = "refused"
	// Overdue: no result came within the game's deadline; it is played
	// again elsewhere, charged to its holder.
	Overdue = "overdue"
)

// Judgement is what became of a result a worker handed in.
type Judgement struct {
	Worker  string
	Game    int // the job's number
	Outcome string
	// TurnMs is a played game's median turn, wall time as its transcript
	// says (0 for a result that did not count).
	TurnMs float64
}

// judged tells x.Judged, if set, of a result judged.
func (x *Exchange) judged(j Judgement) {
	if x.Judged != nil {
		x.Judged(j)
	}
}
