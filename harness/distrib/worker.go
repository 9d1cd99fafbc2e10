package distrib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/arenabots/arena/harness/metrics"
)

// Player plays one game on the worker's own machine and returns its match
// directory as an archive. An error is a host fault: the game is reported
// unplayed for this attempt.
type Player func(ctx context.Context, j Job) ([]byte, error)

// Worker pulls games and plays them, one per slot.
type Worker struct {
	Queue *Queue // joined as this worker (Join)
	Slots int
	Play  Player
	// Machine goes with every result: what the worker says of its machine.
	Machine json.RawMessage
	// Deliver is how long a played game's result is tried for while the
	// coordinator cannot be reached (default 10 minutes); after that the
	// game is left to its ack wait and another worker.
	Deliver time.Duration
	// Metrics, when set, count the games taken and what became of them.
	Metrics *metrics.Worker
}

// Run plays games until ctx ends. A game in play when ctx ends is handed
// back so that another worker plays it at once. While the coordinator
// cannot be reached it keeps trying.
func (w *Worker) Run(ctx context.Context) error {
	if w.Queue.worker == "" {
		return errors.New("distrib: a worker needs a queue it joined")
	}
	if w.Deliver <= 0 {
		w.Deliver = 10 * time.Minute
	}
	var wg sync.WaitGroup
	errs := make(chan error, max(w.Slots, 1))
	for range max(w.Slots, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var warned retryWarning
			for ctx.Err() == nil {
				j, ok, err := w.Queue.next(ctx)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					if w.Queue.nc.IsClosed() {
						errs <- fmt.Errorf("ask for a game: %w", err)
						return
					}
					warned.warn("distrib: the coordinator cannot be reached; asking again", err)
					sleep(ctx, time.Second)
					continue
				}
				warned.reset()
				if !ok {
					continue // none yet: ask again
				}
				if err := w.handle(ctx, j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// next asks the coordinator for a game: ok is false when it has none yet.
func (q *Queue) next(ctx context.Context) (Job, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, longPoll+10*time.Second)
	defer cancel()
	m, err := q.nc.RequestWithContext(rctx, wantSubject(q.tournament, q.worker), nil)
	if err != nil {
		return Job{}, false, err
	}
	if len(m.Data) == 0 {
		return Job{}, false, nil
	}
	var j Job
	if err := json.Unmarshal(m.Data, &j); err != nil || j.Handout == "" {
		return Job{}, false, fmt.Errorf("the coordinator's answer is not a game: %q", m.Data)
	}
	return j, true, nil
}

// tell sends the coordinator news of a game this worker holds.
func (q *Queue) tell(j Job, back bool) {
	data, err := json.Marshal(Notice{Handout: j.Handout, Game: j.Game, Attempt: j.Attempt, Back: back})
	if err == nil {
		q.nc.Publish(playingSubject(q.tournament, q.worker), data) // a lost one is sent again, or the game's hold runs out
	}
}

// handle plays one game: news that it still plays while it plays, the
// archive to the worker's upload bucket, then the result published. The
// coordinator ends the game when it takes the result; a worker that dies
// before loses nothing.
func (w *Worker) handle(ctx context.Context, j Job) error {
	q := w.Queue
	w.Metrics.Took()
	released := metrics.GivenUp
	defer func() { w.Metrics.Released(released) }()
	alive := make(chan struct{})
	go func() {
		t := time.NewTicker(max(j.News, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-alive:
				return
			case <-t.C:
				q.tell(j, false)
			}
		}
	}()
	// News goes on until the result is handed in: an upload of a large
	// archive is part of the game's time.
	defer close(alive)
	archive, playErr := w.Play(ctx, j)
	if ctx.Err() != nil {
		// Stopping: hand the game back for another worker, now.
		released = metrics.HandedBack
		q.tell(j, true) // if it is lost, the hold runs out and the game goes on
		return nil
	}
	// The game is played: its result is delivered even if a stop comes now,
	// unless the coordinator cannot be reached (then the stop wins, and the
	// game is left to its hold running out).
	stopping := ctx
	ctx = context.WithoutCancel(ctx)
	res := Result{Tournament: j.Tournament, Game: j.Game, Attempt: j.Attempt, Worker: q.worker, Handout: j.Handout, Delivered: j.Delivered, Machine: w.Machine}
	switch {
	case playErr != nil:
		res.Error = playErr.Error()
		if len(res.Error) > maxResultError {
			res.Error = strings.ToValidUTF8(res.Error[:maxResultError], "") + "..."
		}
	case j.MaxArchive > 0 && uint64(len(archive)) > j.MaxArchive:
		res.Error = fmt.Sprintf("its match directory's archive is %d bytes, more than the %d the coordinator takes", len(archive), j.MaxArchive)
	default:
		res.Object = resultObject(j.Handout)
		if err := w.retry(ctx, stopping, "upload game", j.Game, transferTime(uint64(len(archive))), func(ctx context.Context) error {
			return putObject(ctx, q.putJS, uploadBucket(q.tournament, q.worker), res.Object, archive)
		}); err != nil {
			return nil // left to its hold running out: another worker plays it
		}
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if len(data) > MaxResultMessage-len(j.Handout)-256 {
		// Room for its message id: what it says of its machine goes first.
		res.Machine = nil
		if data, err = json.Marshal(res); err != nil {
			return err
		}
	}
	if err := w.retry(ctx, stopping, "publish the result of game", j.Game, tryTime, func(ctx context.Context) error {
		_, err := q.js.Publish(ctx, resultsSubject(q.tournament, q.worker), data, jetstream.WithMsgID(j.Handout))
		return err
	}); err != nil {
		return nil
	}
	released = metrics.HandedIn
	return nil
}

// tryTime is how long a try of what a worker sends may take, an upload's
// aside (transferTime).
const tryTime = 30 * time.Second

// retry runs op until it succeeds, for up to w.Deliver: the coordinator may
// be restarting, or the link down for a while. Each try has its own time,
// try; no try starts after stopping ends.
func (w *Worker) retry(ctx, stopping context.Context, what string, game int, try time.Duration, op func(context.Context) error) error {
	deadline := time.Now().Add(w.Deliver)
	for {
		tctx, cancel := context.WithTimeout(ctx, try)
		err := op(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || w.Queue.nc.IsClosed() || stopping.Err() != nil {
			slog.Error("distrib: gave up; the game goes to another worker", "what", what, "game", game, "err", err)
			return err
		}
		slog.Warn("distrib: trying again", "what", what, "game", game, "err", err)
		sleep(stopping, 2*time.Second)
	}
}
