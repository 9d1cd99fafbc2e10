// Package match plays one official match: two bots, one game, one sandbox
// backend, one seed. It drives the referee with the sandbox: the referee says
// whom to ask what, the mover's Box runs the turn (a fresh process, or a line
// to its session), the referee settles the facts, and the runner delivers the
// lines it decided, keeps the data files and writes the transcript as it goes.
//
// A fault of the sandbox or host ends the match as aborted, charged to nobody.
// Whatever happens, the containers are removed and the transcript ends in a
// footer. The runner must never judge anything itself: every verdict is the
// referee's, so that replay recomputes exactly what was played.
package match

import (
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Policy says what a bot's fault costs (see referee.Policy).
type Policy = referee.Policy

// Fault policies.
const (
	Forfeit    = referee.Forfeit
	RandomMove = referee.RandomMove
)

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) { return referee.ParsePolicy(s) }

// Observer is told what happens as it happens (live display). Calls come from
// the goroutine running the match; st is the match's own position, read
// during the call only.
type Observer interface {
	Started(h transcript.Header, st rules.State)
	Turn(t transcript.Turn, st rules.State)
	Finished(r transcript.Result)
}

// Config is one match.
type Config struct {
	Game         rules.Game
	Rules        map[string]string
	Seed         uint64
	White, Black *submission.Bot
	Backend      sandbox.Backend
	Limits       sandbox.Limits
	OnFault      Policy
	// Dir receives transcript.jsonl, result.json and blobs/. It is created if
	// missing and must not hold a transcript already.
	Dir          string
	ArenaVersion string
	Labels       map[string]string
	Observer     Observer
	// Signer, when set, signs the transcript's footer (see transcript.SetSigner).
	Signer ed25519.PrivateKey
	// Evidence is how much data-file content to keep (default: every
	// changed version, no budget). Hashes are always recorded.
	Evidence transcript.Evidence
	// BlobStore, when set, is a directory whose blobs/ many matches share:
	// each data-file version is stored there once and linked into the
	// match's blobs/ (transcript.PutShared), and only what is new to it
	// counts against Evidence.Budget.
	BlobStore string
	// Job, when set, names the tournament game and attempt this match is
	// played for; the header records it (see Bound).
	Job *transcript.Job
}

// RandomSeed returns a seed below 2^53, so that it survives any JSON reader.
func RandomSeed() uint64 {
	var b [8]byte
	crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) & (1<<53 - 1)
}

// Run plays the match. The error is for a configuration that cannot start
// (unknown rules, unwritable directory) or for evidence that could not be
// written (the transcript's footer, result.json): a lost result is never
// silent. Everything else ends in a Result, aborted or not.
func Run(ctx context.Context, cfg Config) (transcript.Result, error) {
	var res transcript.Result
	ref, err := cfg.settle()
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return res, err
	}
	tw, err := transcript.Create(cfg.Dir)
	if err != nil {
		return res, fmt.Errorf("match: %w", err)
	}
	if cfg.Signer != nil {
		tw.SetSigner(cfg.Signer)
	}
	if cfg.BlobStore != "" {
		tw.ShareBlobs(cfg.BlobStore)
	}
	m := &runner{cfg: cfg, ref: ref, tw: tw, start: time.Now(), stored: map[string]bool{},
		log: slog.With("match", filepath.Base(cfg.Dir), "game", cfg.Game.Name())}
	return m.run(ctx)
}

type runner struct {
	cfg Config
	ref *referee.Referee
	tw  *transcript.Writer
	log *slog.Logger
	// sessions are the line protocol's bot processes; ended says how they
	// ended.
	sessions [2]sandbox.Session
	ended    [2]transcript.SessionEnd
	start    time.Time
	boxes    [2]sandbox.Box
	// release gives back the room the backend admitted the boxes with.
	release func()
	// stored are the blobs this match wrote and storedBytes their size on
	// disk; final is each side's data files after its last turn.
	stored      map[string]bool
	storedBytes int64
	final       [2][]string
	// header is set once the header record is written.
	header *transcript.Header
	// observed: the observer was told the match started.
	observed bool
}

func (m *runner) run(ctx context.Context) (res transcript.Result, err error) {
	// An observer told the match started is told it finished, however it
	// ended: with its result, or aborted.
	defer func() {
		if m.observed {
			m.cfg.Observer.Finished(res)
		}
	}()
	defer func() {
		if cerr := m.tw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close the transcript: %w", cerr)
		}
	}()
	defer m.closeBoxes(ctx)
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 4096)
			buf = buf[:runtime.Stack(buf, false)]
			res, err = m.finish(fmt.Sprintf("internal error: %v\n%s", r, buf))
		}
	}()
	if reason := m.play(ctx); reason != "" {
		if ctx.Err() != nil {
			reason = "interrupted: " + context.Cause(ctx).Error()
		}
		m.log.Warn("match aborted", "reason", reason)
		return m.finish(reason)
	}
	return m.finish("")
}

// play runs the match to its end. It returns why it could not, or "".
func (m *runner) play(ctx context.Context) string {
	header, err := m.describe(ctx)
	if err != nil {
		return "describe sandbox: " + err.Error()
	}
	m.tw.SetProvisional(func() any {
		r := m.result("the match did not finish (arena stopped)")
		r.Winner, r.Reason = transcript.WinnerNone, transcript.ReasonAborted
		return transcript.Footer{Result: r, FinishedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	})
	if err := m.tw.Append(transcript.TypeHeader, header); err != nil {
		return "write transcript: " + err.Error()
	}
	m.header = &header
	if m.cfg.Observer != nil {
		m.cfg.Observer.Started(header, m.ref.State())
		m.observed = true
	}
	// A bot that did not build cannot play: it loses (both: a draw).
	failed := false
	for _, side := range rules.Sides {
		if reason := m.bot(side).BuildError; reason != "" {
			failed = true
			if err := m.record(m.ref.BuildFailed(side, reason).Record); err != nil {
				return err.Error()
			}
		}
	}
	if failed {
		return ""
	}
	if err := m.openBoxes(ctx); err != nil {
		return err.Error()
	}
	if m.ref.Lines() != nil {
		defer m.stopSessions(ctx)
		if err := m.startSessions(ctx); err != nil {
			return err.Error()
		}
	}
	for !m.ref.Over() {
		if err := ctx.Err(); err != nil {
			return "interrupted"
		}
		if err := m.turn(ctx); err != nil {
			return err.Error()
		}
	}
	return ""
}

// turn asks the side to move, has the referee settle what happened, delivers
// the lines it decided and records the turn.
func (m *runner) turn(ctx context.Context) error {
	a, err := m.ref.Next()
	if err != nil {
		return err
	}
	var f referee.Facts
	t0 := time.Now()
	switch {
	case a.Auto:
	case m.ref.Lines() != nil:
		if err := m.deliver(ctx, a.Send); err != nil {
			return err
		}
		if f.Exchange, err = m.sessions[a.Side].Ask(ctx, a.Question, a.Timeout); err != nil {
			return fmt.Errorf("%s's turn %d: %w", a.Side, a.Ply, err)
		}
	default:
		if f.Report, err = m.boxes[a.Side].Run(ctx, a.Turn); err != nil {
			return fmt.Errorf("%s's turn %d: %w", a.Side, a.Ply, err)
		}
	}
	harness := time.Since(t0)
	s, err := m.ref.Settle(a, f)
	if err != nil {
		return err
	}
	s.Record.HarnessMs = ms(harness)
	notKept, err := m.storeData(ctx, a.Side, s.Judgement.Data)
	if err != nil {
		return err
	}
	for i, df := range s.Record.DataFiles {
		s.Record.DataFiles[i].NotKept = notKept[df.SHA256]
	}
	if err := m.deliver(ctx, s.Send); err != nil {
		return err
	}
	m.log.Debug("turn", "ply", a.Ply, "side", a.Side, "verdict", s.Record.Verdict, "wallMs", s.Record.WallMs, "harnessMs", s.Record.HarnessMs)
	return m.record(s.Record)
}

// record appends a settled turn to the transcript and shows it.
func (m *runner) record(rec transcript.Turn) error {
	if err := m.tw.Append(transcript.TypeTurn, rec); err != nil {
		return fmt.Errorf("write transcript: %w", err)
	}
	if m.cfg.Observer != nil {
		m.cfg.Observer.Turn(rec, m.ref.State())
	}
	return nil
}

// deliver sends each side the lines the referee decided, in order.
func (m *runner) deliver(ctx context.Context, send [2][]string) error {
	for _, side := range rules.Sides {
		for _, line := range send[side] {
			if err := m.sessions[side].Send(ctx, line); err != nil {
				return fmt.Errorf("send to %s: %w", side, err)
			}
		}
	}
	return nil
}

// WinnerName is how a result names the winning side.
func WinnerName(s rules.Side) string { return referee.WinnerName(s) }

func (m *runner) bot(s rules.Side) *submission.Bot {
	if s == rules.White {
		return m.cfg.White
	}
	return m.cfg.Black
}

// describe builds the header: the game's terms and the facts of where it
// ran. On error it still returns what it knows, for an aborted transcript.
func (m *runner) describe(ctx context.Context) (transcript.Header, error) {
	desc, err := m.cfg.Backend.Describe(ctx)
	host, _ := os.Hostname()
	h := terms(m.cfg, m.ref)
	h.Sandbox = desc
	h.Host = map[string]string{"hostname": host, "os": runtime.GOOS + "/" + runtime.GOARCH, "cpus": fmt.Sprint(runtime.NumCPU())}
	h.StartedAt = m.start.UTC().Format(time.RFC3339Nano)
	h.SigningKey = signingKey(m.cfg.Signer)
	return h, err
}

func signingKey(k ed25519.PrivateKey) string {
	if k == nil {
		return ""
	}
	return transcript.PublicKeyHex(k)
}

// openBoxes starts both bots' sandboxes at once, once the backend has
// admitted them together; if either fails, neither is kept. A box that
// found no room (sandbox.ErrNoRoom) is no one's fault: both are closed and
// the game waits to be admitted again, as long as it must.
func (m *runner) openBoxes(ctx context.Context) error {
	for waited := false; ; waited = true {
		actx, release, err := m.cfg.Backend.Admit(ctx, len(rules.Sides), m.cfg.Limits)
		if err != nil {
			return fmt.Errorf("wait for room for the sandboxes: %w", err)
		}
		m.release = release
		if waited {
			m.log.Info("the game's sandboxes were admitted after waiting for room")
		}
		err = m.openBoth(actx)
		if !errors.Is(err, sandbox.ErrNoRoom) {
			return err
		}
		m.closeBoxes(ctx)
		m.log.Info("no room for the game's sandboxes yet: it waits for another game's to close", "why", err)
	}
}

// openBoth opens both sides' boxes at once.
func (m *runner) openBoth(ctx context.Context) error {
	var wg sync.WaitGroup
	var errs [2]error
	for _, side := range rules.Sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			labels := map[string]string{"org.arenabots.arena.match": filepath.Base(m.cfg.Dir), "org.arenabots.arena.side": side.String()}
			maps.Copy(labels, m.cfg.Labels)
			m.boxes[side], errs[side] = m.cfg.Backend.Open(ctx, sandbox.Spec{Program: m.bot(side).Program, Limits: m.cfg.Limits, Labels: labels})
		}()
	}
	wg.Wait()
	for _, side := range rules.Sides {
		if errors.Is(errs[side], sandbox.ErrNoRoom) {
			return errs[side]
		}
	}
	for _, side := range rules.Sides {
		if errs[side] != nil {
			return fmt.Errorf("start %s's sandbox: %w", side, errs[side])
		}
	}
	return nil
}

func (m *runner) closeBoxes(ctx context.Context) {
	var wg sync.WaitGroup
	for i, b := range m.boxes {
		if b == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Close(context.WithoutCancel(ctx)); err != nil {
				// The match's result stands; the backend's sweep removes what is left.
				m.log.Warn("close a sandbox", "side", rules.Side(i), "err", err)
			}
			m.boxes[i] = nil
		}()
	}
	wg.Wait()
	if m.release != nil {
		m.release()
		m.release = nil
	}
}

// startSessions starts both bots and sends them the opening lines. A bot that
// cannot start loses the game.
func (m *runner) startSessions(ctx context.Context) error {
	var wg sync.WaitGroup
	var errs [2]error
	for _, side := range rules.Sides {
		sb, ok := m.boxes[side].(sandbox.SessionBox)
		if !ok {
			return errors.New("the sandbox backend cannot run line-protocol bots")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.sessions[side], errs[side] = sb.StartSession(ctx, nil)
		}()
	}
	wg.Wait()
	for _, side := range rules.Sides {
		var sf *sandbox.StartFailure
		if errors.As(errs[side], &sf) {
			return m.record(m.ref.StartFailed(side, sf.Reason).Record)
		}
	}
	for _, side := range rules.Sides {
		if errs[side] != nil {
			return fmt.Errorf("start %s's bot: %w", side, errs[side])
		}
	}
	return m.deliver(ctx, m.ref.Opening())
}

// stopSessions ends both bot processes and keeps how they ended.
func (m *runner) stopSessions(ctx context.Context) {
	for _, side := range rules.Sides {
		s := m.sessions[side]
		if s == nil {
			continue
		}
		m.sessions[side] = nil
		rep, err := s.Stop(context.WithoutCancel(ctx))
		if err != nil {
			m.log.Warn("stop a bot", "side", side, "err", err)
			continue
		}
		m.ended[side] = transcript.SessionEnd{Side: side.String(), ExitCode: rep.ExitCode, Signal: rep.Signal,
			CPUMs: ms(rep.CPU), PeakMemory: rep.PeakMemory, StderrTail: string(rep.Stderr.Data)}
	}
}

// storeData keeps each data file's content in blobs/ (each distinct content
// once) so a disputed turn can be rebuilt exactly, as far as the evidence
// policy and its budget allow; it returns the versions recorded by hash only.
// A write that fails is an error (the match is aborted), never a silent loss.
func (m *runner) storeData(ctx context.Context, side rules.Side, data []sandbox.Entry) (map[string]bool, error) {
	var notKept map[string]bool
	skip := func(sum string) {
		if notKept == nil {
			notKept = map[string]bool{}
		}
		notKept[sum] = true
	}
	m.final[side] = m.final[side][:0]
	for _, e := range data {
		if e.SHA256 == "" {
			continue
		}
		m.final[side] = append(m.final[side], e.SHA256)
		if m.stored[e.SHA256] || m.tw.HasBlob(e.SHA256) {
			continue
		}
		ev := m.cfg.Evidence
		if ev.Keep == transcript.KeepNone || (ev.Budget > 0 && m.storedBytes+e.Size > ev.Budget) {
			skip(e.SHA256)
			continue
		}
		content, err := m.boxes[side].ReadFile(ctx, e.Name, m.ref.Files().MaxDataFileBytes)
		if err != nil {
			return nil, fmt.Errorf("fetch %s's data file %s: %w", side, e.Name, err)
		}
		got, wrote, err := m.tw.PutBlob(content)
		if err != nil {
			return nil, fmt.Errorf("store data file: %w", err)
		}
		if got != e.SHA256 {
			return nil, fmt.Errorf("data file %s changed between listing and fetching (%s, then %s)", e.Name, e.SHA256, got)
		}
		m.stored[got] = true
		m.storedBytes += wrote
	}
	return notKept, nil
}

// prunable lists, under the "final" policy, every stored version that is not
// some side's last. They are removed once the footer that names them is
// written, so a crash in between leaves extra blobs, never missing ones.
func (m *runner) prunable() []string {
	if m.cfg.Evidence.Keep != transcript.KeepFinal {
		return nil
	}
	keep := map[string]bool{}
	for _, side := range m.final {
		for _, sum := range side {
			keep[sum] = true
		}
	}
	var pruned []string
	for sum := range m.stored {
		if !keep[sum] {
			pruned = append(pruned, sum)
		}
	}
	sort.Strings(pruned)
	return pruned
}

// result is the referee's result with what only the runner knows.
func (m *runner) result(abortReason string) transcript.Result {
	r := m.ref.Result()
	if abortReason != "" {
		r.Winner, r.Reason, r.AbortReason = transcript.WinnerNone, transcript.ReasonAborted, abortReason
	}
	r.DurationMs = ms(time.Since(m.start))
	return r
}

// finish stops the bots and writes the footer and result.json. An aborted
// match says why.
func (m *runner) finish(abortReason string) (transcript.Result, error) {
	m.stopSessions(context.Background())
	if m.header == nil {
		// Even a match that never started leaves a well-formed transcript.
		h, _ := m.describe(context.Background())
		if err := m.tw.Append(transcript.TypeHeader, h); err != nil {
			return m.result(abortReason), fmt.Errorf("write the transcript's header: %w", err)
		}
		m.header = &h
	}
	pruned := m.prunable()
	res := m.result(abortReason)
	foot := transcript.Footer{Result: res, FinishedAt: time.Now().UTC().Format(time.RFC3339Nano), Pruned: pruned}
	if m.ref.Lines() != nil {
		foot.Sessions = m.ended[:]
	}
	if err := m.tw.Append(transcript.TypeFooter, foot); err != nil {
		return res, fmt.Errorf("write the transcript's footer: %w", err)
	}
	for _, sum := range pruned {
		if err := m.tw.RemoveBlob(sum); err != nil {
			return res, fmt.Errorf("prune data file %s: %w", sum, err)
		}
	}
	if err := writeResult(m.cfg.Dir, res); err != nil {
		return res, err
	}
	return res, nil
}

// writeResult writes result.json atomically.
func writeResult(dir string, res transcript.Result) error {
	data, err := transcript.EncodeResult(res)
	if err != nil {
		return fmt.Errorf("encode %s: %w", transcript.ResultFile, err)
	}
	tmp := filepath.Join(dir, transcript.ResultFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", transcript.ResultFile, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, transcript.ResultFile)); err != nil {
		return fmt.Errorf("write %s: %w", transcript.ResultFile, err)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
