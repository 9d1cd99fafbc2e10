// Package distrib spreads a tournament's games over machines through NATS
// JetStream: the coordinator publishes each unplayed game to a work-queue
// stream (one message id per game and attempt, so publishing again on resume
// is harmless), workers pull one game per free slot, keep it alive with
// in-progress acks while it plays, put the match directory in their own
// upload bucket and publish a result naming it; the coordinator takes
// results in order. The queue costs one round trip per game, never per turn:
// a game is played wholly on the worker's machine.
//
// Every connection is TLS with a user key per worker, whose rights stop at
// its own tournament's games and its own results (WorkerPermissions).
//
// It must never count a result twice, nor drop a game: a game is acked only
// once its result is published, so a worker that dies loses nothing (the game
// is redelivered once its ack wait runs out). It does not judge results; the
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
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
	// a worker that takes it sooner hands it back until then.
	NotBefore time.Time `json:"notBefore,omitzero"`
}

// Result is a played game: the worker that played it, and the name of its
// match directory's archive in the worker's upload bucket.
type Result struct {
	Tournament string `json:"tournament"`
	Game       int    `json:"game"`
	Attempt    int    `json:"attempt"`
	Worker     string `json:"worker"`
	// Delivered is how many times the game was handed out before this
	// result (2 or more: an earlier worker did not finish it).
	Delivered uint64 `json:"delivered"`
	Object    string `json:"object"`
	Error     string `json:"error,omitempty"` // the worker could not play it (a host fault)
	// Machine is what the worker says of its machine (its bench figures);
	// distrib does not read it.
	Machine json.RawMessage `json:"machine,omitempty"`
	// Lost, set by Collect, says why the archive could not be fetched: the
	// result cannot count.
	Lost string `json:"-"`
}

// Playing says a worker has taken a game.
type Playing struct {
	Game    int    `json:"game"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
}

// Queue is one tournament's streams on a JetStream server.
type Queue struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	tournament string
	worker     string // "" for the coordinator
	games      jetstream.Stream
	results    jetstream.Stream
	bots       jetstream.ObjectStore
	botsStream jetstream.Stream                 // a worker reads the bots through it (readObject)
	upload     jetstream.ObjectStore            // a worker's own
	uploads    map[string]jetstream.ObjectStore // the coordinator's view of each worker's
	// run marks the games this coordinator's run publishes: a game its run
	// publishes twice is one, but a run after it (a restart) publishes it
	// again whatever the stream's duplicate window remembers of it.
	run string
}

// uploadsOf is worker's upload bucket, as the coordinator reads it.
func (q *Queue) uploadsOf(ctx context.Context, worker string) (jetstream.ObjectStore, error) {
	if s := q.uploads[worker]; s != nil {
		return s, nil
	}
	s, err := q.js.ObjectStore(ctx, uploadBucket(q.tournament, worker))
	if err != nil {
		return nil, err
	}
	if q.uploads == nil {
		q.uploads = map[string]jetstream.ObjectStore{}
	}
	q.uploads[worker] = s
	return s, nil
}

// MaxArchive is the most a result's archive may weigh, and each worker's
// upload bucket holds (a worker's archives wait there until judged): a
// match directory is a transcript (at most 64 MiB a line, far less in
// practice) and the data files its evidence budget kept.
const MaxArchive = 1 << 30

// fetchRate is the slowest a coordinator expects to read an archive from
// its server: a fetch may take 30 s and a second per 4 MiB.
const fetchRate = 4 << 20

// fetch reads a result's archive: its size first, refused past MaxArchive,
// then the archive within a time that grows with its size. It returns why
// the archive could not be had, or "".
func (q *Queue) fetch(ctx context.Context, r Result) ([]byte, string) {
	store, err := q.uploadsOf(ctx, r.Worker)
	if err != nil {
		return nil, err.Error()
	}
	info, err := store.GetInfo(ctx, r.Object)
	if err != nil {
		return nil, err.Error()
	}
	if info.Size > MaxArchive {
		return nil, fmt.Sprintf("its archive is %d bytes, more than the %d a result may bring", info.Size, MaxArchive)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(info.Size/fetchRate)*time.Second)
	defer cancel()
	data, err := store.GetBytes(fctx, r.Object)
	if err != nil {
		return nil, err.Error()
	}
	return data, ""
}

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
func gamesStream(t string) string            { return "GAMES_" + t }
func resultsStream(t string) string          { return "RESULTS_" + t }
func botsBucket(t string) string             { return "BOTS_" + t }
func uploadBucket(t, worker string) string   { return "UP_" + t + "_W_" + worker }
func gamesSubject(t string) string           { return "arena." + t + ".games" }
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
	if err := CheckName(worker); err != nil {
		return nil, err
	}
	q, err := newQueue(nc, tournament)
	if err != nil {
		return nil, err
	}
	q.worker = worker
	if q.games, err = q.js.Stream(ctx, gamesStream(q.tournament)); err != nil {
		return nil, fmt.Errorf("tournament %q has no games queue here, or this worker may not see it (is its coordinator running, and was %s enrolled in it?): %w", tournament, worker, err)
	}
	if q.bots, err = q.js.ObjectStore(ctx, botsBucket(q.tournament)); err != nil {
		return nil, fmt.Errorf("the tournament's bots: %w", err)
	}
	if q.botsStream, err = q.js.Stream(ctx, "OBJ_"+botsBucket(q.tournament)); err != nil {
		return nil, fmt.Errorf("the tournament's bots: %w", err)
	}
	if q.upload, err = q.js.ObjectStore(ctx, uploadBucket(q.tournament, worker)); err != nil {
		return nil, fmt.Errorf("worker %s has no upload bucket (the coordinator makes one for each enrolled worker when it starts, or within seconds of the enrolment): %w", worker, err)
	}
	return q, nil
}

// Open creates (or finds) the tournament's streams: games as a work queue,
// results, the bots' object store, and the workers' consumer, whose games go
// to another worker after ackWait without news (0: DefaultAckWait). Only the
// coordinator opens; workers join. AddWorkers makes each worker's upload
// bucket.
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
	if q.games, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: gamesStream(q.tournament), Subjects: []string{gamesSubject(q.tournament)},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 7 * 24 * time.Hour,
	}); err != nil {
		return nil, fmt.Errorf("the games stream: %w", err)
	}
	if q.results, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: resultsStream(q.tournament), Subjects: []string{resultsSubject(q.tournament, "*")},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 7 * 24 * time.Hour,
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
	if _, err := q.games.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait,
		MaxDeliver: -1, FilterSubject: gamesSubject(q.tournament),
	}); err != nil {
		return nil, fmt.Errorf("the workers' consumer: %w", err)
	}
	return q, nil
}

// Tournament is the name of the tournament whose games this queue holds.
func (q *Queue) Tournament() string { return q.tournament }

// AddWorkers makes an upload bucket for each worker that has none.
func (q *Queue) AddWorkers(ctx context.Context, workers []string) error {
	for _, w := range workers {
		if err := CheckName(w); err != nil {
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
	return nil
}

// Publish queues a game. Publishing the same game and attempt again is a
// no-op on the server (its message id is seen): duplicate says so.
func (q *Queue) Publish(ctx context.Context, j Job) (duplicate bool, err error) {
	j.Tournament = q.tournament
	data, err := json.Marshal(j)
	if err != nil {
		return false, err
	}
	ack, err := q.js.Publish(ctx, gamesSubject(q.tournament), data, jetstream.WithMsgID(fmt.Sprintf("game-%d-attempt-%d-run-%s", j.Game, j.Attempt, q.run)))
	if err != nil {
		return false, fmt.Errorf("publish game %d: %w", j.Game, err)
	}
	return ack.Duplicate, nil
}

// Pending is how many games wait in the queue (not yet handed out or acked).
func (q *Queue) Pending(ctx context.Context) (uint64, error) {
	info, err := q.games.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Put stores a bot under name, unless an object of that name is there
// (bots are named by their content's hash).
func (q *Queue) Put(ctx context.Context, name string, data []byte) error {
	if _, err := q.bots.GetInfo(ctx, name); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	_, err := q.bots.PutBytes(ctx, name, data)
	return err
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
	_, err := q.bots.PutBytes(ctx, factsObject, data)
	return err
}

// Facts reads what SetFacts stored.
func (q *Queue) Facts(ctx context.Context) ([]byte, error) {
	data, err := q.Get(ctx, factsObject)
	if err != nil {
		return nil, fmt.Errorf("the tournament's facts: %w", err)
	}
	return data, nil
}

// WatchPlaying calls fn as workers take games, until stop is called.
func (q *Queue) WatchPlaying(fn func(Playing)) (stop func(), err error) {
	sub, err := q.nc.Subscribe(playingSubject(q.tournament, "*"), func(m *nats.Msg) {
		var p Playing
		if json.Unmarshal(m.Data, &p) != nil {
			return
		}
		// The subject is the worker's own (its rights allow no other).
		p.Worker = m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
		fn(p)
	})
	if err != nil {
		return nil, err
	}
	return func() { sub.Unsubscribe() }, nil
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
func (q *Queue) TellSuspended(s Suspension) error {
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
	Suspended *Suspension
}

// OnControl calls fn with each word from the coordinator, until stop.
func (q *Queue) OnControl(fn func(Control)) (stop func(), err error) {
	sub, err := q.nc.Subscribe(controlSubject(q.tournament), func(m *nats.Msg) {
		if string(m.Data) == "finished" {
			fn(Control{Finished: true})
			return
		}
		var s Suspension
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
// directory dir (Suspend), the worker is told, and the server (nil: an
// organizer's own, whose rights arena does not set) lets it in no more,
// closing its connection.
func Shut(q *Queue, srv *Server, dir string, s Suspension) error {
	if err := Suspend(dir, s); err != nil {
		return err
	}
	// Told first: once shut out, it hears nothing.
	if err := q.TellSuspended(s); err != nil {
		slog.Warn("distrib: tell a suspended worker", "worker", s.Worker, "err", err)
	}
	if srv == nil {
		return nil
	}
	admitted, err := Admitted(dir)
	if err != nil {
		return err
	}
	return srv.SetWorkers(admitted)
}

// Collect (one at a time) hands each result to accept with its archive, in order, and
// removes it once accept returns nil (ErrNotYet: later). An error from accept stops Collect and
// leaves the result queued. Collect returns when ctx ends. A result may come
// twice (a worker that published it died before its ack; a coordinator that
// died before removing it; a worker cut off past its ack wait whose game
// another worker played too): accept must take a game it already holds
// without counting it again. An archive that cannot be fetched is handed on
// with Lost set: that result cannot count.
func (q *Queue) Collect(ctx context.Context, accept func(Result, []byte) error) error {
	cons, err := q.js.CreateOrUpdateConsumer(ctx, resultsStream(q.tournament), jetstream.ConsumerConfig{
		Durable: "coordinator", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxDeliver: -1,
	})
	if err != nil {
		return fmt.Errorf("follow the results: %w", err)
	}
	var w retryWarning
	for ctx.Err() == nil {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if q.nc.IsClosed() {
				return fmt.Errorf("fetch a result: %w", err)
			}
			w.warn("distrib: fetching results failed; trying again", err)
			sleep(ctx, time.Second)
			continue
		}
		for m := range batch.Messages() {
			if err := q.take(ctx, m, accept); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) {
			w.warn("distrib: fetching results failed; trying again", err)
		}
	}
	return nil
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

func (q *Queue) take(ctx context.Context, m jetstream.Msg, accept func(Result, []byte) error) error {
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
	var archive []byte
	if r.Object != "" {
		archive, r.Lost = q.fetch(ctx, r)
		if ctx.Err() != nil {
			return nil
		}
	}
	// A result taken is finished even if a stop came meanwhile.
	done := context.WithoutCancel(ctx)
	if err := accept(r, archive); errors.Is(err, ErrNotYet) {
		if meta, merr := m.Metadata(); merr != nil || meta.NumDelivered < NotYetTimes {
			return m.NakWithDelay(NotYetDelay)
		}
		slog.Warn("distrib: dropped a result no tournament took", "game", r.Game, "attempt", r.Attempt, "worker", r.Worker)
	} else if err != nil {
		return err
	}
	if r.Object != "" {
		// Judged: its archive goes, read or not.
		store, err := q.uploadsOf(done, r.Worker)
		if err == nil {
			err = store.Delete(done, r.Object)
		}
		if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("remove game %d's archive: %w", r.Game, err)
		}
	}
	return m.DoubleAck(done)
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

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
