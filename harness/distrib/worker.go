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
	Queue *Queue
	Name  string
	Slots int
	Play  Player
	// ackWait is the queue's: a playing worker says it is still at it every
	// third of it.
	ackWait time.Duration
}

const consumerName = "workers"

// Run plays games until ctx ends. A game in play when ctx ends is handed
// back (nak) so that another worker plays it at once.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := w.Queue.games.Consumer(ctx, consumerName)
	if err != nil {
		return fmt.Errorf("join the games queue: %w", err)
	}
	w.ackWait = cons.CachedInfo().Config.AckWait
	var wg sync.WaitGroup
	errs := make(chan error, max(w.Slots, 1))
	for range max(w.Slots, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					errs <- fmt.Errorf("fetch a game: %w", err)
					return
				}
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
// object store, the result published, then the ack. Only then is the game
// done; a worker that dies before loses nothing.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg) error {
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
	alive := make(chan struct{})
	go func() {
		t := time.NewTicker(max(w.ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-alive:
				return
			case <-t.C:
				m.InProgress()
			}
		}
	}()
	archive, playErr := w.Play(ctx, j)
	close(alive)
	if ctx.Err() != nil {
		// Stopping: hand the game back for another worker, now.
		return m.Nak()
	}
	// The game is played: its result is delivered even if a stop comes now.
	ctx = context.WithoutCancel(ctx)
	res := Result{Tournament: j.Tournament, Game: j.Game, Attempt: j.Attempt, Worker: w.Name, Delivered: meta.NumDelivered}
	if playErr != nil {
		res.Error = playErr.Error()
	} else {
		res.Object = fmt.Sprintf("game-%d-attempt-%d-%s-%d", j.Game, j.Attempt, unsafeName.ReplaceAllString(w.Name, "_"), meta.NumDelivered)
		if _, err := w.Queue.store.PutBytes(ctx, res.Object, archive); err != nil {
			return fmt.Errorf("upload game %d: %w", j.Game, err)
		}
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if _, err := w.Queue.js.Publish(ctx, w.Queue.resultsSubject(), data, jetstream.WithMsgID(res.Object+res.Error)); err != nil {
		return fmt.Errorf("publish the result of game %d: %w", j.Game, err)
	}
	return m.DoubleAck(ctx)
}

// Collect hands each result to accept with its archive, in order, and
// removes it once accept returns nil. An error from accept stops Collect and
// leaves the result queued. Collect returns when ctx ends. A result may come
// twice (a worker that published it died before its ack; a coordinator that
// died before removing it): accept must take a game it already holds without
// counting it again.
func (q *Queue) Collect(ctx context.Context, accept func(Result, []byte) error) error {
	cons, err := q.js.CreateOrUpdateConsumer(ctx, q.results.CachedInfo().Config.Name, jetstream.ConsumerConfig{
		Durable: "coordinator", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxDeliver: -1,
	})
	if err != nil {
		return fmt.Errorf("follow the results: %w", err)
	}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fetch a result: %w", err)
		}
		for m := range batch.Messages() {
			var r Result
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				slog.Warn("distrib: dropped a message that is not a result", "err", err)
				m.Term()
				continue
			}
			var archive []byte
			if r.Object != "" {
				if archive, err = q.store.GetBytes(ctx, r.Object); err != nil {
					return fmt.Errorf("download game %d: %w", r.Game, err)
				}
			}
			if err := accept(r, archive); err != nil {
				return err
			}
			// A result taken is finished even if a stop came meanwhile.
			done := context.WithoutCancel(ctx)
			if r.Object != "" {
				if err := q.store.Delete(done, r.Object); err != nil {
					return fmt.Errorf("remove game %d's archive: %w", r.Game, err)
				}
			}
			if err := m.DoubleAck(done); err != nil {
				return err
			}
		}
	}
	return nil
}
