package distrib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
	// ackWait is the queue's: a playing worker says it is still at it every
	// third of it.
	ackWait time.Duration
}

const consumerName = "workers"

// Run plays games until ctx ends. A game in play when ctx ends is handed
// back (nak) so that another worker plays it at once. While the coordinator
// cannot be reached it keeps trying.
func (w *Worker) Run(ctx context.Context) error {
	if w.Queue.worker == "" {
		return errors.New("distrib: a worker needs a queue it joined")
	}
	var cons jetstream.Consumer
	var joinWarning retryWarning
	for {
		var err error
		if cons, err = w.Queue.games.Consumer(ctx, consumerName); err == nil {
			break
		}
		if ctx.Err() != nil || w.Queue.nc.IsClosed() {
			return fmt.Errorf("join the games queue: %w", err)
		}
		joinWarning.warn("distrib: the games queue cannot be reached; trying again", err)
		sleep(ctx, time.Second)
	}
	w.ackWait = cons.CachedInfo().Config.AckWait
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
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					if w.Queue.nc.IsClosed() {
						errs <- fmt.Errorf("fetch a game: %w", err)
						return
					}
					warned.warn("distrib: fetching a game failed; trying again", err)
					sleep(ctx, time.Second)
					continue
				}
				warned.reset()
				for m := range batch.Messages() {
					if err := w.handle(ctx, m); err != nil {
						errs <- err
						return
					}
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

// handle plays one game: in-progress acks while it plays, the archive to the
// worker's upload bucket, the result published, then the ack. Only then is
// the game done; a worker that dies before loses nothing.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg) error {
	q := w.Queue
	var j Job
	if err := json.Unmarshal(m.Data(), &j); err != nil {
		// Not a game: it can never be played; keep it out of the queue.
		slog.Warn("distrib: dropped a message that is not a game", "err", err)
		return m.Term()
	}
	meta, err := m.Metadata()
	if err != nil {
		return err
	}
	if wait := time.Until(j.NotBefore); wait > 0 {
		return m.NakWithDelay(wait)
	}
	if data, err := json.Marshal(Playing{Game: j.Game, Attempt: j.Attempt, Worker: q.worker}); err == nil {
		q.nc.Publish(playingSubject(q.tournament, q.worker), data) // progress only: a lost notice costs nothing
	}
	alive := make(chan struct{})
	go func() {
		t := time.NewTicker(max(w.ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-alive:
				return
			case <-t.C:
				m.InProgress() // a lost one is retried at the next tick
			}
		}
	}()
	archive, playErr := w.Play(ctx, j)
	close(alive)
	if ctx.Err() != nil {
		// Stopping: hand the game back for another worker, now.
		m.Nak() // if it is lost, the ack wait hands the game on
		return nil
	}
	// The game is played: its result is delivered even if a stop comes now,
	// unless the coordinator cannot be reached (then the stop wins, and the
	// game is left to its ack wait).
	stopping := ctx
	ctx = context.WithoutCancel(ctx)
	res := Result{Tournament: j.Tournament, Game: j.Game, Attempt: j.Attempt, Worker: q.worker, Delivered: meta.NumDelivered, Machine: w.Machine}
	if playErr != nil {
		res.Error = playErr.Error()
	} else {
		res.Object = fmt.Sprintf("game-%d-attempt-%d-%d", res.Game, res.Attempt, res.Delivered)
		if err := w.retry(ctx, stopping, "upload game", j.Game, func(ctx context.Context) error {
			_, err := q.upload.PutBytes(ctx, res.Object, archive)
			return err
		}); err != nil {
			return nil // left to the ack wait: another worker plays it
		}
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := w.retry(ctx, stopping, "publish the result of game", j.Game, func(ctx context.Context) error {
		_, err := q.js.Publish(ctx, resultsSubject(q.tournament, q.worker), data, jetstream.WithMsgID(fmt.Sprintf("%s-%d-%d-%d", res.Worker, res.Game, res.Attempt, res.Delivered)))
		return err
	}); err != nil {
		return nil
	}
	// A lost ack costs a second play of the game, which the coordinator
	// does not count twice.
	if err := m.DoubleAck(ctx); err != nil {
		slog.Warn("distrib: a game's ack was lost; it may be played again", "game", j.Game, "err", err)
	}
	return nil
}

// retry runs op until it succeeds, for up to w.Deliver: the coordinator may
// be restarting, or the link down for a while. Each try has its own time;
// no try starts after stopping ends.
func (w *Worker) retry(ctx, stopping context.Context, what string, game int, op func(context.Context) error) error {
	deadline := time.Now().Add(w.Deliver)
	for {
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
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
