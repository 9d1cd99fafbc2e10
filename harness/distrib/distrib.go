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
	"sync"
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

// uploadsOf is the stream of worker's upload bucket, as the coordinator
// reads it.
func (q *Queue) uploadsOf(ctx context.Context, worker string) (jetstream.Stream, error) {
	q.mu.Lock()
	s := q.uploads[worker]
	q.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := q.js.Stream(ctx, "OBJ_"+uploadBucket(q.tournament, worker))
	if err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.uploads == nil {
		q.uploads = map[string]jetstream.Stream{}
	}
	q.uploads[worker] = s
	return s, nil
}

// removeUpload deletes an upload: its chunks and its description.
func (q *Queue) removeUpload(ctx context.Context, worker, name string) error {
	s, err := q.uploadsOf(ctx, worker)
	if err != nil {
		return err
	}
	bucket := uploadBucket(q.tournament, worker)
	info, err := describeObject(ctx, s, bucket, name, 1<<62)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil
	case err != nil && !errors.Is(err, errBadObject):
		return err
	}
	// A description that does not hold goes too, with whatever chunks it
	// names. Purging a large archive's chunks on a busy server takes longer
	// than a request's default time: as long as moving it may.
	ctx, cancel := context.WithTimeout(ctx, transferTime(info.Size))
	defer cancel()
	if info.NUID != "" {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(bucket, info.NUID))); err != nil {
			return err
		}
	}
	return s.Purge(ctx, jetstream.WithPurgeSubject(metaSubject(bucket, name)))
}

// MaxArchive is the most a result's archive may weigh, as the coordinator
// states it in every hand-out (Job.MaxArchive), and what each worker's
// upload bucket holds twice over (a worker's archives wait there until
// judged): a match directory is a transcript (at most 64 MiB a line, far
// less in practice) and the data files its evidence budget kept.
const MaxArchive = 1 << 30

// MaxResultMessage is the most a result's message may weigh, its headers
// included: a result names its game and hand-out, and carries the worker's
// word on its machine (Machine, a few KiB) and a host fault's reason
// (maxResultError).
const MaxResultMessage = 64 << 10

// maxResultError is the most of a host fault's reason a result carries.
const maxResultError = 4 << 10

// duplicateWindow is how long the results stream remembers a message id:
// the least the server allows. A result published twice (its ack lost) is
// taken once all the same: the second names a hand-out already taken.
const duplicateWindow = 100 * time.Millisecond

// maxStoredResults is how many of one worker's results the results stream
// holds waiting for the coordinator: an honest worker has at most one per
// game it holds.
const maxStoredResults = 1024

// transferRate is the slowest an archive is expected to cross a link, a
// worker's upload to the server or the coordinator's fetch from it (on a
// machine busy with other work too): transferTime.
const transferRate = 1 << 20

// transferTime is how long moving size bytes of an archive may take: 30 s
// and a second per MiB. A fetch is allowed the hand-out's cap's, whatever
// the upload's description claims.
func transferTime(size uint64) time.Duration {
	return 30*time.Second + time.Duration(size/transferRate)*time.Second
}

// fetchLanes is how many archives the coordinator fetches at once: one
// large or slow fetch delays no other worker's result.
const fetchLanes = 4

// errFetch is a fetch that failed on the coordinator's side (its link to
// the server, its disk): the result is taken again later, and says
// nothing of its sender.
var errFetch = errors.New("the coordinator could not fetch a result's archive")

// fetch spools a result's archive to a file of its own in the queue's
// spool directory (SpoolIn), chunk by chunk through direct gets
// (streamObject): its description is read first and refused past the
// hand-out's cap, and a chunk its description claims that is not there
// refuses it at once. The archive is never held in memory. It returns the
// file (the caller removes it), or why the archive does not hold (the
// worker's fault: lost), or an error wrapping errFetch (the coordinator's).
func (q *Queue) fetch(ctx context.Context, r Result) (f *os.File, lost string, err error) {
	store, err := q.uploadsOf(ctx, r.Worker)
	if err != nil {
		return nil, "", fmt.Errorf("%w: worker %s's upload bucket: %w", errFetch, r.Worker, err)
	}
	fctx, cancel := context.WithTimeout(ctx, transferTime(MaxArchive))
	defer cancel()
	if q.spool != "" {
		if err := os.MkdirAll(q.spool, 0o700); err != nil {
			return nil, "", fmt.Errorf("%w: %w", errFetch, err)
		}
	}
	f, err = os.CreateTemp(q.spool, "result-*.tar")
	if err != nil {
		return nil, "", fmt.Errorf("%w: spool a result: %w", errFetch, err)
	}
	w := &spoolWriter{f: f}
	_, err = streamObject(fctx, store, uploadBucket(q.tournament, r.Worker), r.Object, MaxArchive, w)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err == nil {
		return f, "", nil
	}
	f.Close()
	rmErr := os.Remove(f.Name())
	switch {
	case w.err != nil:
		return nil, "", errors.Join(fmt.Errorf("%w: spool a result: %w", errFetch, w.err), rmErr)
	case errors.Is(err, errBadObject):
		return nil, strings.TrimPrefix(err.Error(), errBadObject.Error()+": "), rmErr
	default:
		return nil, "", errors.Join(fmt.Errorf("%w: %w", errFetch, err), rmErr)
	}
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

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
