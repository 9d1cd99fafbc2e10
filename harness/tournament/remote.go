package tournament

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// spec is what a worker needs to play one game: the same facts a local game
// is played from, the bots by hash.
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
}

// Facts are what a worker must share with its coordinator before it plays:
// the same arena (the same referee) and the same sandbox runtime, to the
// image id. They travel with the queue (distrib's SetFacts).
type Facts struct {
	Game         string `json:"game"`
	Sandbox      string `json:"sandbox"`
	ImageID      string `json:"imageId,omitempty"`
	ArenaVersion string `json:"arenaVersion"`
}

// FactsOf reads a backend's facts.
func FactsOf(ctx context.Context, game, arenaVersion string, b sandbox.Backend) (Facts, error) {
	d, err := b.Describe(ctx)
	if err != nil {
		return Facts{}, fmt.Errorf("describe the %s sandbox: %w", b.Name(), err)
	}
	return Facts{Game: game, Sandbox: b.Name(), ImageID: d["imageId"], ArenaVersion: arenaVersion}, nil
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
	if len(why) > 0 {
		return fmt.Errorf("a worker must play as the coordinator would: %s", strings.Join(why, "; "))
	}
	return nil
}

// Machine is what a worker says of the machine it plays on, with each
// result: so that an organizer can show the machines were comparable.
type Machine struct {
	Host    string   `json:"host"`
	CPUs    int      `json:"cpus"`
	Sandbox string   `json:"sandbox"`
	ImageID string   `json:"imageId,omitempty"`
	Engine  string   `json:"engine,omitempty"`
	Bench   []Figure `json:"bench,omitempty"` // doctor --bench's figures
}

// Figure is one measurement of a machine.
type Figure struct {
	Name  string  `json:"name"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
}

// botObject names a bot in the object store by its content's hash: what
// runs (files, entry, name) with its metadata. Two bots sharing an
// executable under different names are different objects.
func botObject(data []byte) string { return "bot-" + submission.Sum(data) }

// botData is what travels of a bot.
func botData(b *submission.Bot) ([]byte, error) { return json.Marshal(b) }

// playRemote publishes every pending game to the queue and records the
// results workers send back, each re-judged before it counts, until none is
// left (or ctx ends).
func (o *Options) playRemote(ctx context.Context, st *Store, mu *sync.Mutex) error {
	q := o.Remote
	objects := make([]string, len(o.Bots))
	for i, b := range o.Bots {
		data, err := botData(b)
		if err != nil {
			return err
		}
		objects[i] = botObject(data)
		if err := q.Put(ctx, objects[i], data); err != nil {
			return fmt.Errorf("upload bot %s: %w", b.Name, err)
		}
	}
	facts, err := FactsOf(ctx, o.Config.Game, o.ArenaVersion, o.Backend)
	if err != nil {
		return err
	}
	data, err := json.Marshal(facts)
	if err != nil {
		return err
	}
	if err := q.SetFacts(ctx, data); err != nil {
		return err
	}
	if a, ok := o.Progress.(Assignments); ok {
		stop, err := q.WatchPlaying(func(p distrib.Playing) { a.Playing(p.Game, p.Worker) })
		if err != nil {
			return err
		}
		defer stop()
	}
	inflight := map[int]Record{}
	publish := func() error {
		for {
			mu.Lock()
			g, ok, err := st.Claim(context.WithoutCancel(ctx), func(r Record) string { return gameDir(r, o.Config.Bots) })
			mu.Unlock()
			if err != nil || !ok {
				return err
			}
			if err := keepAside(filepath.Join(o.Dir, g.Dir), fmt.Sprintf(".attempt-%d", g.Attempts)); err != nil {
				return fmt.Errorf("game %d: an earlier attempt: %w", g.ID, err)
			}
			sp, err := json.Marshal(spec{Game: o.Config.Game, Rules: o.Config.Rules, Seed: g.Seed, Limits: o.Config.Limits,
				OnFault: o.Config.OnFault, Evidence: o.Config.Evidence, ArenaVersion: o.ArenaVersion,
				White: objects[g.White], Black: objects[g.Black]})
			if err != nil {
				return err
			}
			job := distrib.Job{Game: g.ID, Attempt: g.Attempts + 1, Spec: sp}
			if g.AbortReason != "" {
				// An earlier attempt failed on a host: not at once again.
				job.NotBefore = time.Now().Add(retryDelay(g.Attempts))
			}
			if _, err := q.Publish(ctx, job); err != nil {
				return err
			}
			inflight[g.ID] = g
		}
	}
	if err := publish(); err != nil {
		return err
	}
	if len(inflight) == 0 {
		o.finished(q)
		return nil
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	err = q.Collect(cctx, func(r distrib.Result, archive []byte) error {
		g, ok := inflight[r.Game]
		if !ok || r.Attempt != g.Attempts+1 {
			slog.Info("tournament: a result already taken, or of an earlier attempt", "game", r.Game, "attempt", r.Attempt, "worker", r.Worker)
			return nil
		}
		// No result is unpacked that the disk may not hold; a stop while
		// waiting leaves it queued for the next run.
		if err := o.waitForSpace(ctx); err != nil {
			return err
		}
		res, refused, err := o.received(filepath.Join(o.Dir, g.Dir), r, archive)
		if err != nil {
			return err
		}
		delete(inflight, r.Game)
		if len(r.Machine) > 0 {
			var m Machine
			if json.Unmarshal(r.Machine, &m) != nil {
				refused = fmt.Sprintf("worker %s: what it says of its machine does not read", r.Worker)
			} else if err := st.SetMachine(context.WithoutCancel(ctx), r.Worker, r.Machine); err != nil {
				return err
			}
		}
		if refused != "" {
			err = o.abortAttempt(context.WithoutCancel(ctx), st, g, refused, mu)
		} else {
			g.Worker = r.Worker
			err = o.settle(ctx, st, g, res, mu)
		}
		if err != nil {
			return err
		}
		if err := publish(); err != nil {
			return err
		}
		if len(inflight) == 0 {
			stop()
			o.finished(q)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Stopped: the games in flight go back to pending; a worker still
		// playing one publishes a result the next run takes.
		for id := range inflight {
			if err := st.Release(context.WithoutCancel(ctx), id); err != nil {
				return err
			}
		}
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
func (o *Options) finished(q *distrib.Queue) {
	if err := q.Finished(); err != nil {
		o.warn("tell the workers the tournament is over", err)
	}
}

// received unpacks a worker's match directory into dir and re-judges it: a
// result counts only as replay recomputes it. A game the worker could not
// play, or a directory that cannot be read or does not replay, is refused
// (kept aside as evidence): the attempt is charged to the host and the game
// played again, never charged to a bot.
func (o *Options) received(dir string, r distrib.Result, archive []byte) (res transcript.Result, refused string, err error) {
	if r.Error != "" {
		return res, fmt.Sprintf("worker %s could not play it: %s", r.Worker, r.Error), nil
	}
	reject := func(why string) (transcript.Result, string, error) {
		slog.Warn("tournament: a worker's result is rejected", "game", r.Game, "worker", r.Worker, "why", why)
		if err := keepAside(dir, ".rejected-"+unsafeChars.ReplaceAllString(r.Worker, "-")); err != nil {
			return res, "", err
		}
		return res, fmt.Sprintf("the result of worker %s was rejected: %s", r.Worker, why), nil
	}
	if r.Lost != "" {
		return reject("its match directory could not be fetched: " + r.Lost)
	}
	if err := unpack(archive, dir); err != nil {
		return reject("its match directory cannot be read: " + err.Error())
	}
	rep, err := replay.File(dir)
	if err != nil {
		return reject(err.Error())
	}
	if !rep.Consistent {
		return reject("it does not replay: " + rep.Problem())
	}
	// The transcript must be signed with the key this worker was enrolled
	// with: a result is bound to a registered machine.
	if o.WorkerKey == nil {
		return reject("the coordinator has no registered keys to check its signature with")
	}
	want, err := o.WorkerKey(r.Worker)
	if err != nil {
		return reject(err.Error())
	}
	if rep.SignedBy == "" {
		return reject("its transcript is not signed")
	}
	if rep.Header.SigningKey != want {
		return reject(fmt.Sprintf("its transcript is signed by key %s, worker %s was enrolled with key %s", transcript.KeyID(rep.Header.SigningKey), r.Worker, transcript.KeyID(want)))
	}
	return rep.Result, "", nil
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
func (w *Worker) Play(ctx context.Context, j distrib.Job) ([]byte, error) {
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
	if _, err := match.Run(ctx, match.Config{Game: g, Rules: sp.Rules, Seed: sp.Seed, White: white, Black: black,
		Backend: w.Backend, Limits: sp.Limits, OnFault: match.Policy(sp.OnFault), Dir: dir,
		ArenaVersion: sp.ArenaVersion, Evidence: sp.Evidence, Signer: w.Signer}); err != nil {
		return nil, err
	}
	return pack(dir)
}

// A match directory travels as a tar of its regular files: the transcript,
// result.json and blobs/.
var packed = regexp.MustCompile(`^(` + regexp.QuoteMeta(transcript.FileName) + `|` + regexp.QuoteMeta(match.ResultFile) +
	`|` + transcript.BlobDir + `/[0-9a-f]{64}(\.zst)?)$`)

// maxUnpacked caps what a worker's archive may expand to.
const maxUnpacked = 512 << 20

func pack(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pack the match directory: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unpack writes a worker's archive into dir, which must not exist, taking
// only the files a match directory holds, as regular files, within a size
// cap: the archive is untrusted.
func unpack(data []byte, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, transcript.BlobDir), 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(data))
	var total int64
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || !packed.MatchString(h.Name) || seen[h.Name] {
			return fmt.Errorf("entry %q: not a file of a match directory", h.Name)
		}
		seen[h.Name] = true
		if total += h.Size; h.Size < 0 || total > maxUnpacked {
			return fmt.Errorf("the archive expands past %d bytes", maxUnpacked)
		}
		f, err := os.OpenFile(filepath.Join(dir, filepath.FromSlash(h.Name)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, cerr := io.Copy(f, io.LimitReader(tr, h.Size))
		if err := errors.Join(cerr, f.Close()); err != nil {
			return err
		}
	}
	if !seen[transcript.FileName] {
		return errors.New("no transcript")
	}
	return nil
}
