package distrib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Collect hands each result to accept with its archive, and removes it
// once accept returns nil (ErrNotYet: later). Each result is checked as it
// comes (check: its hand-out, worker, game, attempt and upload name; its
// attempt still the game's current one; no result of its hand-out taken
// already) before anything of it is fetched; archives are fetched
// fetchLanes at a time, so that one large upload delays no other worker's
// result; accept is called for one result at a time. An error from accept
// stops Collect and leaves the result queued. Collect returns when ctx
// ends. A result may come twice (a worker that published it died before
// its ack; a coordinator that died before removing it; a worker cut off
// past its ack wait whose game another worker played too): accept must
// take a game it already holds without counting it again. An archive that
// does not hold (a description with no data behind it, a size or digest
// that does not match) is handed on with Lost set: that result cannot
// count, and its sender lied.
func (q *Queue) Collect(ctx context.Context, accept func(Result, io.Reader) error) error {
	cons, err := q.js.CreateOrUpdateConsumer(ctx, resultsStream(q.tournament), jetstream.ConsumerConfig{
		Durable: "coordinator", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxDeliver: -1,
	})
	if err != nil {
		return fmt.Errorf("follow the results: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &collector{q: q, accept: accept, lanes: make(chan struct{}, fetchLanes)}
	fail := func(err error) {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxCollecting)
	var w retryWarning
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				break
			}
			if q.nc.IsClosed() {
				fail(fmt.Errorf("fetch a result: %w", err))
				break
			}
			w.warn("distrib: fetching results failed; trying again", err)
			sleep(ctx, time.Second)
			continue
		}
		taken := false
		for m := range batch.Messages() {
			taken = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				if err := c.take(ctx, m); err != nil {
					fail(err)
				}
			}()
		}
		if !taken {
			<-slots
		}
		if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) {
			w.warn("distrib: fetching results failed; trying again", err)
		}
	}
	wg.Wait()
	return c.err
}

// maxCollecting is how many results Collect works on at once (checked,
// fetched, waiting for accept).
const maxCollecting = 64

// collector is one Collect's state: its fetch lanes, and accept called
// one result at a time.
type collector struct {
	q      *Queue
	accept func(Result, io.Reader) error
	lanes  chan struct{}

	acceptMu sync.Mutex
	mu       sync.Mutex
	err      error // the first error that stopped Collect
}

// ErrNotYet is what Collect's accept returns for a result it cannot place
// yet (a queue several tournaments share: the game's tournament has not
// resumed): the result stays queued and comes again after NotYetDelay, at
// most NotYetTimes times; then it is dropped as stale.
var ErrNotYet = errors.New("not yet")

const (
	NotYetDelay = 5 * time.Second
	NotYetTimes = 120
)

// handedIn ends the hand-out a result names, as soon as the result is in:
// its fetch and judging may take longer than the ack wait, and a hand-out
// still held then would be taken back from a holder gone "silent" and its
// game handed out again, to be played for nothing.
func (q *Queue) handedIn(r Result) {
	d := q.dispatch
	if d == nil || r.Forged != "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.heard[r.Worker] = now
	if h := d.held[r.Handout]; h != nil && h.worker == r.Worker {
		d.timed(now.Sub(h.since))
		d.release(r.Handout, now)
	}
}

func (c *collector) take(ctx context.Context, m jetstream.Msg) error {
	q := c.q
	var r Result
	if err := json.Unmarshal(m.Data(), &r); err != nil {
		slog.Warn("distrib: dropped a message that is not a result", "err", err)
		return m.Term()
	}
	// The subject names the worker: its rights allow it no other.
	if w := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]; r.Worker != w {
		slog.Warn("distrib: dropped a result that names another worker than its sender", "sender", w, "named", r.Worker)
		return m.Term()
	}
	// Results count against their sender's allowance as its asks and news
	// do: a flood is refused unread and struck, whatever it names. A result
	// delivered again (its tournament had not resumed) was counted once.
	if d := q.dispatch; d != nil {
		if meta, err := m.Metadata(); err != nil || meta.NumDelivered <= 1 {
			d.mu.Lock()
			ok := d.spend(d.handIns, r.Worker, time.Now())
			d.mu.Unlock()
			if !ok {
				return m.Term()
			}
		}
	}
	// While it is fetched, and waits to be judged, the result is not
	// handed to this collector again.
	stop := inProgress(m)
	defer stop()
	q.check(ctx, &r)
	q.handedIn(r)
	var archive io.Reader
	if r.Object != "" && r.Forged == "" && !r.Stale {
		select {
		case c.lanes <- struct{}{}:
		case <-ctx.Done():
			return nil // left queued for the next run
		}
		f, lost, err := q.fetch(ctx, r)
		<-c.lanes
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// The coordinator's side failed: the result is taken again
			// in a while, and says nothing of its sender.
			slog.Warn("distrib: a result's archive could not be fetched; trying again", "game", r.Game, "worker", r.Worker, "err", err)
			return m.NakWithDelay(NotYetDelay)
		}
		r.Lost = lost
		if f != nil {
			defer os.Remove(f.Name())
			defer f.Close()
			archive = f
		}
	}
	// A result taken is finished even if a stop came meanwhile.
	done := context.WithoutCancel(ctx)
	c.acceptMu.Lock()
	err := c.accept(r, archive)
	c.acceptMu.Unlock()
	if errors.Is(err, ErrNotYet) {
		if meta, merr := m.Metadata(); merr != nil || meta.NumDelivered < NotYetTimes {
			return m.NakWithDelay(NotYetDelay)
		}
		slog.Warn("distrib: dropped a result no tournament took", "game", r.Game, "attempt", r.Attempt, "worker", r.Worker)
	} else if err != nil {
		return err
	}
	if err := q.taken(done, r); err != nil {
		return err
	}
	if r.Forged == "" && !r.Stale {
		// Its attempt is over, whatever accept made of it: a copy queued
		// again while its holder was silent leaves the queue, and no one
		// plays the game for nothing. A game played again is a new attempt.
		q.Withdraw(r.Game, r.Attempt)
	}
	if q.dispatch != nil {
		q.dispatch.tally(r)
	}
	if r.Object != "" {
		// Judged: its archive goes, read or not.
		if err := q.removeUpload(done, r.Worker, r.Object); err != nil {
			return fmt.Errorf("remove game %d's archive: %w", r.Game, err)
		}
	}
	return m.DoubleAck(done)
}

// inProgress tells the server, every third of the results' ack wait, that
// m is still worked on, until stop.
func inProgress(m jetstream.Msg) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				m.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// taken marks a result's hand-out as taken in the coordinator's record: a
// result that names it again is stale, and not fetched.
func (q *Queue) taken(ctx context.Context, r Result) error {
	d := q.dispatch
	if d == nil || r.Forged != "" || r.Handout == "" {
		return nil
	}
	e, err := d.kv.Get(ctx, r.Handout)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the record of hand-out %s: %w", r.Handout, err)
	}
	var h handoutRecord
	if json.Unmarshal(e.Value(), &h) != nil || h.Taken {
		return nil
	}
	h.Taken = true
	rec, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if _, err := d.kv.Put(ctx, r.Handout, rec); err != nil {
		return fmt.Errorf("mark hand-out %s taken: %w", r.Handout, err)
	}
	return nil
}

// check says whether a result is of a hand-out to its sender (Forged if
// not, Stale if of one no longer known), and sets Delivered from the
// coordinator's own record.
func (q *Queue) check(ctx context.Context, r *Result) {
	d := q.dispatch
	if d == nil {
		return
	}
	thisRun := strings.HasPrefix(r.Handout, q.run+"-")
	e, err := d.kv.Get(ctx, r.Handout)
	if r.Handout == "" || err != nil {
		if errors.Is(err, jetstream.ErrInvalidKey) || r.Handout == "" || thisRun && errors.Is(err, jetstream.ErrKeyNotFound) {
			r.Forged = fmt.Sprintf("its result names hand-out %q, which the coordinator never made", r.Handout)
		} else {
			r.Stale = true // an earlier run's, since forgotten
		}
		return
	}
	var h handoutRecord
	if err := json.Unmarshal(e.Value(), &h); err != nil {
		r.Stale = true
		return
	}
	switch {
	case h.Worker != r.Worker:
		r.Forged = fmt.Sprintf("its result names hand-out %s, which went to worker %s", r.Handout, h.Worker)
	case h.Game != r.Game || h.Attempt != r.Attempt:
		r.Forged = fmt.Sprintf("its result says game %d (attempt %d) of hand-out %s, which was game %d (attempt %d)", r.Game, r.Attempt, r.Handout, h.Game, h.Attempt)
	case r.Object != "" && r.Object != resultObject(r.Handout):
		r.Forged = fmt.Sprintf("its result names upload %q, not %q", r.Object, resultObject(r.Handout))
	default:
		// Its own, and as it was handed out: stale if a result of it was
		// taken already, its upload swept, or its attempt is no longer the
		// game's (withdrawn, or a later one published).
		r.Delivered = h.Delivered
		d.mu.Lock()
		r.Stale = h.Taken || d.swept[r.Object] || d.withdrawn[gameKey{r.Game, r.Attempt}] || d.latest[r.Game] > r.Attempt
		d.mu.Unlock()
	}
}

// retryWarning logs an error of a loop that tries again, once until
// another error comes: a link down for an hour is one line, not thousands.
type retryWarning struct{ last string }

func (w *retryWarning) warn(msg string, err error) {
	if err.Error() != w.last {
		slog.Warn(msg, "err", err)
		w.last = err.Error()
	}
}

func (w *retryWarning) reset() { w.last = "" }
