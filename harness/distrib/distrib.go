// Package distrib spreads a tournament's games over machines through NATS
// JetStream: the coordinator hands each unplayed game to a worker that asks
// for one (one request per free slot), and records the hand-out; the worker
// says it still plays it while it does, puts the match directory in its own
// upload bucket and publishes a result naming it on a results stream; the
// coordinator takes results in order. The queue costs one round trip per
// game, never per turn: a game is played wholly on the worker's machine.
//
// Every connection is TLS with a user key per worker, whose rights stop at
// asking for games, speaking of its own, handing in its own results and
// reading the bots (WorkerPermissions): no stream's acknowledgement, no
// consumer, no bucket but its own uploads.
//
// It must never count a result twice, nor drop a game: a game ends only
// when the coordinator takes a result of its hand-out, so a worker that
// dies or lies loses nothing (the game goes to another worker once its
// holder is silent for an ack wait). It does not judge results; the
// coordinator re-judges each one (replay) before it counts.
package distrib

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/arenabots/arena/harness/roster"
)

// Job is one game to play.
type Job struct {
	Tournament string `json:"tournament"`
	Game       int    `json:"game"`
	Attempt    int    `json:"attempt"`
	// Spec is the game as the tournament describes it (bots by hash, seed,
	// rules); distrib does not read it.
	Spec json.RawMessage `json:"spec"`
	// NotBefore delays a game an earlier attempt of which failed on a host:
	// the coordinator hands it out no sooner.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// Deadline is how long a worker may hold the game without a result,
	// from its hand-out, as its coordinator counts it (0: none told).
	// distrib does not enforce it; it flags a game held long past its
	// peers' time or half its deadline as stuck (Holding.Stuck).
	Deadline time.Duration `json:"deadline,omitempty"`
	// Set as the game is handed out: the hand-out's token (a result and
	// every notice name it), how many times the game has been handed out
	// (2 or more: an earlier worker did not finish it), and how often the
	// holder says it still plays it.
	Handout   string        `json:"handout,omitempty"`
	Delivered uint64        `json:"delivered,omitempty"`
	News      time.Duration `json:"news,omitempty"`
	// MaxArchive is the most the game's archive may weigh: the coordinator
	// fetches no more, and waits for no more, whatever an upload's
	// description claims.
	MaxArchive uint64 `json:"maxArchive,omitempty"`
}

// Result is a played game: the worker that played it, and the name of its
// match directory's archive in the worker's upload bucket.
type Result struct {
	Tournament string `json:"tournament"`
	Game       int    `json:"game"`
	Attempt    int    `json:"attempt"`
	Worker     string `json:"worker"`
	Handout    string `json:"handout"`
	// Delivered is how many times the game was handed out up to this
	// result's hand-out (2 or more: an earlier worker did not finish it),
	// as the coordinator recorded it.
	Delivered uint64 `json:"delivered"`
	Object    string `json:"object"`
	Error     string `json:"error,omitempty"` // the worker could not play it (a host fault)
	// Machine is what the worker says of its machine (its bench figures);
	// distrib does not read it.
	Machine json.RawMessage `json:"machine,omitempty"`
	// Lost, set by Collect, says why the archive could not be fetched: the
	// result cannot count.
	Lost string `json:"-"`
	// Forged, set by Collect, says why the result is of no game handed to
	// its sender: it cannot count, and its sender lied.
	Forged string `json:"-"`
	// Stale, set by Collect: the result is of a hand-out no longer known
	// (an earlier run's, expired, or its upload swept); it counts for
	// nothing, and says nothing of its sender.
	Stale bool `json:"-"`
}

// Playing says a worker has taken a game.
type Playing struct {
	Game    int    `json:"game"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
	// Returned: the game went back to the queue from Worker (it gave the
	// game back, or went silent); it waits for the next worker.
	Returned bool `json:"returned,omitempty"`
}

// Queue is one tournament's streams on a JetStream server.
type Queue struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	tournament string
	worker     string // "" for the coordinator
	results    jetstream.Stream
	bots       jetstream.ObjectStore
	botsStream jetstream.Stream    // a worker reads the bots through it (readObject)
	putJS      jetstream.JetStream // a worker writes its uploads through it (putObject)
	// run marks this coordinator's hand-outs: a token names its run.
	run      string
	dispatch *dispatcher // the coordinator's; nil for a worker
	spool    string      // where archives wait while judged

	mu      sync.Mutex
	uploads map[string]jetstream.Stream // the coordinator's view of each worker's upload bucket
}

// duplicateWindow is how long the results stream remembers a message id:
// the least the server allows. A result published twice (its ack lost) is
// taken once all the same: the second names a hand-out already taken.
const duplicateWindow = 100 * time.Millisecond

// maxStoredResults is how many of one worker's results the results stream
// holds waiting for the coordinator: an honest worker has at most one per
// game it holds.
const maxStoredResults = 1024

// DefaultAckWait is how long a game may go without news from its worker
// before it is handed to another.
const DefaultAckWait = 30 * time.Second

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// queueName is a tournament's name as its streams and subjects spell it.
func queueName(tournament string) (string, error) {
	t := unsafeName.ReplaceAllString(tournament, "_")
	if t == "" {
		return "", errors.New("distrib: a tournament needs a name")
	}
	return t, nil
}

// The names of a tournament t's streams, buckets and subjects, which
// WorkerPermissions grants rights on.
func resultsStream(t string) string          { return "RESULTS_" + t }
func botsBucket(t string) string             { return "BOTS_" + t }
func uploadBucket(t, worker string) string   { return "UP_" + t + "_W_" + worker }
func resultsSubject(t, worker string) string { return "arena." + t + ".results." + worker }
func playingSubject(t, worker string) string { return "arena." + t + ".playing." + worker }
func controlSubject(t string) string         { return "arena." + t + ".control" }

func newQueue(nc *nats.Conn, tournament string) (*Queue, error) {
	t, err := queueName(tournament)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &Queue{nc: nc, js: js, tournament: t}, nil
}

// Join binds a worker to a tournament's queue, which its coordinator made.
func Join(ctx context.Context, nc *nats.Conn, tournament, worker string) (*Queue, error) {
	if err := roster.CheckName(worker); err != nil {
		return nil, err
	}
	q, err := newQueue(nc, tournament)
	if err != nil {
		return nil, err
	}
	q.worker = worker
	if q.putJS, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(putWindow)); err != nil {
		return nil, err
	}
	if q.botsStream, err = q.js.Stream(ctx, "OBJ_"+botsBucket(q.tournament)); err != nil {
		return nil, fmt.Errorf("tournament %q has no queue here, or this worker may not see it (is its coordinator running, and was %s enrolled in it?): %w", tournament, worker, err)
	}
	if _, err = q.js.ObjectStore(ctx, uploadBucket(q.tournament, worker)); err != nil {
		return nil, fmt.Errorf("worker %s has no upload bucket (the coordinator makes one for each enrolled worker when it starts, or when the worker first connects): %w: %w", worker, ErrNoBucket, err)
	}
	return q, nil
}

// ErrNoBucket is a worker joining before its coordinator made its upload
// bucket (Join).
var ErrNoBucket = errors.New("no upload bucket")

// Open creates (or finds) the tournament's results stream and bots' object
// store, and starts handing out games: a game whose holder says nothing
// for ackWait (0: DefaultAckWait) goes to another worker. Only the
// coordinator opens; workers join. AddWorkers makes each worker's upload
// bucket. Close stops it.
func Open(ctx context.Context, nc *nats.Conn, tournament string, ackWait time.Duration) (*Queue, error) {
	q, err := newQueue(nc, tournament)
	if err != nil {
		return nil, err
	}
	var run [8]byte
	if _, err := rand.Read(run[:]); err != nil {
		return nil, err
	}
	q.run = hex.EncodeToString(run[:])
	js := q.js
	if q.putJS, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(putWindow)); err != nil {
		return nil, err
	}
	// Games were once a stream that workers acknowledged; no more.
	if err := js.DeleteStream(ctx, "GAMES_"+q.tournament); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("remove the old games stream: %w", err)
	}
	if q.results, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: resultsStream(q.tournament), Subjects: []string{resultsSubject(q.tournament, "*")},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		// A result is a few KiB; the bound counts its headers too, so no
		// worker sends a message id of megabytes.
		MaxMsgSize: MaxResultMessage,
		// Which result of a hand-out counts is the coordinator's record
		// (the hand-outs bucket), not the server's duplicate window, whose
		// ids stay in the server's memory for as long as it lasts: the
		// shortest the server allows.
		Duplicates: duplicateWindow,
		// A worker's results wait here for the coordinator: at most
		// maxStoredResults each, further ones refused to their sender.
		MaxMsgsPerSubject: maxStoredResults, Discard: jetstream.DiscardNew, DiscardNewPerSubject: true,
	}); err != nil {
		return nil, fmt.Errorf("the results stream: %w", err)
	}
	if q.bots, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: botsBucket(q.tournament), Storage: jetstream.FileStorage,
	}); err != nil {
		return nil, fmt.Errorf("the bots' store: %w", err)
	}
	if ackWait <= 0 {
		ackWait = DefaultAckWait
	}
	if err := q.startDispatch(ctx, ackWait); err != nil {
		return nil, err
	}
	return q, nil
}

// Tournament is the name of the tournament whose games this queue holds.
func (q *Queue) Tournament() string { return q.tournament }

// AddWorkers makes an upload bucket for each worker that has none.
func (q *Queue) AddWorkers(ctx context.Context, workers []string) error {
	for _, w := range workers {
		if err := roster.CheckName(w); err != nil {
			return err
		}
		if _, err := q.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: uploadBucket(q.tournament, w), Storage: jetstream.FileStorage,
			// Its archives wait here until judged: at most two results'
			// worth at once.
			MaxBytes: 2 * MaxArchive,
		}); err != nil {
			return fmt.Errorf("worker %s's upload bucket: %w", w, err)
		}
	}
	if d := q.dispatch; d != nil {
		d.mu.Lock()
		for _, w := range workers {
			if !slices.Contains(d.workers, w) {
				d.workers = append(d.workers, w)
			}
		}
		d.mu.Unlock()
	}
	return nil
}

// Publish queues a game for the next worker that asks. Publishing the same
// game and attempt again in this run is a no-op: duplicate says so. A
// coordinator that starts again starts with no game queued, and publishes
// every game that has no result.
func (q *Queue) Publish(ctx context.Context, j Job) (duplicate bool, err error) {
	d := q.dispatch
	if d == nil {
		return false, errors.New("distrib: only the coordinator queues games")
	}
	j.Tournament = q.tournament
	d.mu.Lock()
	k := gameKey{j.Game, j.Attempt}
	if d.published[k] {
		d.mu.Unlock()
		return true, nil
	}
	d.published[k] = true
	d.latest[j.Game] = max(d.latest[j.Game], j.Attempt)
	d.queue = append(d.queue, stripped(j))
	d.mu.Unlock()
	d.serve()
	return false, nil
}

// Withdraw takes a game's attempt out of the queue, and from its holder:
// the coordinator gave up on it (a new attempt is queued instead). A result
// of it that comes later is stale, and not fetched.
func (q *Queue) Withdraw(game, attempt int) {
	d := q.dispatch
	if d == nil {
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.withdrawn[gameKey{game, attempt}] = true
	d.queue = slices.DeleteFunc(d.queue, func(j Job) bool { return j.Game == game && j.Attempt == attempt })
	for tok, h := range d.held {
		if h.job.Game == game && h.job.Attempt == attempt {
			d.release(tok, now)
		}
	}
}

// Pending is how many games are queued or held by a worker, without a
// result yet.
func (q *Queue) Pending(ctx context.Context) (uint64, error) {
	d := q.dispatch
	if d == nil {
		return 0, errors.New("distrib: only the coordinator holds the games")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return uint64(len(d.queue) + len(d.held)), nil
}

// OnStrike calls fn (on a goroutine of its own) each time a worker sends
// what the protocol never sends.
func (q *Queue) OnStrike(fn func(Strike)) {
	if d := q.dispatch; d != nil {
		d.mu.Lock()
		d.onStrike = fn
		d.mu.Unlock()
	}
}

// Put stores a bot under name, unless an object of that name is there
// (bots are named by their content's hash).
func (q *Queue) Put(ctx context.Context, name string, data []byte) error {
	if _, err := q.bots.GetInfo(ctx, name); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	return putObject(ctx, q.putJS, botsBucket(q.tournament), name, data)
}

// Get reads a bot, its size and digest checked: a worker through direct
// gets alone (readObject), the coordinator through the store.
func (q *Queue) Get(ctx context.Context, name string) ([]byte, error) {
	if q.botsStream != nil {
		return readObject(ctx, q.botsStream, botsBucket(q.tournament), name)
	}
	return q.bots.GetBytes(ctx, name)
}

// factsObject holds what every worker must agree with before it plays.
const factsObject = "tournament"

// SetFacts stores the tournament's facts (its runtime, its version), which
// workers check before they join; distrib does not read them.
func (q *Queue) SetFacts(ctx context.Context, data []byte) error {
	return putObject(ctx, q.putJS, botsBucket(q.tournament), factsObject, data)
}

// Facts reads what SetFacts stored.
func (q *Queue) Facts(ctx context.Context) ([]byte, error) {
	data, err := q.Get(ctx, factsObject)
	if err != nil {
		return nil, fmt.Errorf("the tournament's facts: %w", err)
	}
	return data, nil
}

// TakeBack puts every game the coordinator handed to worker back in the
// queue at once (a suspended worker's), forgets its strikes, and returns
// how many games came back; none on a worker's queue.
func (q *Queue) TakeBack(worker string) int {
	if q.dispatch == nil {
		return 0
	}
	return q.dispatch.takeBack(worker)
}

// WatchPlaying calls fn as the coordinator hands games to workers, and as
// games come back to the queue from them (Playing.Returned), until stop is
// called.
func (q *Queue) WatchPlaying(fn func(Playing)) (stop func(), err error) {
	d := q.dispatch
	if d == nil {
		return nil, errors.New("distrib: only the coordinator hands out games")
	}
	d.mu.Lock()
	d.watch = append(d.watch, fn)
	i := len(d.watch) - 1
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		d.watch = slices.Clone(d.watch)
		d.watch[i] = func(Playing) {}
		d.mu.Unlock()
	}, nil
}

// Finished tells the workers the tournament has no game left for them.
func (q *Queue) Finished() error {
	if err := q.nc.Publish(controlSubject(q.tournament), []byte("finished")); err != nil {
		return err
	}
	return q.nc.FlushTimeout(5 * time.Second)
}

// TellSuspended tells a worker it is suspended, and why, before the queue
// shuts it out.
func (q *Queue) TellSuspended(s roster.Suspension) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := q.nc.Publish(controlSubject(q.tournament), data); err != nil {
		return err
	}
	return q.nc.FlushTimeout(5 * time.Second)
}

// Control is what the coordinator tells its workers: the tournament is
// over, or a worker is suspended.
type Control struct {
	Finished  bool
	Suspended *roster.Suspension
}

// OnControl calls fn with each word from the coordinator, until stop.
func (q *Queue) OnControl(fn func(Control)) (stop func(), err error) {
	sub, err := q.nc.Subscribe(controlSubject(q.tournament), func(m *nats.Msg) {
		if string(m.Data) == "finished" {
			fn(Control{Finished: true})
			return
		}
		var s roster.Suspension
		if json.Unmarshal(m.Data, &s) == nil && s.Worker != "" {
			fn(Control{Suspended: &s})
		}
	})
	if err != nil {
		return nil, err
	}
	return func() { sub.Unsubscribe() }, nil
}

// Shut suspends a worker of queue q: it is recorded in the workers
// directory dir (Suspend), the worker is told, the games it holds go back
// to the queue at once, and the server (nil: an
// organizer's own, whose rights arena does not set) lets it in no more,
// closing its connection.
func Shut(q *Queue, srv *Server, dir string, s roster.Suspension) error {
	if err := roster.Suspend(dir, s); err != nil {
		return err
	}
	// Told first: once shut out, it hears nothing.
	if err := q.TellSuspended(s); err != nil {
		slog.Warn("distrib: tell a suspended worker", "worker", s.Worker, "err", err)
	}
	// Its games go to the other workers at once, not after the ack wait.
	if n := q.TakeBack(s.Worker); n > 0 {
		slog.Info("distrib: the games a suspended worker held go to the others", "worker", s.Worker, "games", n)
	}
	if srv == nil {
		return nil
	}
	admitted, err := roster.Admitted(dir)
	if err != nil {
		return err
	}
	return srv.SetWorkers(admitted)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
