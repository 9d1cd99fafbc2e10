package runner

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/sandbox"
)

// spec is what a worker needs to play one game: the match a local game is
// played as (matchConfig), the bots by hash.
type spec struct {
	Game         string              `json:"game"`
	Rules        map[string]string   `json:"rules"`
	Seed         uint64              `json:"seed"`
	Limits       sandbox.Limits      `json:"limits"`
	OnFault      string              `json:"onFault"`
	Evidence     transcript.Evidence `json:"evidence"`
	White        string              `json:"white"` // object name of the bot
	Black        string              `json:"black"`
	ArenaVersion string              `json:"arenaVersion"`
	Pair         int                 `json:"pair,omitempty"`
	Opening      string              `json:"opening,omitempty"`
}

// Facts are what a worker must share with its coordinator before it plays:
// the same arena (the same referee) and the same sandbox runtime, to the
// image id. They travel with the queue (distrib's SetFacts).
type Facts struct {
	Game         string `json:"game"`
	Sandbox      string `json:"sandbox"`
	ImageID      string `json:"imageId,omitempty"`
	Runtime      string `json:"runtime,omitempty"`
	ArenaVersion string `json:"arenaVersion"`
}

// FactsOf reads a backend's facts.
func FactsOf(ctx context.Context, game, arenaVersion string, b sandbox.Backend) (Facts, error) {
	d, err := b.Describe(ctx)
	if err != nil {
		return Facts{}, fmt.Errorf("describe the %s sandbox: %w", b.Name(), err)
	}
	return Facts{Game: game, Sandbox: b.Name(), ImageID: d["imageId"], Runtime: d["runtime"], ArenaVersion: arenaVersion}, nil
}

// Admit says why a worker with facts mine may not play the coordinator's
// games, or nil.
func (f Facts) Admit(mine Facts) error {
	var why []string
	if mine.ArenaVersion != f.ArenaVersion {
		why = append(why, fmt.Sprintf("this worker runs arena %s, the coordinator %s", mine.ArenaVersion, f.ArenaVersion))
	}
	if mine.Sandbox != f.Sandbox {
		why = append(why, fmt.Sprintf("this worker's sandbox is %s, the tournament's %s", mine.Sandbox, f.Sandbox))
	} else if mine.ImageID != f.ImageID {
		why = append(why, fmt.Sprintf("this worker's runtime image is %s, the coordinator's %s (build the same images here, or docker save there and docker load here)", mine.ImageID, f.ImageID))
	}
	if mine.Sandbox == f.Sandbox && mine.Runtime != f.Runtime {
		why = append(why, fmt.Sprintf("this worker runs bots under runtime %s, the coordinator under %s (start the worker under runtime %s)", orDefault(mine.Runtime), orDefault(f.Runtime), orDefault(f.Runtime)))
	}
	if len(why) > 0 {
		return fmt.Errorf("a worker must play as the coordinator would: %s", strings.Join(why, "; "))
	}
	return nil
}

// orDefault names a runtime, "" being none.
func orDefault(runtime string) string {
	if runtime == "" {
		return "none"
	}
	return runtime
}

// specOf is the spec of a match whose bots are stored as white and black.
func specOf(cfg match.Config, white, black string) spec {
	return spec{Game: cfg.Game.Name(), Rules: cfg.Rules, Seed: cfg.Seed, Limits: cfg.Limits, OnFault: string(cfg.OnFault),
		Evidence: cfg.Evidence, ArenaVersion: cfg.ArenaVersion, White: white, Black: black, Pair: cfg.Job.Pair, Opening: cfg.Job.Opening}
}

// sandboxFacts are the facts of the coordinator's sandbox a game's
// transcript must carry (match.SandboxFacts).
func (f Facts) sandboxFacts() map[string]string {
	return map[string]string{"backend": f.Sandbox, "imageId": f.ImageID, "runtime": f.Runtime}
}

// botObject names a bot in the object store by its content's hash: what
// runs (files, entry, name) with its metadata. Two bots sharing an
// executable under different names are different objects.
func botObject(data []byte) string { return "bot-" + submission.Sum(data) }

// botData is what travels of a bot.
func botData(b *submission.Bot) ([]byte, error) { return json.Marshal(b) }

// maxStrikes is how many times, within distrib.StrikeWindow, a worker may
// send what the protocol never sends (news of a game it does not hold, a
// flood) before it is suspended: one may be a message delayed past a
// coordinator's restart.
const maxStrikes = 10

// waitSaidEvery is how often a run that waits for a worker says so, and
// waitFirstSaid how soon after its start.
const (
	waitSaidEvery = time.Minute
	waitFirstSaid = 3 * time.Second
)

// maxOverdue is how many games a worker may hold past their deadlines
// before it is suspended: one may be a machine that died.
const maxOverdue = 2

// Suspensions is a Progress told of each worker suspended.
type Suspensions interface {
	Suspended(roster.Suspension)
}

// suspend shuts a worker that handed in a false result out of the queue,
// once, and says so: in the log, to the progress.
func (rn *run) suspend(x *Exchange, s roster.Suspension) error {
	first, err := x.suspend(s)
	if !first {
		return err
	}
	slog.Warn("tournament: "+s.String(), "worker", s.Worker, "game", s.Game)
	if p, ok := rn.Progress.(Suspensions); ok {
		p.Suspended(s)
	}
	if err != nil {
		return fmt.Errorf("suspend worker %s: %w", s.Worker, err)
	}
	return nil
}

// retryDelay is how long a game waits after its attempts failed on hosts:
// 5 s per failed attempt, at most a minute, so that a passing fault (an
// engine restarting, a full disk being cleared) passes first.
func retryDelay(attempts int) time.Duration {
	return min(time.Duration(attempts)*5*time.Second, time.Minute)
}

// finished tells the workers there is no game left; one that does not hear
// it waits for games that never come, which costs nothing but its operator's
// Ctrl-C.
func (rn *run) finished(q *distrib.Queue) {
	if err := q.Finished(); err != nil {
		rn.warn("tell the workers the tournament is over", err)
	}
}

// rejectedManifest lists, in a rejected result's directory kept aside,
// the files it held beside its transcript and result: each one's name,
// size and SHA-256, the evidence of what was sent, without its bytes.
const rejectedManifest = "rejected-files.txt"

// keptWhole is the most of a rejected result's transcript or result.json
// kept as it came: an honest game's transcript is far smaller, and a larger
// one is junk, listed in the manifest like the rest.
const keptWhole = 8 << 20

// pruneRejected leaves in a rejected result's directory its transcript and
// result (what says what the worker claimed) when they are no larger than
// keptWhole, and a manifest of every other file in place of the file: junk
// a worker sent is not kept on the coordinator's disk (a 400 MiB archive of
// noise was kept whole, and a 46 KB sparse archive became 512 MiB of NULs).
func pruneRejected(dir string) error {
	var manifest strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if (rel == transcript.FileName || rel == transcript.ResultFile) && d.Type().IsRegular() && info.Size() <= keptWhole {
			return nil
		}
		sum := "-"
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			sum = hex.EncodeToString(h.Sum(nil))
		}
		fmt.Fprintf(&manifest, "%s\t%d\t%s\n", strconv.Quote(rel), info.Size(), sum)
		return os.Remove(p)
	})
	if err != nil || manifest.Len() == 0 {
		return err
	}
	return os.WriteFile(filepath.Join(dir, rejectedManifest), []byte(manifest.String()), 0o600)
}

// setAside keeps a worker's refused match directory aside as evidence
// (pruneRejected: its claims, and a manifest of the rest), and says where.
func setAside(dir, worker string) (string, error) {
	if err := pruneRejected(dir); err != nil {
		return "", err
	}
	return keptAside(dir, ".rejected-"+unsafeChars.ReplaceAllString(worker, "-"))
}

// received unpacks a worker's match directory into dir and re-judges it: a
// result counts only as replay recomputes it, signed by the worker's enrolled
// key, and only if its transcript is the game that was published (want, on a
// sandbox with the coordinator's facts). A game the worker could not play is
// refused (refused says why): a host's fault, the attempt charged to the
// game. A directory that cannot be fetched or read, does not replay, is not
// signed by the worker's enrolled key or is another game is refused for what
// it claims (lie, and refused says why; kept aside as evidence): the worker
// is to be suspended, the game played again. Neither is ever charged to a
// bot.
func (o *Options) received(dir string, want match.Config, facts Facts, r distrib.Result, archive io.Reader) (res transcript.Result, refused string, lie bool, err error) {
	if r.Error != "" {
		return res, fmt.Sprintf("worker %s could not play it: %s", r.Worker, r.Error), false, nil
	}
	reject := func(why string) (transcript.Result, string, bool, error) {
		slog.Warn("tournament: a worker's result is rejected", "game", r.Game, "worker", r.Worker, "why", why)
		if _, err := setAside(dir, r.Worker); err != nil {
			return res, "", false, err
		}
		return res, why, true, nil
	}
	if r.Lost != "" {
		return reject("its match directory could not be fetched: " + r.Lost)
	}
	if err := unpack(archive, dir); errors.Is(err, errOwnDisk) {
		return res, "", false, err // the coordinator's disk: says nothing of the worker
	} else if err != nil {
		return reject("its match directory cannot be read: " + err.Error())
	}
	// The chain is checked a line at a time first, within the most lines
	// the game can have: a transcript of millions of lines, or one broken
	// early, is refused before it is read whole.
	if err := verifyTranscript(dir, want); err != nil {
		return reject("its transcript does not hold: " + err.Error())
	}
	rep, err := replay.File(dir)
	if err != nil {
		return reject(err.Error())
	}
	if !rep.Consistent {
		return reject("it does not replay: " + rep.Problem())
	}
	if err := resultFileSays(dir, rep.Result); err != nil {
		return reject(err.Error())
	}
	if err := onlyNamed(dir, want.Evidence); err != nil {
		return reject("its match directory holds more than its evidence: " + err.Error())
	}
	// The transcript must be signed with the key this worker was enrolled
	// with: a result is bound to a registered machine.
	if o.WorkerKey == nil {
		return reject("the coordinator has no registered keys to check its signature with")
	}
	key, err := o.WorkerKey(r.Worker)
	if err != nil {
		return reject(err.Error())
	}
	if rep.SignedBy == "" {
		return reject("its transcript is not signed")
	}
	if rep.Header.SigningKey != key {
		return reject(fmt.Sprintf("its transcript is signed by key %s, worker %s was enrolled with key %s", transcript.KeyID(rep.Header.SigningKey), r.Worker, transcript.KeyID(key)))
	}
	if err := match.Bound(rep.Header, want, facts.sandboxFacts()); err != nil {
		return reject("it is not the game it was sent: " + err.Error())
	}
	return rep.Result, "", false, nil
}

// verifyTranscript checks the hash chain of the transcript in a worker's
// match directory, streaming, and that it has no more lines than a game of
// cfg can (its turns, a header and a footer).
func verifyTranscript(dir string, cfg match.Config) error {
	f, err := os.Open(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return err
	}
	defer f.Close() // read only
	return transcript.VerifyStream(f, transcript.Limits{Lines: maxTurns(cfg) + 2})
}

// QueueName is the name of a tournament's queue: its directory's.
func QueueName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Base(dir)
	}
	return filepath.Base(abs)
}

// WorkerKey is the key (hex ed25519) the worker was enrolled with in the
// tournament in dir (Options.WorkerKey).
func WorkerKey(dir string) func(worker string) (string, error) {
	return func(w string) (string, error) { return distrib.SigningKeyOf(tournament.WorkersDir(dir), w) }
}

// Remote says how a tournament's games reach workers: through a NATS
// JetStream server it runs itself (Listen) or an organizer's (URL).
type Remote struct {
	Dir string // the tournament directory
	// Listen is HOST:PORT of the server the coordinator runs, TLS only,
	// admitting the enrolled workers; its store in Dir/nats. Port 0: any.
	Listen string
	// Cert and Key are the server's certificate (PEM) instead of one the
	// tournament's own authority issues for Names and this machine's names
	// and addresses.
	Cert, Key string
	Names     []string
	// URL is an organizer's server or cluster, reached with the coordinator's
	// Creds, its certificate checked against CA (default: the system's).
	URL, Creds, CA string
	// AckWait is how long a game may go without news from its worker
	// before another worker gets it.
	AckWait time.Duration
	// Notify is told what an organizer should know: where workers join,
	// who is enrolled, who was enrolled or revoked while it runs.
	Notify func(msg string)
	// Checks say how often this machine plays a worker's game again to
	// check its result (see Checks).
	Checks Checks
}

// Enabled says whether the games go to workers at all.
func (r Remote) Enabled() bool { return r.Listen != "" || r.URL != "" }

// Check refuses settings that do not go together.
func (r Remote) Check() error {
	if r.Listen != "" && r.URL != "" {
		return tournament.ConfigErrorf("listen and an existing server's URL: choose one")
	}
	if (r.Cert == "") != (r.Key == "") {
		return tournament.ConfigErrorf("a server certificate and its key go together")
	}
	if err := r.Checks.Validate(); err != nil {
		return err
	}
	if r.Listen != "" {
		if _, _, err := r.listen(); err != nil {
			return err
		}
	}
	return nil
}

// listen reads Listen as a host and a port.
func (r Remote) listen() (string, int, error) {
	host, port, err := net.SplitHostPort(r.Listen)
	if err != nil {
		return "", 0, tournament.ConfigErrorf("listen: want HOST:PORT, got %q", r.Listen)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, tournament.ConfigErrorf("listen: bad port %q", port)
	}
	return host, p, nil
}

// Coordinator is a tournament's open queue: Options.Remote. Workers enrolled
// or revoked while it is open are admitted or cut off within seconds.
type Coordinator struct {
	Queue *distrib.Queue
	URL   string // where workers join
	Name  string // the tournament's queue name
	close func()
	// Suspend shuts a worker out: recorded in the workers directory, the
	// worker told, its connection closed by the coordinator's own server.
	// Readmitted (roster.Readmit), it is let in again within seconds.
	Suspend func(roster.Suspension) error
	// Suspended says whether a worker is suspended now.
	Suspended func(worker string) bool
	// Checks are the exchanges' (Remote.Checks).
	Checks Checks
}

// Sole is the exchange of a tournament that owns the queue (see Sole).
func (c *Coordinator) Sole() *Exchange {
	x := Sole(c.Queue)
	x.Suspend, x.Suspended, x.Checks = c.Suspend, c.Suspended, c.Checks
	return x
}

// Shared is the exchange of an event whose runs share the queue (see
// Shared).
func (c *Coordinator) Shared() *Exchange {
	x := Shared(c.Queue)
	x.Suspend, x.Suspended, x.Checks = c.Suspend, c.Suspended, c.Checks
	return x
}

// Close stops what Coordinate started.
func (c *Coordinator) Close() { c.close() }

// Coordinate opens the tournament's queue as r says: it starts the server
// (or connects to the organizer's), makes each enrolled worker's upload
// bucket and watches the enrolment.
func Coordinate(ctx context.Context, r Remote) (*Coordinator, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if r.Notify == nil {
		r.Notify = func(string) {}
	}
	if r.AckWait == 0 {
		r.AckWait = distrib.DefaultAckWait
	}
	name, wdir := QueueName(r.Dir), tournament.WorkersDir(r.Dir)
	enrolled, err := roster.Admitted(wdir)
	if err != nil {
		return nil, err
	}
	out, err := roster.SuspensionList(wdir)
	if err != nil {
		return nil, err
	}
	for _, s := range out {
		r.Notify(s.String() + "; arena workers readmit " + r.Dir + " " + s.Worker + " lets it in again")
	}
	var srv *distrib.Server
	var nc *nats.Conn
	url := r.URL
	if r.Listen != "" {
		if srv, err = r.startServer(name, wdir, enrolled); err != nil {
			return nil, err
		}
		url = srv.URL()
		if nc, err = srv.Connect("arena coordinator"); err != nil {
			srv.Close()
			return nil, err
		}
	} else {
		opts := []nats.Option{nats.Name("arena coordinator"), nats.MaxReconnects(-1)}
		if r.Creds != "" {
			opts = append(opts, nats.UserCredentials(r.Creds))
		}
		if r.CA != "" {
			opts = append(opts, nats.RootCAs(r.CA))
		}
		if nc, err = nats.Connect(url, opts...); err != nil {
			return nil, fmt.Errorf("connect to %s: %w", url, err)
		}
	}
	wctx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	watched := make(chan struct{})
	var q *distrib.Queue
	c := &Coordinator{URL: url, Name: name, Checks: r.Checks, close: func() {
		stopWatch()
		<-watched
		if q != nil {
			q.Close()
		}
		nc.Close()
		if srv != nil {
			srv.Close()
		}
	}}
	q, err = distrib.Open(ctx, nc, name, r.AckWait)
	if err == nil {
		err = q.AddWorkers(ctx, roster.Names(enrolled))
	}
	if err != nil {
		close(watched)
		c.Close()
		return nil, err
	}
	c.Queue = q
	q.SpoolIn(filepath.Join(r.Dir, "spool"))
	c.Suspend = func(s roster.Suspension) error {
		if err := distrib.Shut(q, srv, wdir, s); err != nil {
			return err
		}
		r.Notify(s.String() + "; arena workers readmit " + r.Dir + " " + s.Worker + " lets it in again")
		return nil
	}
	c.Suspended = func(worker string) bool { return roster.IsSuspended(wdir, worker) }
	q.OnStrike(func(s distrib.Strike) {
		// What the protocol never sends: ignored, counted, and at
		// maxStrikes within distrib.StrikeWindow the worker is shut out
		// (again, if it was let in again and strikes out anew).
		if s.Count < maxStrikes || c.Suspended(s.Worker) {
			return
		}
		err := c.Suspend(roster.Suspension{Worker: s.Worker, At: time.Now().UTC(),
			Reason: fmt.Sprintf("%d times it sent what no worker sends", s.Count), Detail: "the last: " + s.Why})
		if err != nil {
			slog.Warn("suspend a worker", "worker", s.Worker, "err", err)
		}
	})
	go func() {
		defer close(watched)
		watchEnrolment(wctx, r.Notify, wdir, q, srv, enrolled)
	}()
	r.Notify(fmt.Sprintf("games go to workers at %s (tournament %s)", url, name))
	if len(enrolled) == 0 {
		r.Notify(fmt.Sprintf("no worker is enrolled yet; for each machine: arena enroll --out %s NAME, then there: arena worker --creds NAME.creds --join %s", r.Dir, url))
	} else {
		r.Notify(fmt.Sprintf("enrolled: %s; on each: arena worker --creds NAME.creds --join %s", strings.Join(roster.Names(enrolled), ", "), url))
	}
	return c, nil
}

// startServer starts the tournament's own queue server.
func (r Remote) startServer(name, wdir string, enrolled map[string]string) (*distrib.Server, error) {
	host, p, err := r.listen()
	if err != nil {
		return nil, err
	}
	tlsConf, err := r.serverTLS(wdir, host)
	if err != nil {
		return nil, err
	}
	store := filepath.Join(r.Dir, "nats")
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, err
	}
	return distrib.StartServer(distrib.ServerOptions{Dir: store, Host: host, Port: p, TLS: tlsConf, Tournament: name, Workers: enrolled, Enrolment: wdir})
}

// serverTLS is the certificate the coordinator's server shows: the
// organizer's own, or one its tournament's authority issues for this
// machine's names and addresses.
func (r Remote) serverTLS(wdir, host string) (*tls.Config, error) {
	if r.Cert != "" {
		pair, err := tls.LoadX509KeyPair(r.Cert, r.Key)
		if err != nil {
			return nil, fmt.Errorf("the server certificate: %w", err)
		}
		return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}, nil
	}
	ca, err := distrib.LoadOrCreateCA(wdir)
	if err != nil {
		return nil, err
	}
	return ca.ServerTLS(append(distrib.LocalHosts(host), r.Names...))
}

// enrolmentPoll is how often the enrolment is read again.
const enrolmentPoll = 2 * time.Second

// watchEnrolment admits workers enrolled after the start, or readmitted, and
// cuts off those revoked (their .pub removed) or suspended: at each
// enrolmentPoll, and at once when the server admits a new worker's key at
// its first connection (its upload bucket is then made before it looks).
func watchEnrolment(ctx context.Context, notify func(string), wdir string, q *distrib.Queue, srv *distrib.Server, known map[string]string) {
	t := time.NewTicker(enrolmentPoll)
	defer t.Stop()
	var joined <-chan struct{}
	if srv != nil {
		joined = srv.Joined()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-joined:
		}
		now, err := roster.Admitted(wdir)
		if err != nil {
			slog.Warn("read the enrolled workers", "err", err)
			continue
		}
		// known is whom the buckets were made for; serving whom the server
		// admits now: a worker suspended meanwhile left it, and is told as
		// admitted when let in again; one enrolled since joined it at its
		// first connection, and has no bucket yet.
		serving := known
		if srv != nil {
			serving = srv.Workers()
		}
		if maps.Equal(now, known) && maps.Equal(now, serving) {
			continue
		}
		if err := q.AddWorkers(ctx, roster.Names(now)); err != nil {
			slog.Warn("admit the enrolled workers", "err", err)
			continue
		}
		if srv != nil && !maps.Equal(now, serving) {
			if err := srv.SetWorkers(now); err != nil {
				slog.Warn("admit the enrolled workers", "err", err)
				continue
			}
		}
		for _, n := range roster.Names(now) {
			if known[n] == "" || serving[n] == "" {
				notify("worker " + n + " admitted")
			}
		}
		for _, n := range roster.Names(serving) {
			if now[n] == "" {
				notify("worker " + n + " shut out (revoked or suspended)")
			}
		}
		known = now
	}
}
