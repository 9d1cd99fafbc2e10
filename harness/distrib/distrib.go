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
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
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
	// the coordinator hands it out no sooner.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// Set as the game is handed out: the hand-out's token (a result and
	// every notice name it), how many times the game has been handed out
	// (2 or more: an earlier worker did not finish it), and how often the
	// holder says it still plays it.
	Handout   string        `json:"handout,omitempty"`
	Delivered uint64        `json:"delivered,omitempty"`
	News      time.Duration `json:"news,omitempty"`
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
	botsStream jetstream.Stream                 // a worker reads the bots through it (readObject)
	upload     jetstream.ObjectStore            // a worker's own
	uploads    map[string]jetstream.ObjectStore // the coordinator's view of each worker's
	// run marks this coordinator's hand-outs: a token names its run.
	run      string
	dispatch *dispatcher // the coordinator's; nil for a worker
	spool    string      // where archives wait while judged
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

// fetchStall is the longest a fetch waits for its next bytes: an upload's
// description may claim bytes a worker never sent (1 GiB, and no data),
// and results are taken one at a time, so a fetch that stalls fails then,
// not at the end of the time its claimed size allows.
var fetchStall = 10 * time.Second

// copyWatched copies src to dst, ending with cancel when no byte came for
// stall; its error is then errStalled.
func copyWatched(dst io.Writer, src io.Reader, stall time.Duration, cancel context.CancelFunc) (int64, error) {
	var copied atomic.Int64
	done := make(chan struct{})
	var stalled atomic.Bool
	go func() {
		t := time.NewTicker(max(stall/10, 10*time.Millisecond))
		defer t.Stop()
		last, since := int64(-1), time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				if n := copied.Load(); n != last {
					last, since = n, now
				} else if now.Sub(since) >= stall {
					stalled.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	n, err := io.Copy(countingWriter{dst, &copied}, src)
	close(done)
	if stalled.Load() {
		return n, fmt.Errorf("%w: no byte came for %v, %d bytes in", errStalled, stall, n)
	}
	return n, err
}

// errStalled is a fetch whose bytes stopped coming.
var errStalled = errors.New("the archive's bytes stopped coming")

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// fetch spools a result's archive to a file of its own in the queue's
// spool directory (SpoolIn): its size first, refused past MaxArchive, then
// the archive, streamed, within a time that grows with its size and with
// no pause longer than fetchStall; the object store checks its digest. The archive is never held in memory. It
// returns the file (the caller removes it) or why the archive could not be
// had.
func (q *Queue) fetch(ctx context.Context, r Result) (*os.File, string, error) {
	store, err := q.uploadsOf(ctx, r.Worker)
	if err != nil {
		return nil, err.Error(), nil
	}
	info, err := store.GetInfo(ctx, r.Object)
	if err != nil {
		return nil, err.Error(), nil
	}
	if info.Size > MaxArchive {
		return nil, fmt.Sprintf("its archive is %d bytes, more than the %d a result may bring", info.Size, MaxArchive), nil
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(info.Size/fetchRate)*time.Second)
	defer cancel()
	obj, err := store.Get(fctx, r.Object)
	if err != nil {
		return nil, err.Error(), nil
	}
	defer obj.Close()
	if q.spool != "" {
		if err := os.MkdirAll(q.spool, 0o700); err != nil {
			return nil, "", err
		}
	}
	f, err := os.CreateTemp(q.spool, "result-*.tar")
	if err != nil {
		return nil, "", fmt.Errorf("spool a result: %w", err)
	}
	fail := func(why string, err error) (*os.File, string, error) {
		f.Close()
		return nil, why, errors.Join(err, os.Remove(f.Name()))
	}
	w := &spoolWriter{f: f}
	n, err := copyWatched(w, io.LimitReader(obj, MaxArchive+1), fetchStall, cancel)
	switch {
	case w.err != nil:
		return fail("", fmt.Errorf("spool a result: %w", w.err)) // this machine's fault, not the worker's
	case err != nil:
		return fail(err.Error(), nil)
	case n != int64(info.Size):
		return fail(fmt.Sprintf("its archive is %d bytes, not the %d it said", n, info.Size), nil)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail("", err)
	}
	return f, "", nil
}

// spoolWriter writes to the spool file and keeps its own error apart from
// the archive's.
type spoolWriter struct {
	f   *os.File
	err error
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// SpoolIn sets where results' archives are spooled while they are judged
// (default: the system's temporary directory).
func (q *Queue) SpoolIn(dir string) { q.spool = dir }

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
	if err := CheckName(worker); err != nil {
		return nil, err
	}
	q, err := newQueue(nc, tournament)
	if err != nil {
		return nil, err
	}
	q.worker = worker
	if q.botsStream, err = q.js.Stream(ctx, "OBJ_"+botsBucket(q.tournament)); err != nil {
		return nil, fmt.Errorf("tournament %q has no queue here, or this worker may not see it (is its coordinator running, and was %s enrolled in it?): %w", tournament, worker, err)
	}
	if q.upload, err = q.js.ObjectStore(ctx, uploadBucket(q.tournament, worker)); err != nil {
		return nil, fmt.Errorf("worker %s has no upload bucket (the coordinator makes one for each enrolled worker when it starts, or within seconds of the enrolment): %w", worker, err)
	}
	return q, nil
}

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
	// Games were once a stream that workers acknowledged; no more.
	if err := js.DeleteStream(ctx, "GAMES_"+q.tournament); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("remove the old games stream: %w", err)
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
	d.queue = append(d.queue, stripped(j))
	d.mu.Unlock()
	d.serve()
	return false, nil
}

// Withdraw takes a game's attempt out of the queue, and from its holder:
// the coordinator gave up on it (a new attempt is queued instead). A result
// of it that comes later is the coordinator's to ignore.
func (q *Queue) Withdraw(game, attempt int) {
	d := q.dispatch
	if d == nil {
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
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

// TakeBack puts every game the coordinator handed to worker back in the
// queue at once (a suspended worker's), and returns how many; none on a
// worker's queue.
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
// directory dir (Suspend), the worker is told, the games it holds go back
// to the queue at once, and the server (nil: an
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
	// Its games go to the other workers at once, not after the ack wait.
	if n := q.TakeBack(s.Worker); n > 0 {
		slog.Info("distrib: the games a suspended worker held go to the others", "worker", s.Worker, "games", n)
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
func (q *Queue) Collect(ctx context.Context, accept func(Result, io.Reader) error) error {
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
	if h := d.held[r.Handout]; h != nil && h.worker == r.Worker {
		d.release(r.Handout, time.Now())
	}
}

func (q *Queue) take(ctx context.Context, m jetstream.Msg, accept func(Result, io.Reader) error) error {
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
	q.check(ctx, &r)
	q.handedIn(r)
	var archive io.Reader
	if r.Object != "" && r.Forged == "" && !r.Stale {
		f, lost, err := q.fetch(ctx, r)
		if err != nil {
			return err // the coordinator's own disk: the result stays queued
		}
		if ctx.Err() != nil {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
			return nil
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
		r.Delivered = h.Delivered
		d.mu.Lock()
		r.Stale = d.swept[r.Object]
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

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
