package distrib

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The coordinator hands its games out itself. A worker asks for one on its
// own subject (wantSubject: the server's rights say who asks); the
// coordinator answers with a game and a hand-out token, records who holds
// it (in memory, and durably in its hand-outs bucket, which no worker may
// read), and takes the game back when the holder says nothing for an ack
// wait, says it gives it back, or is withdrawn. A game ends only when the
// coordinator takes a result of its hand-out: no message a worker can send
// ends, hides or delays a game, or touches another worker's.

// Notice is what a worker says of a game it holds: it still plays it
// (Plies so far), or gives it back (Back: it is stopping).
type Notice struct {
	Handout string `json:"handout"`
	Game    int    `json:"game"`
	Attempt int    `json:"attempt"`
	Plies   int    `json:"plies,omitempty"`
	Back    bool   `json:"back,omitempty"`
}

// handoutRecord is a hand-out as the coordinator keeps it: whom it went to,
// and which game; a result must name one of its sender's.
type handoutRecord struct {
	Worker    string `json:"worker"`
	Game      int    `json:"game"`
	Attempt   int    `json:"attempt"`
	Delivered uint64 `json:"delivered"`
	// Taken: a result of it was taken; another that names it counts for
	// nothing, and is not fetched.
	Taken bool `json:"taken,omitempty"`
}

// longPoll is how long a worker's request waits for a game before it is
// answered "none yet" (and asks again).
const longPoll = 2 * time.Second

// The most a worker may ask and say per second (and at once): an honest
// worker asks once per free slot and speaks once per third of an ack wait
// per game; more is dropped and counted against it.
const (
	workerRate  = 50
	workerBurst = 200
	maxWaiting  = 256 // requests of one worker waiting for a game
)

// Strike says a worker sent something the protocol never sends: news of a
// game it does not hold, or a flood. Count is its strikes within the last
// StrikeWindow: an honest worker's rare misstep (news of a game taken back
// a moment before) is forgotten, and a worker let in again after a
// suspension is struck out again by strikes of its own, not by its old
// ones.
type Strike struct {
	Worker string
	Why    string
	Count  int
}

// StrikeWindow is how long a strike counts.
const StrikeWindow = 10 * time.Minute

type holding struct {
	job    Job
	worker string
	news   time.Time
	since  time.Time // handed out
}

type waiter struct {
	worker, reply string
	until         time.Time
}

type gameKey struct{ game, attempt int }

type dispatcher struct {
	q       *Queue
	ackWait time.Duration
	kv      jetstream.KeyValue
	// The upload sweep's pace (sweepEvery, sweepAfter as it started).
	sweepEvery, sweepAfter time.Duration

	mu        sync.Mutex
	queue     []Job
	published map[gameKey]bool
	latest    map[int]int // each game's latest attempt published
	withdrawn map[gameKey]bool
	delivered map[gameKey]uint64
	held      map[string]*holding // by token
	mine      map[string]string   // every token of this run: its worker
	waiting   []waiter
	n         uint64
	rate      map[string]*bucket // asks and news
	handIns   map[string]*bucket // results
	strikes   map[string][]time.Time
	watch     []func(Playing)
	workers   []string // whose uploads the sweep reads
	onStrike  func(Strike)
	released  map[string]time.Time // tokens no longer held, and since when
	swept     map[string]bool      // uploads the sweep deleted
	struck    map[string]int       // every strike each worker drew (Stats)
	results   map[string]int       // results taken, by what they were (Stats)
	heard     map[string]time.Time // each worker's last word: an ask, news, a result
	took      []time.Duration      // the last games' times, hand-out to result (gameTimes)
	tookNext  int                  // where took's next time goes once it is full

	subs []*nats.Subscription
	stop chan struct{}
	done chan struct{}
}

// bucket is a token bucket: a worker's allowance of messages.
type bucket struct {
	tokens float64
	at     time.Time
}

func (b *bucket) take(now time.Time) bool {
	b.tokens = min(workerBurst, b.tokens+now.Sub(b.at).Seconds()*workerRate)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func handoutsBucket(t string) string        { return "HANDOUTS_" + t }
func wantSubject(t, worker string) string   { return "arena." + t + ".want." + worker }
func resultObject(handout string) string    { return "result-" + handout }
func workerOf(subject string) string        { return subject[strings.LastIndexByte(subject, '.')+1:] }
func (d *dispatcher) token(n uint64) string { return d.q.run + "-" + strconv.FormatUint(n, 10) }

// startDispatch makes the hand-outs bucket and starts answering workers.
func (q *Queue) startDispatch(ctx context.Context, ackWait time.Duration) error {
	kv, err := q.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: handoutsBucket(q.tournament), Storage: jetstream.FileStorage,
		// A result older than this is stale whatever it says.
		TTL: 7 * 24 * time.Hour,
	})
	if err != nil {
		return fmt.Errorf("the hand-outs bucket: %w", err)
	}
	d := &dispatcher{q: q, ackWait: ackWait, kv: kv, sweepEvery: sweepEvery, sweepAfter: sweepAfter,
		published: map[gameKey]bool{}, latest: map[int]int{}, withdrawn: map[gameKey]bool{}, delivered: map[gameKey]uint64{}, held: map[string]*holding{},
		mine: map[string]string{}, rate: map[string]*bucket{}, handIns: map[string]*bucket{}, strikes: map[string][]time.Time{},
		released: map[string]time.Time{}, swept: map[string]bool{}, struck: map[string]int{}, results: map[string]int{}, heard: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	for subj, fn := range map[string]nats.MsgHandler{
		wantSubject(q.tournament, "*"):    d.onWant,
		playingSubject(q.tournament, "*"): d.onNotice,
	} {
		sub, err := q.nc.Subscribe(subj, fn)
		if err != nil {
			d.unsubscribe()
			return err
		}
		d.subs = append(d.subs, sub)
	}
	q.dispatch = d
	go d.tick()
	return nil
}

func (d *dispatcher) unsubscribe() {
	for _, s := range d.subs {
		s.Unsubscribe()
	}
}

// Close stops handing out games (a coordinator's queue); a worker's has
// nothing to stop.
func (q *Queue) Close() {
	if d := q.dispatch; d != nil {
		select {
		case <-d.stop:
		default:
			close(d.stop)
			d.unsubscribe()
			<-d.done
		}
	}
}

// allowed spends one of worker's allowance, or counts a strike.
func (d *dispatcher) allowed(worker string, now time.Time) bool {
	return d.spend(d.rate, worker, now)
}

// spend takes one of worker's allowance in rate, or counts a strike.
// Called with mu held.
func (d *dispatcher) spend(rate map[string]*bucket, worker string, now time.Time) bool {
	b := rate[worker]
	if b == nil {
		b = &bucket{tokens: workerBurst, at: now}
		rate[worker] = b
	}
	if b.take(now) {
		return true
	}
	// A flood is one strike a second, not one per message.
	if b.tokens > -1 {
		b.tokens -= workerRate
		d.strike(worker, "it sent more than the protocol needs (a flood)")
	}
	return false
}

// strike counts something worker should never have sent. Called with mu
// held; the callback runs without it.
func (d *dispatcher) strike(worker, why string) {
	now := time.Now()
	kept := d.strikes[worker][:0]
	for _, at := range d.strikes[worker] {
		if now.Sub(at) < StrikeWindow {
			kept = append(kept, at)
		}
	}
	d.strikes[worker] = append(kept, now)
	if d.struck == nil {
		d.struck = map[string]int{}
	}
	d.struck[worker]++
	s := Strike{Worker: worker, Why: why, Count: len(d.strikes[worker])}
	slog.Warn("distrib: "+why, "worker", worker, "strikes", s.Count)
	if fn := d.onStrike; fn != nil {
		go fn(s)
	}
}

func (d *dispatcher) onWant(m *nats.Msg) {
	worker := workerOf(m.Subject)
	now := time.Now()
	d.mu.Lock()
	if !d.allowed(worker, now) || m.Reply == "" {
		d.mu.Unlock()
		return
	}
	d.heard[worker] = now
	if n := d.waitingOf(worker); n >= maxWaiting {
		d.strike(worker, fmt.Sprintf("it asked for more than %d games at once", maxWaiting))
		d.mu.Unlock()
		return
	}
	d.waiting = append(d.waiting, waiter{worker: worker, reply: m.Reply, until: now.Add(longPoll)})
	d.mu.Unlock()
	d.serve()
}

func (d *dispatcher) waitingOf(worker string) int {
	n := 0
	for _, w := range d.waiting {
		if w.worker == worker {
			n++
		}
	}
	return n
}

// serve hands games to waiting workers while both are there, and answers
// "none yet" to those whose wait is over.
func (d *dispatcher) serve() {
	for {
		d.mu.Lock()
		now := time.Now()
		var idle []waiter
		kept := d.waiting[:0]
		for _, w := range d.waiting {
			if now.After(w.until) {
				idle = append(idle, w)
			} else {
				kept = append(kept, w)
			}
		}
		d.waiting = kept
		i := -1
		for k, j := range d.queue {
			if !j.NotBefore.After(now) {
				i = k
				break
			}
		}
		if i < 0 || len(d.waiting) == 0 {
			d.mu.Unlock()
			for _, w := range idle {
				d.q.nc.Publish(w.reply, nil) // none yet: it asks again
			}
			return
		}
		w := d.waiting[0]
		d.waiting = d.waiting[1:]
		j := d.queue[i]
		d.queue = append(d.queue[:i], d.queue[i+1:]...)
		d.n++
		tok := d.token(d.n)
		k := gameKey{j.Game, j.Attempt}
		d.delivered[k]++
		j.Handout, j.Delivered, j.News, j.MaxArchive = tok, d.delivered[k], d.ackWait/3, MaxArchive
		d.held[tok] = &holding{job: j, worker: w.worker, news: now, since: now}
		d.mine[tok] = w.worker
		watch := d.watch
		d.mu.Unlock()
		for _, w := range idle {
			d.q.nc.Publish(w.reply, nil)
		}
		if err := d.hand(w, j); err != nil {
			slog.Warn("distrib: a game could not be handed out; it waits for the next worker", "game", j.Game, "worker", w.worker, "err", err)
			d.mu.Lock()
			delete(d.held, tok)
			d.queue = append([]Job{stripped(j)}, d.queue...)
			d.mu.Unlock()
			continue
		}
		for _, fn := range watch {
			fn(Playing{Game: j.Game, Attempt: j.Attempt, Worker: w.worker})
		}
	}
}

// hand records a hand-out durably, then answers the worker with its game.
func (d *dispatcher) hand(w waiter, j Job) error {
	rec, err := json.Marshal(handoutRecord{Worker: w.worker, Game: j.Game, Attempt: j.Attempt, Delivered: j.Delivered})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := d.kv.Put(ctx, j.Handout, rec); err != nil {
		return err
	}
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return d.q.nc.Publish(w.reply, data)
}

// stripped is a job as it waits in the queue: no hand-out of its own.
func stripped(j Job) Job {
	j.Handout, j.Delivered, j.News, j.MaxArchive = "", 0, 0, 0
	return j // its Deadline stays: it runs again from the next hand-out
}

func (d *dispatcher) onNotice(m *nats.Msg) {
	worker := workerOf(m.Subject)
	now := time.Now()
	d.mu.Lock()
	if !d.allowed(worker, now) {
		d.mu.Unlock()
		return
	}
	var n Notice
	if err := json.Unmarshal(m.Data, &n); err != nil {
		d.strike(worker, "it sent a notice that is not one")
		d.mu.Unlock()
		return
	}
	d.heard[worker] = now
	h := d.held[n.Handout]
	if h == nil || h.worker != worker || h.job.Game != n.Game || h.job.Attempt != n.Attempt {
		owner, ours := d.mine[n.Handout]
		if !ours || owner != worker {
			// Never handed to it in this run: a game it does not hold.
			// (A hand-out of an earlier run, or one taken back since, is
			// old news from an honest worker, and ignored.)
			if !ours && strings.HasPrefix(n.Handout, d.q.run+"-") || ours && owner != worker {
				d.strike(worker, fmt.Sprintf("it sent news of game %d, which it does not hold", n.Game))
			}
		}
		d.mu.Unlock()
		return
	}
	if n.Back {
		d.release(n.Handout, now)
		d.queue = append([]Job{stripped(h.job)}, d.queue...)
		watch := d.watch
		d.mu.Unlock()
		returned(watch, h)
		d.serve()
		return
	}
	h.news = now
	d.mu.Unlock()
}

// takeBack puts every game handed to worker back in the queue at once,
// and forgets its requests waiting for a game and its strikes (shut out,
// it has answered for them: let in again, it is struck out by strikes of
// its own); it returns how many games came back.
func (d *dispatcher) takeBack(worker string) int {
	now := time.Now()
	d.mu.Lock()
	delete(d.strikes, worker)
	var back []*holding
	for tok, h := range d.held {
		if h.worker == worker {
			d.release(tok, now)
			d.queue = append([]Job{stripped(h.job)}, d.queue...)
			back = append(back, h)
		}
	}
	kept := d.waiting[:0]
	for _, w := range d.waiting {
		if w.worker != worker {
			kept = append(kept, w)
		}
	}
	d.waiting = kept
	watch := d.watch
	d.mu.Unlock()
	for _, h := range back {
		returned(watch, h)
	}
	d.serve()
	return len(back)
}

// returned tells the watchers that h's game went back to the queue.
func returned(watch []func(Playing), h *holding) {
	for _, fn := range watch {
		fn(Playing{Game: h.job.Game, Attempt: h.job.Attempt, Worker: h.worker, Returned: true})
	}
}

// release forgets a hand-out. Called with mu held.
func (d *dispatcher) release(tok string, now time.Time) {
	delete(d.held, tok)
	d.released[tok] = now
}

// tick takes back games whose holders went silent, answers waits that are
// over, and sweeps uploads no result names.
func (d *dispatcher) tick() {
	defer close(d.done)
	t := time.NewTicker(max(min(d.ackWait/4, 250*time.Millisecond), 10*time.Millisecond))
	defer t.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-d.stop:
			return
		case now := <-t.C:
			d.mu.Lock()
			var back []*holding
			for tok, h := range d.held {
				if now.Sub(h.news) > d.ackWait {
					slog.Warn("distrib: a worker went silent; its game goes to another", "game", h.job.Game, "worker", h.worker, "silent", now.Sub(h.news).Round(time.Millisecond))
					d.release(tok, now)
					d.queue = append([]Job{stripped(h.job)}, d.queue...)
					back = append(back, h)
				}
			}
			watch := d.watch
			d.mu.Unlock()
			for _, h := range back {
				returned(watch, h)
			}
			d.serve()
			if now.Sub(lastSweep) >= d.sweepEvery {
				lastSweep = now
				d.sweep(now)
			}
		}
	}
}

// The upload sweep: an archive no result has named sweepAfter after its
// hand-out ended (finished, taken back, or of no hand-out at all) is
// deleted; a result that names it later counts for nothing.
var (
	sweepEvery = time.Minute
	sweepAfter = 10 * time.Minute
)

func (d *dispatcher) sweep(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d.mu.Lock()
	workers := append([]string(nil), d.workers...)
	for tok, at := range d.released {
		if now.Sub(at) > 2*d.sweepAfter {
			delete(d.released, tok)
		}
	}
	d.mu.Unlock()
	for _, w := range workers {
		store, err := d.q.js.ObjectStore(ctx, uploadBucket(d.q.tournament, w))
		if err != nil {
			continue
		}
		objs, err := store.List(ctx)
		if err != nil {
			continue // an empty bucket lists as an error
		}
		for _, o := range objs {
			if now.Sub(o.ModTime) < d.sweepAfter || d.inUse(o.Name, now) {
				continue
			}
			if err := d.q.removeUpload(ctx, w, o.Name); err != nil {
				slog.Warn("distrib: sweep an upload no result named", "worker", w, "object", o.Name, "err", err)
				continue
			}
			d.mu.Lock()
			d.swept[o.Name] = true
			d.mu.Unlock()
			slog.Info("distrib: swept an upload no result named", "worker", w, "object", o.Name, "bytes", o.Size)
		}
	}
}

// inUse says whether an upload may still be named by a result: its
// hand-out is held, or ended less than sweepAfter ago.
func (d *dispatcher) inUse(object string, now time.Time) bool {
	tok, ok := strings.CutPrefix(object, "result-")
	if !ok {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held[tok] != nil {
		return true
	}
	if at, ok := d.released[tok]; ok && now.Sub(at) < d.sweepAfter {
		return true
	}
	return false
}

// Stats are what the coordinator's queue has done and holds, for its
// metrics: games waiting for a worker and held by one now, hand-outs made,
// every strike each worker drew, results taken by what they were (counted
// by their tournament, stale, forged, lost: an archive that did not hold).
type Stats struct {
	Waiting, Held int
	// Stuck are the games held that look stuck now (Holding.Stuck).
	Stuck     int
	HandedOut uint64
	Strikes   map[string]int
	Results   map[string]int
}

// Stats reads the coordinator's queue's figures (zero on a worker's).
func (q *Queue) Stats() Stats {
	d := q.dispatch
	if d == nil {
		return Stats{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return Stats{Waiting: len(d.queue), Held: len(d.held), Stuck: d.stuck(time.Now()), HandedOut: d.n, Strikes: maps.Clone(d.struck), Results: maps.Clone(d.results)}
}

// Refused counts a result taken that its tournament then refused for what
// it claimed (its worker suspended): the verdict "refused", beside
// "taken", which counted it as it came in.
func (q *Queue) Refused() {
	d := q.dispatch
	if d == nil {
		return
	}
	d.mu.Lock()
	d.results["refused"]++
	d.mu.Unlock()
}

// tally counts a result taken as what it was.
func (d *dispatcher) tally(r Result) {
	what := "taken"
	switch {
	case r.Forged != "":
		what = "forged"
	case r.Stale:
		what = "stale"
	case r.Lost != "":
		what = "lost"
	}
	d.mu.Lock()
	d.results[what]++
	d.mu.Unlock()
}
