package runner

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// checkMachine reads what a worker says of its machine, refusing a
// description that cannot be true or that would not fit a report.
func checkMachine(raw json.RawMessage) (tournament.Machine, error) {
	var m tournament.Machine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("does not read: %w", err)
	}
	text := func(what, v string, n int) error {
		if len(v) > n || !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
			return fmt.Errorf("%s: want at most %d printable characters", what, n)
		}
		return nil
	}
	switch {
	case m.CPUs < 1 || m.CPUs > 1024:
		return m, fmt.Errorf("%d CPUs: want 1 to 1024", m.CPUs)
	case len(m.Bench) > 64:
		return m, fmt.Errorf("%d bench figures: want at most 64", len(m.Bench))
	}
	for what, v := range map[string]string{"host": m.Host, "sandbox": m.Sandbox, "image id": m.ImageID, "engine": m.Engine} {
		if err := text(what, v, 255); err != nil {
			return m, err
		}
	}
	for _, f := range m.Bench {
		if err := text("bench figure", f.Name, 64); err != nil {
			return m, err
		}
		for _, v := range []float64{f.P50Ms, f.P99Ms} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e7 {
				return m, fmt.Errorf("bench figure %s: %v ms", f.Name, v)
			}
		}
	}
	return m, nil
}

// Worker plays games for a coordinator on this machine's backend. Bots are
// fetched by hash and kept for later games.
type Worker struct {
	Queue   *distrib.Queue
	Backend sandbox.Backend
	// Signer signs every transcript: the worker's enrolled key.
	Signer ed25519.PrivateKey
	// Scratch holds the match directories while they are played.
	Scratch string
	// Metrics, when set, count the games played and the host's faults.
	Metrics *metrics.Worker
	mu      sync.Mutex
	bots    map[string]*submission.Bot
}

func (w *Worker) bot(ctx context.Context, name string) (*submission.Bot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.bots[name]; b != nil {
		return b, nil
	}
	data, err := w.Queue.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", name, err)
	}
	if botObject(data) != name {
		return nil, fmt.Errorf("%s holds another bot (sha256 %s)", name, submission.Sum(data))
	}
	var b submission.Bot
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if w.bots == nil {
		w.bots = map[string]*submission.Bot{}
	}
	w.bots[name] = &b
	return &b, nil
}

// Play is the worker's distrib.Player: it plays the game with the match
// runner on the worker's backend and returns the match directory. A match
// aborted by this host is returned too: the coordinator records the attempt.
func (w *Worker) Play(ctx context.Context, j distrib.Job) (archive []byte, err error) {
	defer func() {
		if err != nil && ctx.Err() == nil {
			w.Metrics.HostFault()
		}
	}()
	var sp spec
	if err := json.Unmarshal(j.Spec, &sp); err != nil {
		return nil, fmt.Errorf("game %d: %w", j.Game, err)
	}
	g, err := rules.Lookup(sp.Game)
	if err != nil {
		return nil, err
	}
	white, err := w.bot(ctx, sp.White)
	if err != nil {
		return nil, err
	}
	black, err := w.bot(ctx, sp.Black)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(w.Scratch, fmt.Sprintf("game-%d-", j.Game))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "m")
	res, err := match.Run(ctx, match.Config{Game: g, Rules: sp.Rules, Seed: sp.Seed, White: white, Black: black,
		Backend: w.Backend, Limits: sp.Limits, OnFault: match.Policy(sp.OnFault), Dir: dir,
		ArenaVersion: sp.ArenaVersion, Evidence: sp.Evidence, Signer: w.Signer,
		Job: &transcript.Job{Tournament: j.Tournament, Game: j.Game, Attempt: j.Attempt, Pair: sp.Pair, Opening: sp.Opening}})
	if err != nil {
		return nil, err
	}
	w.observe(ctx, j.Game, dir, res)
	return pack(dir)
}

// Join is a worker machine joining a coordinator's tournament.
type Join struct {
	Creds *distrib.Credentials // what arena enroll wrote for this machine
	URL   string               // the coordinator's (default: the credentials')
	// NATSCreds and NATSCA reach a coordinator on an organizer's NATS
	// cluster: the arena credentials then only sign.
	NATSCreds, NATSCA string
	Backend           sandbox.Backend
	Slots             int // games played at once
	ArenaVersion      string
	// Check is this host's preflight (the doctor's engine checks): an error
	// refuses to play. Nil: none.
	Check func(ctx context.Context) error
	// Bench measures this machine (the doctor's turn figures), which goes
	// with every result. Nil: not measured.
	Bench func(ctx context.Context) ([]tournament.Figure, error)
	// Notify is told what the operator should know, as it happens.
	Notify func(msg string)
	// Metrics, when set, count the games played and what became of them,
	// with the machine's figures (see ServeWorkerMetrics).
	Metrics *metrics.Worker
}

// connectWaiting connects to the coordinator, waiting while nothing
// answers at url (a worker started before its coordinator, or while it
// restarts), and saying so every joinSaidEvery. A key the coordinator
// refuses is tried again for keyWait, saying so once: a worker enrolled a
// moment ago may reach a coordinator that has not read its enrolment yet
// (an organizer's own NATS cluster learns of it when its operator adds
// the user).
func connectWaiting(ctx context.Context, url string, opts []nats.Option, notify func(string)) (*nats.Conn, error) {
	var said, refusedSince time.Time
	for {
		nc, err := distrib.Connect(url, opts...)
		switch {
		case errors.Is(err, nats.ErrNoServers):
			if time.Since(said) >= joinSaidEvery {
				said = time.Now()
				notify(fmt.Sprintf("nothing answers at %s yet: waiting for the coordinator (is it running there? Ctrl-C stops)", url))
			}
		case errors.Is(err, distrib.ErrKeyRefused):
			if refusedSince.IsZero() {
				refusedSince = time.Now()
				notify(fmt.Sprintf("the coordinator at %s does not admit this worker's key yet; trying again for %v (it may not have read a new enrolment yet)", url, keyWait))
			} else if time.Since(refusedSince) >= keyWait {
				return nil, err
			}
		default:
			return nc, err
		}
		sleepCtx(ctx, joinRetry)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// How often a worker that waits for its coordinator tries, and says so,
// and how long it tries a key the coordinator refuses, or a queue that has
// no upload bucket for it yet.
const (
	joinRetry     = 2 * time.Second
	joinSaidEvery = time.Minute
	keyWait       = 30 * time.Second
)

// joinQueue joins the tournament's queue, trying again for keyWait while
// the coordinator has not made this worker's upload bucket yet.
func joinQueue(ctx context.Context, nc *nats.Conn, tournament, worker string) (*distrib.Queue, error) {
	deadline := time.Now().Add(keyWait)
	for {
		q, err := distrib.Join(ctx, nc, tournament, worker)
		if !errors.Is(err, distrib.ErrNoBucket) || time.Now().After(deadline) {
			return q, err
		}
		sleepCtx(ctx, 200*time.Millisecond)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// Work plays the coordinator's games on this machine until the tournament is
// over (over is true) or ctx ends. Before it plays it checks the host,
// measures it, and is admitted only if it shares the coordinator's facts.
func Work(ctx context.Context, j Join) (over bool, err error) {
	if j.Slots < 1 {
		return false, tournament.ConfigErrorf("a worker plays at least one game at once, got %d", j.Slots)
	}
	if j.Notify == nil {
		j.Notify = func(string) {}
	}
	url := j.URL
	if url == "" {
		url = j.Creds.URL
	}
	if url == "" {
		return false, tournament.ConfigErrorf("the credentials name no coordinator: give its URL")
	}
	key, err := j.Creds.SigningKey()
	if err != nil {
		return false, err
	}
	opts, err := j.Creds.Options()
	if err != nil {
		return false, err
	}
	if j.NATSCreds != "" {
		opts = j.Creds.ClusterOptions(j.NATSCreds, j.NATSCA)
	} else if j.NATSCA != "" {
		return false, tournament.ConfigErrorf("a cluster CA goes with the cluster's credentials (a coordinator's own server is checked against the credentials' authority)")
	}
	nc, err := connectWaiting(ctx, url, opts, j.Notify)
	if ctx.Err() != nil {
		return false, nil // stopped while waiting
	}
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) || err != nil && strings.Contains(err.Error(), "certificate signed by unknown authority") {
		return false, fmt.Errorf("join: the server at %s is not the coordinator of tournament %s, whose authority these credentials trust (credentials of another tournament, or the wrong address?): %w", url, j.Creds.Tournament, err)
	}
	if err != nil {
		return false, fmt.Errorf("join: %w", err)
	}
	defer nc.Close()
	// Measured once the coordinator answers: a wrong address fails at once.
	machine, err := j.describe(ctx)
	if err != nil {
		return false, err
	}
	q, err := joinQueue(ctx, nc, j.Creds.Tournament, j.Creds.Worker)
	if err != nil {
		return false, err
	}
	if err := j.admitted(ctx, q); err != nil {
		return false, err
	}
	pool := sandbox.NewPool(j.Backend)
	defer func() {
		if cerr := pool.Close(context.WithoutCancel(ctx)); cerr != nil {
			// The boxes carry the owner label: the next start sweeps them.
			slog.Warn("destroy idle sandboxes", "err", cerr)
		}
	}()
	scratch, err := os.MkdirTemp("", "arena-worker-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(scratch)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var done atomic.Bool
	var suspended atomic.Pointer[roster.Suspension]
	stop, err := q.OnControl(func(c distrib.Control) {
		switch {
		case c.Finished:
			done.Store(true)
			cancel()
		case c.Suspended != nil && c.Suspended.Worker == j.Creds.Worker:
			j.Metrics.Refused()
			suspended.Store(c.Suspended)
			cancel()
		}
	})
	if err != nil {
		return false, err
	}
	defer stop()
	tw := &Worker{Queue: q, Backend: pool, Scratch: scratch, Signer: key, Metrics: j.Metrics}
	j.Notify(fmt.Sprintf("worker %s plays %s's games, %d at once", j.Creds.Worker, j.Creds.Tournament, j.Slots))
	w := &distrib.Worker{Queue: q, Slots: j.Slots, Play: tw.Play, Machine: machine, Metrics: j.Metrics}
	err = w.Run(ctx)
	if s := suspended.Load(); s != nil {
		return false, &SuspendedError{*s}
	}
	if errors.Is(nc.LastError(), nats.ErrAuthorization) {
		// Cut off without a word: revoked, or suspended while it could not
		// hear it.
		return false, fmt.Errorf("%w: the coordinator let this worker in no more (revoked, or suspended: arena workers list tells the organizer why)", ErrNotAdmitted)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return false, err
	}
	return done.Load(), nil
}

// SuspendedError is a worker the coordinator shut out for a result it
// refused.
type SuspendedError struct{ roster.Suspension }

func (e *SuspendedError) Error() string {
	return fmt.Sprintf("the coordinator suspended this worker at %s: a result it handed in for game %d was refused: %s. "+
		"Its games go to other workers. Find what is wrong with this machine or its arena, then ask the organizer to let it in again (arena workers readmit).",
		e.At.UTC().Format(time.RFC3339), e.Game, e.Reason)
}

// ErrNotAdmitted wraps a worker's refusal to play for a coordinator whose
// facts it does not share.
var ErrNotAdmitted = errors.New("not admitted")

// admitted waits for the coordinator's facts (it says them once its bots are
// ready, built from source maybe) and checks that this worker plays as the
// coordinator would: the same arena and the same runtime image.
func (j Join) admitted(ctx context.Context, q *distrib.Queue) error {
	var data []byte
	for waited := false; ; waited = true {
		var err error
		if data, err = q.Facts(ctx); err == nil {
			break
		}
		if !waited {
			j.Notify(fmt.Sprintf("waiting for the coordinator to start the tournament (%v)", err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	var theirs Facts
	if err := json.Unmarshal(data, &theirs); err != nil {
		return fmt.Errorf("the tournament's facts: %w", err)
	}
	mine, err := FactsOf(ctx, theirs.Game, j.ArenaVersion, j.Backend)
	if err != nil {
		return err
	}
	if err := theirs.Admit(mine); err != nil {
		return fmt.Errorf("%w: %w", ErrNotAdmitted, err)
	}
	return nil
}

// describe checks this host (refusing to play when a check fails) and
// measures it: what goes with every result.
func (j Join) describe(ctx context.Context) (json.RawMessage, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	m := tournament.Machine{Host: host, CPUs: runtime.NumCPU(), Sandbox: j.Backend.Name()}
	d, err := j.Backend.Describe(ctx)
	if err != nil {
		return nil, err
	}
	m.ImageID, m.Engine = d["imageId"], d["engineVersion"]
	if j.Check != nil {
		if err := j.Check(ctx); err != nil {
			return nil, fmt.Errorf("%w: a worker must pass the doctor's checks: %w", ErrNotAdmitted, err)
		}
	}
	if j.Bench != nil {
		if m.Bench, err = j.Bench(ctx); err != nil {
			return nil, fmt.Errorf("measure this machine: %w", err)
		}
		for _, f := range m.Bench {
			j.Metrics.Measured(f.Name, f.P50Ms, f.P99Ms)
		}
	}
	return json.Marshal(m)
}
