package tournament

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
	"sync"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/sandbox"
	"github.com/nats-io/nats.go"
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
		why = append(why, fmt.Sprintf("this worker runs bots under runtime %s, the coordinator under %s (start the worker with --runtime %s)", orDefault(mine.Runtime), orDefault(f.Runtime), orDefault(f.Runtime)))
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

// playRemote publishes every pending game to the queue and records the
// results workers send back, each re-judged before it counts, until none is
// left (or ctx ends).
func (o *Options) playRemote(ctx context.Context, st *Store, mu *sync.Mutex) error {
	x := o.Remote
	q := x.Queue
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
	// Who was handed each game, and when: a game's deadline runs from its
	// hand-out, and the holder a game past it is charged to. A game
	// waiting in the queue for a worker has no deadline running.
	type handout struct {
		distrib.Playing
		at time.Time
	}
	var held sync.Mutex
	holders := map[int]handout{}
	stopWatch, err := q.WatchPlaying(func(p distrib.Playing) {
		held.Lock()
		if p.Returned {
			if h, ok := holders[p.Game]; ok && h.Worker == p.Worker && h.Attempt == p.Attempt {
				delete(holders, p.Game) // back in the queue: its deadline stops
			}
		} else {
			holders[p.Game] = handout{p, time.Now()}
		}
		held.Unlock()
		if p.Returned {
			return
		}
		if a, ok := o.Progress.(Assignments); ok {
			a.Playing(p.Game-o.JobOffset, p.Worker)
		}
	})
	if err != nil {
		return err
	}
	defer stopWatch()
	rt := x.open()
	defer x.close(rt)
	// What was published for each game in flight, by its job's number: a
	// result counts only if its transcript is that game (match.Bound).
	type published struct {
		rec Record
		cfg match.Config
	}
	inflight := map[int]published{}
	publish := func() error {
		for {
			mu.Lock()
			g, ok, err := st.Claim(context.WithoutCancel(ctx), func(r Record) string { return gameDir(r, o.Config.Bots) })
			mu.Unlock()
			if err != nil {
				return err
			}
			if !ok {
				if len(inflight) > 0 {
					return nil // a Swiss round is paired once its games are in
				}
				mu.Lock()
				added, _, err := o.nextRound(context.WithoutCancel(ctx), st)
				mu.Unlock()
				if err != nil || !added {
					return err
				}
				continue
			}
			if err := keepAside(filepath.Join(o.Dir, g.Dir), fmt.Sprintf(".attempt-%d", g.Tries)); err != nil {
				return fmt.Errorf("game %d: an earlier attempt: %w", g.ID, err)
			}
			cfg := o.matchConfig(g, q.Tournament(), "")
			cfg.Job.Game += o.JobOffset
			sp, err := json.Marshal(specOf(cfg, objects[g.White], objects[g.Black]))
			if err != nil {
				return err
			}
			job := distrib.Job{Game: cfg.Job.Game, Attempt: cfg.Job.Attempt, Spec: sp, Deadline: x.deadline(cfg)}
			if g.AbortReason != "" {
				// An earlier attempt failed on a host: not at once again.
				job.NotBefore = time.Now().Add(retryDelay(g.Attempts))
			}
			x.add(rt, job.Game)
			if _, err := q.Publish(ctx, job); err != nil {
				return err
			}
			inflight[job.Game] = published{g, cfg}
		}
	}
	if err := publish(); err != nil {
		return err
	}
	if len(inflight) == 0 {
		if !x.shared {
			o.finished(q)
		}
		return nil
	}
	// Results checked by playing their games again here (see Checks): at
	// most as many at once as this machine plays games.
	type parked struct {
		rec Record
		res transcript.Result
	}
	checking := map[int]parked{}
	checked := make(chan checkOutcome)
	checkSlots := make(chan struct{}, max(o.Concurrency, 1))
	chctx, stopChecks := context.WithCancel(ctx)
	var checks sync.WaitGroup
	defer checks.Wait()
	defer stopChecks()
	accept := func(r distrib.Result, archive io.Reader) error {
		p, ok := inflight[r.Game]
		g := p.rec
		if !ok || r.Attempt != p.cfg.Job.Attempt {
			slog.Info("tournament: a result already taken, or of an earlier attempt", "game", r.Game, "attempt", r.Attempt, "worker", r.Worker)
			return nil
		}
		// No result is unpacked that the disk may not hold; a stop while
		// waiting leaves it queued for the next run.
		if err := o.waitForSpace(ctx); err != nil {
			return err
		}
		var res transcript.Result
		var refused string
		lie := x.isSuspended(r.Worker)
		if lie {
			// Shut out since it took the game: nothing it hands in counts.
			refused = fmt.Sprintf("worker %s is suspended", r.Worker)
		} else if res, refused, lie, err = o.received(filepath.Join(o.Dir, g.Dir), p.cfg, facts, r, archive); err != nil {
			return err
		}
		x.remove(rt, r.Game)
		if len(r.Machine) > 0 && !lie && refused == "" {
			// What a worker says of its machine is its word, shown as such;
			// its sandbox is what its transcript records. A description that
			// does not hold is dropped, never the result with it.
			if m, err := checkMachine(r.Machine); err != nil {
				slog.Warn("tournament: what a worker says of its machine is not kept", "worker", r.Worker, "why", err)
			} else {
				m.Sandbox = facts.Sandbox
				data, err := json.Marshal(m)
				if err != nil {
					return err
				}
				if err := st.SetMachine(context.WithoutCancel(ctx), r.Worker, data); err != nil {
					return err
				}
			}
		}
		if !lie && refused == "" && res.Reason != transcript.ReasonAborted && x.sample(r.Worker) {
			// Checked before it counts: the game stays in flight, its
			// hand-out over, while the coordinator plays it again.
			g.Worker = r.Worker
			checking[r.Game] = parked{g, res}
			checks.Add(1)
			go func() {
				defer checks.Done()
				select {
				case checkSlots <- struct{}{}:
				case <-chctx.Done():
					return
				}
				out := o.checkGame(chctx, p.cfg, filepath.Join(o.Dir, g.Dir))
				<-checkSlots
				out.game = r.Game
				select {
				case checked <- out:
				case <-chctx.Done():
				}
			}()
			return publish()
		}
		delete(inflight, r.Game)
		j := Judgement{Worker: r.Worker, Game: r.Game}
		switch {
		case lie:
			// Charged to the worker, never to the game: the worker is shut
			// out, and the game goes back to the queue at once.
			reason, detail := distrib.Why(refused)
			if err := o.suspend(x, distrib.Suspension{Worker: r.Worker, At: time.Now().UTC(), Game: r.Game, Reason: reason, Detail: detail}); err != nil {
				return err
			}
			j.Outcome = Refused
			err = st.Reject(context.WithoutCancel(ctx), g.ID)
		case refused != "":
			g.Worker = r.Worker
			j.Outcome = HostFault
			err = o.abortAttempt(context.WithoutCancel(ctx), st, g, refused, mu)
		default:
			g.Worker = r.Worker
			j.Outcome = Played
			if res.Reason == transcript.ReasonAborted {
				j.Outcome = HostFault
				if ctx.Err() != nil {
					j.Outcome = "" // stopped here: not the worker's doing
				}
			}
			err = o.settle(ctx, st, g, res, mu)
		}
		if err != nil {
			return err
		}
		if x.Judged != nil && j.Outcome != "" {
			if j.Outcome == Played {
				rec, err := st.game(context.WithoutCancel(ctx), g.ID)
				if err != nil {
					return err
				}
				j.TurnMs = rec.TurnMs
			}
			x.judged(j)
		}
		return publish()
	}
	// void plays again the games a suspended worker had counted unchecked:
	// shut out for a lie, it may have lied in any of them.
	void := func() error {
		wctx := context.WithoutCancel(ctx)
		workers, err := st.UncheckedWorkers(wctx)
		if err != nil {
			return err
		}
		for _, w := range workers {
			if !x.isSuspended(w) {
				continue
			}
			mu.Lock()
			ids, err := st.VoidUnchecked(wctx, w)
			mu.Unlock()
			if err != nil {
				return err
			}
			slog.Warn(fmt.Sprintf("tournament: %s worker %s counted unchecked are played again: it is suspended", words.Plural(len(ids), "game"), w), "games", ids)
		}
		return nil
	}
	// conclude counts or refuses a result once its check is done.
	conclude := func(c checkOutcome) error {
		pk, ok := checking[c.game]
		if !ok {
			return nil
		}
		delete(checking, c.game)
		delete(inflight, c.game)
		g, wctx := pk.rec, context.WithoutCancel(ctx)
		dir := filepath.Join(o.Dir, g.Dir)
		j := Judgement{Worker: g.Worker, Game: c.game}
		switch c.verdict {
		case checkLie:
			slog.Warn("tournament: game "+strconv.Itoa(c.game)+": a worker's result is refused by the coordinator's check", "worker", g.Worker, "why", c.why)
			aside, err := setAside(dir, g.Worker)
			if err == nil {
				err = keepChecks(dir, aside)
			}
			if err != nil {
				return err
			}
			if err := o.suspend(x, distrib.Suspension{Worker: g.Worker, At: time.Now().UTC(), Game: c.game,
				Reason: "its game is not the one the programs it was sent play", Detail: c.why}); err != nil {
				return err
			}
			j.Outcome = Refused
			if err := st.Reject(wctx, g.ID); err != nil {
				return err
			}
			if err := void(); err != nil {
				return err
			}
		default:
			if c.verdict == checkUnsure {
				o.warn(fmt.Sprintf("game %d: the check of worker %s's result proves nothing; it counts unchecked", c.game, g.Worker), errors.New(c.why))
			}
			if err := o.settle(ctx, st, g, pk.res, mu); err != nil {
				return err
			}
			if c.verdict == checkAgrees {
				if err := st.MarkChecked(wctx, g.ID); err != nil {
					return err
				}
			}
			j.Outcome = Played
			if x.Judged != nil {
				rec, err := st.game(wctx, g.ID)
				if err != nil {
					return err
				}
				j.TurnMs = rec.TurnMs
			}
		}
		x.judged(j)
		return publish()
	}
	// A sole queue's collector runs while this run takes results; a shared
	// one's runs for its owner.
	cctx, stop := context.WithCancel(ctx)
	collected := make(chan error, 1)
	ended, why := x.ended()
	if !x.shared {
		go func() { collected <- x.Collect(cctx) }()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	overdue := map[string]int{} // games each worker held past their deadline
	// First said a few seconds in: workers already there take games first.
	waitSaid := time.Now().Add(waitFirstSaid - waitSaidEvery)
	expire := func(now time.Time) error {
		handed := 0
		for game, p := range inflight {
			if _, ok := checking[game]; ok {
				continue // its result is in, and being checked here
			}
			held.Lock()
			h, ok := holders[game]
			held.Unlock()
			if !ok || h.Attempt != p.cfg.Job.Attempt {
				continue // in the queue: no deadline runs until a worker takes it
			}
			handed++
			if now.Before(h.at.Add(x.deadline(p.cfg))) {
				continue
			}
			holder := h.Worker
			reason := fmt.Sprintf("no result within its deadline (%v from when it was handed out to worker %s)", x.deadline(p.cfg).Round(time.Second), holder)
			slog.Warn("tournament: game "+strconv.Itoa(game)+": "+reason, "worker", holder)
			delete(inflight, game)
			x.remove(rt, game)
			q.Withdraw(game, p.cfg.Job.Attempt)
			g := p.rec
			g.Worker = holder
			if err := o.abortAttempt(context.WithoutCancel(ctx), st, g, reason, mu); err != nil {
				return err
			}
			x.judged(Judgement{Worker: holder, Game: game, Outcome: Overdue})
			if overdue[holder]++; overdue[holder] >= maxOverdue {
				if err := o.suspend(x, distrib.Suspension{Worker: holder, At: now.UTC(), Game: game,
					Reason: fmt.Sprintf("%d games it took passed their deadlines without a result", overdue[holder])}); err != nil {
					return err
				}
			}
		}
		if err := void(); err != nil {
			return err
		}
		if handed == 0 && len(inflight) > len(checking) && now.Sub(waitSaid) >= waitSaidEvery {
			// Nothing aborts a game for want of a worker: the run says so
			// and waits.
			waitSaid = now
			queued := len(inflight) - len(checking)
			if w, ok := o.Progress.(WorkerWaiter); ok {
				w.WaitingForWorkers(queued)
			} else {
				slog.Info(fmt.Sprintf("tournament: waiting for a worker: %s queued, none handed out; each game's deadline runs from its hand-out", words.Plural(queued, "game")))
			}
		}
		return publish()
	}
	err = func() error {
		for len(inflight) > 0 {
			select {
			case now := <-tick.C:
				if err := expire(now); err != nil {
					return err
				}
			case d := <-rt.in:
				err := accept(d.r, d.archive)
				d.taken <- err
				if err != nil {
					return err
				}
			case c := <-checked:
				if err := conclude(c); err != nil {
					return err
				}
			case err := <-collected:
				collected <- err
				return err
			case <-ended:
				if ctx.Err() == nil {
					return why()
				}
				return nil
			case <-ctx.Done():
				return nil
			}
		}
		return nil
	}()
	stop()
	if !x.shared {
		if cerr := <-collected; err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if len(inflight) == 0 {
		if !x.shared {
			o.finished(q)
		}
		return nil
	}
	if ctx.Err() != nil {
		// Stopped: the games in flight go back to pending; a worker still
		// playing one publishes a result the next run takes.
		for _, p := range inflight {
			if err := st.Release(context.WithoutCancel(ctx), p.rec.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

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
	Suspended(distrib.Suspension)
}

// suspend shuts a worker that handed in a false result out of the queue,
// once, and says so: in the log, to the progress.
func (o *Options) suspend(x *Exchange, s distrib.Suspension) error {
	first, err := x.suspend(s)
	if !first {
		return err
	}
	slog.Warn("tournament: "+s.String(), "worker", s.Worker, "game", s.Game)
	if p, ok := o.Progress.(Suspensions); ok {
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
func (o *Options) finished(q *distrib.Queue) {
	if err := q.Finished(); err != nil {
		o.warn("tell the workers the tournament is over", err)
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
		if (rel == transcript.FileName || rel == match.ResultFile) && d.Type().IsRegular() && info.Size() <= keptWhole {
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

// WorkersDir is where a tournament keeps its enrolled workers' keys and its
// certificate authority.
func WorkersDir(dir string) string { return filepath.Join(dir, "workers") }

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
	return func(w string) (string, error) { return distrib.SigningKeyOf(WorkersDir(dir), w) }
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
		return configErrorf("listen and an existing server's URL: choose one")
	}
	if (r.Cert == "") != (r.Key == "") {
		return configErrorf("a server certificate and its key go together")
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
		return "", 0, configErrorf("listen: want HOST:PORT, got %q", r.Listen)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, configErrorf("listen: bad port %q", port)
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
	// Readmitted (distrib.Readmit), it is let in again within seconds.
	Suspend func(distrib.Suspension) error
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
	name, wdir := QueueName(r.Dir), WorkersDir(r.Dir)
	enrolled, err := distrib.Admitted(wdir)
	if err != nil {
		return nil, err
	}
	out, err := distrib.SuspensionList(wdir)
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
		err = q.AddWorkers(ctx, distrib.Names(enrolled))
	}
	if err != nil {
		close(watched)
		c.Close()
		return nil, err
	}
	c.Queue = q
	q.SpoolIn(filepath.Join(r.Dir, "spool"))
	c.Suspend = func(s distrib.Suspension) error {
		if err := distrib.Shut(q, srv, wdir, s); err != nil {
			return err
		}
		r.Notify(s.String() + "; arena workers readmit " + r.Dir + " " + s.Worker + " lets it in again")
		return nil
	}
	c.Suspended = func(worker string) bool { return distrib.IsSuspended(wdir, worker) }
	q.OnStrike(func(s distrib.Strike) {
		// What the protocol never sends: ignored, counted, and at
		// maxStrikes within distrib.StrikeWindow the worker is shut out
		// (again, if it was let in again and strikes out anew).
		if s.Count < maxStrikes || c.Suspended(s.Worker) {
			return
		}
		err := c.Suspend(distrib.Suspension{Worker: s.Worker, At: time.Now().UTC(),
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
		r.Notify(fmt.Sprintf("enrolled: %s; on each: arena worker --creds NAME.creds --join %s", strings.Join(distrib.Names(enrolled), ", "), url))
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
		now, err := distrib.Admitted(wdir)
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
		if err := q.AddWorkers(ctx, distrib.Names(now)); err != nil {
			slog.Warn("admit the enrolled workers", "err", err)
			continue
		}
		if srv != nil && !maps.Equal(now, serving) {
			if err := srv.SetWorkers(now); err != nil {
				slog.Warn("admit the enrolled workers", "err", err)
				continue
			}
		}
		for _, n := range distrib.Names(now) {
			if known[n] == "" || serving[n] == "" {
				notify("worker " + n + " admitted")
			}
		}
		for _, n := range distrib.Names(serving) {
			if now[n] == "" {
				notify("worker " + n + " shut out (revoked or suspended)")
			}
		}
		known = now
	}
}
