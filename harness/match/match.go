// Package match plays one official match: two bots, one game, one sandbox
// backend, one seed. It asks the game for each turn's state, has the mover's Box
// run one fresh bot process, judges the facts by the verdict table, applies the
// move, and writes the transcript as it goes.
//
// A bot's fault costs it the game under the forfeit policy, or is replaced by a
// random legal move under random-move. A fault of the sandbox or host ends the
// match as aborted, charged to nobody. Whatever happens, the containers are
// removed and the transcript ends in a footer.
package match

import (
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Policy says what a bot's fault costs.
type Policy string

// Fault policies.
const (
	Forfeit    Policy = "forfeit"     // the faulting bot loses
	RandomMove Policy = "random-move" // a random legal move is played for it; the fault is recorded
)

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case Forfeit, RandomMove:
		return Policy(s), nil
	}
	return "", fmt.Errorf("fault policy: want forfeit or random-move, got %q", s)
}

// Observer is told what happens as it happens (live display). Calls come from
// the goroutine running the match.
type Observer interface {
	Started(h transcript.Header)
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
}

// ResultFile is the name of the result inside the match directory.
const ResultFile = "result.json"

// RandomSeed returns a seed below 2^53, so that it survives any JSON reader.
func RandomSeed() uint64 {
	var b [8]byte
	crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) & (1<<53 - 1)
}

// FaultRNG is the random source of the random-move policy. It is separate from
// the game's own, so substitutions never change the game's random decisions.
func FaultRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xfa17)) }

// Substitute picks the random legal move played for a faulting bot.
func Substitute(rng *rand.Rand, st rules.State) rules.Move {
	legal := st.LegalMoves()
	return legal[rng.IntN(len(legal))]
}

// Run plays the match. The error is for a configuration that cannot start
// (unknown rules, unwritable directory); everything after the transcript exists
// ends in a Result, aborted or not.
func Run(ctx context.Context, cfg Config) (transcript.Result, error) {
	var res transcript.Result
	if cfg.White == nil || cfg.Black == nil || cfg.Backend == nil || cfg.Game == nil {
		return res, errors.New("match: game, both bots and a backend are required")
	}
	protocol := cfg.Game.Protocol()
	proto, lines := protocol.Files, protocol.Lines
	if proto == nil && lines == nil {
		return res, fmt.Errorf("match: %s has no bot protocol", cfg.Game.Name())
	}
	if lines != nil {
		l, err := LineTimes(*lines, cfg.Rules, cfg.Limits)
		if err != nil {
			return res, err
		}
		lines = &l
	}
	if cfg.OnFault == "" {
		cfg.OnFault = Forfeit
	}
	if _, err := ParsePolicy(string(cfg.OnFault)); err != nil {
		return res, err
	}
	if err := cfg.Limits.Validate(); err != nil {
		return res, err
	}
	st, err := cfg.Game.New(cfg.Rules, cfg.Seed)
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
	m := &runner{cfg: cfg, proto: proto, lines: lines, st: st, tw: tw, start: time.Now(),
		rng: FaultRNG(cfg.Seed)}
	m.res = transcript.Result{
		Game:   cfg.Game.Name(),
		White:  transcript.BotRef{Name: cfg.White.Name, SHA256: cfg.White.SHA256},
		Black:  transcript.BotRef{Name: cfg.Black.Name, SHA256: cfg.Black.SHA256},
		Winner: transcript.WinnerNone,
		Reason: transcript.ReasonAborted,
		Seed:   cfg.Seed,
		Faults: []transcript.Fault{},
	}
	return m.run(ctx), nil
}

type runner struct {
	cfg   Config
	proto *rules.FileProtocol
	lines *rules.LineProtocol
	// sessions, bank and last are the line protocol's: each side's bot process,
	// the time left in its bank, and the previous move in wire form.
	sessions [2]sandbox.Session
	bank     [2]time.Duration
	last     string
	ended    [2]transcript.SessionEnd
	st       rules.State
	tw       *transcript.Writer
	rng      *rand.Rand
	start    time.Time
	res      transcript.Result
	boxes    [2]sandbox.Box
	// header is set once the header record is written.
	header *transcript.Header
	// cleanup lists game-directory entries to remove before a side's next turn
	// (data-file violations under the random-move policy).
	cleanup [2][]string
}

func (m *runner) run(ctx context.Context) (res transcript.Result) {
	defer m.tw.Close()
	defer m.closeBoxes(ctx)
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 4096)
			buf = buf[:runtime.Stack(buf, false)]
			m.abort(fmt.Sprintf("internal error: %v\n%s", r, buf))
			res = m.res
		}
	}()

	header, err := m.describe(ctx)
	if err != nil {
		m.abort("describe sandbox: " + err.Error())
		return m.res
	}
	m.tw.SetProvisional(func() any {
		r := m.res
		r.Winner, r.Reason, r.AbortReason = transcript.WinnerNone, transcript.ReasonAborted, "the match did not finish (arena stopped)"
		r.Turns = m.st.Turn()
		r.DurationMs = ms(time.Since(m.start))
		return transcript.Footer{Result: r, FinishedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	})
	if err := m.tw.Append(transcript.TypeHeader, header); err != nil {
		m.abort("write transcript: " + err.Error())
		return m.res
	}
	m.header = &header
	if m.cfg.Observer != nil {
		m.cfg.Observer.Started(header)
	}
	if err := m.openBoxes(ctx); err != nil {
		m.abort(err.Error())
		return m.res
	}
	if m.lines != nil {
		defer m.stopSessions(ctx)
		if done, err := m.startSessions(ctx); err != nil {
			m.abort(err.Error())
			return m.res
		} else if done {
			m.finish()
			return m.res
		}
	}
	for !m.st.Outcome().Over {
		if err := ctx.Err(); err != nil {
			m.abort("interrupted: " + context.Cause(ctx).Error())
			return m.res
		}
		var done bool
		var err error
		if m.lines != nil {
			done, err = m.lineTurn(ctx)
		} else {
			done, err = m.turn(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				m.abort("interrupted: " + context.Cause(ctx).Error())
			} else {
				m.abort(err.Error())
			}
			return m.res
		}
		if done {
			break
		}
	}
	if o := m.st.Outcome(); o.Over {
		m.res.Winner = WinnerName(o.Winner)
		m.res.Reason = o.Reason
	}
	m.finish()
	return m.res
}

// WinnerName is how a result names the winning side.
func WinnerName(s rules.Side) string {
	switch s {
	case rules.White:
		return transcript.WinnerWhite
	case rules.Black:
		return transcript.WinnerBlack
	}
	return transcript.WinnerDraw
}

func (m *runner) bot(s rules.Side) *submission.Bot {
	if s == rules.White {
		return m.cfg.White
	}
	return m.cfg.Black
}

// describe builds the header. On error it still returns what it knows, for an
// aborted transcript.
func (m *runner) describe(ctx context.Context) (transcript.Header, error) {
	desc, err := m.cfg.Backend.Describe(ctx)
	host, _ := os.Hostname()
	botInfo := func(b *submission.Bot) transcript.Bot {
		return transcript.Bot{Name: b.Name, SHA256: b.SHA256, SubmissionSHA256: b.SubmissionSHA256, Source: b.Source, Entry: b.Program.Entry}
	}
	protocol := "files"
	if m.lines != nil {
		protocol = "lines"
	}
	opts := map[string]string{}
	for _, o := range m.cfg.Game.Options() {
		opts[o.Name] = o.Default
	}
	for k, v := range m.cfg.Rules {
		opts[k] = v
	}
	return transcript.Header{
		Format:       transcript.Format,
		ArenaVersion: m.cfg.ArenaVersion,
		Game:         m.cfg.Game.Name(),
		Rules:        opts,
		Seed:         m.cfg.Seed,
		White:        botInfo(m.cfg.White),
		Black:        botInfo(m.cfg.Black),
		OnFault:      string(m.cfg.OnFault),
		Protocol:     protocol,
		Limits:       m.cfg.Limits,
		Sandbox:      desc,
		Host:         map[string]string{"hostname": host, "os": runtime.GOOS + "/" + runtime.GOARCH, "cpus": fmt.Sprint(runtime.NumCPU())},
		StartedAt:    m.start.UTC().Format(time.RFC3339Nano),
		SigningKey:   signingKey(m.cfg.Signer),
		TimeControl:  timeControl(m.lines),
	}, err
}

func timeControl(l *rules.LineProtocol) *transcript.TimeControl {
	if l == nil {
		return nil
	}
	return &transcript.TimeControl{MoveTime: l.MoveTime, GameTime: l.GameTime, LateMove: l.LateMove, AutoSingle: l.AutoSingle}
}

func signingKey(k ed25519.PrivateKey) string {
	if k == nil {
		return ""
	}
	return transcript.PublicKeyHex(k)
}

// openBoxes starts both bots' sandboxes at once; if either fails, neither is
// kept.
func (m *runner) openBoxes(ctx context.Context) error {
	var wg sync.WaitGroup
	var errs [2]error
	for _, side := range rules.Sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			labels := map[string]string{"org.arenabots.arena.match": filepath.Base(m.cfg.Dir), "org.arenabots.arena.side": side.String()}
			for k, v := range m.cfg.Labels {
				labels[k] = v
			}
			m.boxes[side], errs[side] = m.cfg.Backend.Open(ctx, sandbox.Spec{Program: m.bot(side).Program, Limits: m.cfg.Limits, Labels: labels})
		}()
	}
	wg.Wait()
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
			b.Close(context.WithoutCancel(ctx))
			m.boxes[i] = nil
		}()
	}
	wg.Wait()
}

// turn plays one turn. It reports done when the match ended by forfeit.
func (m *runner) turn(ctx context.Context) (done bool, err error) {
	st := m.st
	side := st.ToMove()
	view, err := st.View(side)
	if err != nil {
		return false, fmt.Errorf("render state: %w", err)
	}
	ply := st.Turn() + 1
	remove := append([]string{m.proto.MoveFile}, m.cleanup[side]...)
	m.cleanup[side] = nil
	t0 := time.Now()
	rep, err := m.boxes[side].Run(ctx, sandbox.Turn{
		// A side's first turn starts from an empty game directory, even in a
		// sandbox reused from an earlier match.
		Clean:      st.Turn() < 2,
		Remove:     remove,
		Put:        []sandbox.File{{Name: m.proto.StateFile, Data: view, Mode: 0o644}},
		Args:       []string{sandbox.GameDirToken + "/" + m.proto.StateFile},
		Collect:    m.proto.MoveFile,
		CollectMax: m.proto.MaxMoveBytes,
		HashMax:    m.proto.MaxDataFileBytes,
	})
	harness := time.Since(t0)
	if err != nil {
		return false, fmt.Errorf("%s's turn %d: %w", side, ply, err)
	}
	j := JudgeTurn(st, m.proto, rep)
	rec := m.record(ply, side, view, rep, j, harness)
	if err := m.storeData(ctx, side, j.Data, &rec); err != nil {
		return false, err
	}

	played := j.Move
	if j.Verdict != rules.OK {
		m.res.Faults = append(m.res.Faults, transcript.Fault{Ply: ply, Side: side.String(), Verdict: string(j.Verdict), Reason: j.Reason, Review: j.Review})
		if m.cfg.OnFault == Forfeit {
			if err := m.tw.Append(transcript.TypeTurn, rec); err != nil {
				return false, err
			}
			m.observe(rec)
			m.res.Winner = WinnerName(side.Other())
			m.res.Reason = string(j.Verdict)
			return true, nil
		}
		played = Substitute(m.rng, st)
		rec.Substituted = true
		m.cleanup[side] = j.Offending
	}
	rec.Played = string(trimNL(st.EncodeMove(played)))
	if err := st.Apply(played); err != nil {
		return false, fmt.Errorf("apply a judged move: %w", err)
	}
	if err := m.tw.Append(transcript.TypeTurn, rec); err != nil {
		return false, err
	}
	m.observe(rec)
	return false, nil
}

func (m *runner) observe(rec transcript.Turn) {
	if m.cfg.Observer != nil {
		m.cfg.Observer.Turn(rec, m.st)
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func (m *runner) record(ply int, side rules.Side, view []byte, rep sandbox.Report, j Judgement, harness time.Duration) transcript.Turn {
	sum := sha256.Sum256(view)
	rec := transcript.Turn{
		Ply:         ply,
		Side:        side.String(),
		Phase:       m.st.Phase(),
		State:       string(view),
		StateSHA256: hex.EncodeToString(sum[:]),
		StartError:  rep.StartError,
		ExitCode:    rep.ExitCode,
		Signal:      rep.Signal,
		TimedOut:    rep.TimedOut,
		OOMKilled:   rep.OOMKilled,
		Verdict:     string(j.Verdict),
		Reason:      j.Reason,
		Review:      j.Review,
		WallMs:      ms(rep.Wall),
		HarnessMs:   ms(harness),
		CPUMs:       ms(rep.CPU),
		PeakMemory:  rep.PeakMemory,
		Survivors:   rep.Survivors,
		GameDir:     rep.GameDir,
		StdoutBytes: rep.Stdout.Total,
		StderrBytes: rep.Stderr.Total,
		StdoutTail:  string(rep.Stdout.Data),
		StderrTail:  string(rep.Stderr.Data),
	}
	if rec.GameDir == nil {
		rec.GameDir = []sandbox.Entry{}
	}
	var probe struct {
		SetupStep  int `json:"setupStep"`
		TurnNumber int `json:"turnNumber"`
	}
	if json.Unmarshal(view, &probe) == nil {
		rec.SetupStep, rec.TurnNumber = probe.SetupStep, probe.TurnNumber
	}
	if a := rep.Answer; a.Present {
		rec.AnswerSize = a.Size
		rec.AnswerTruncated = a.Truncated
		if a.Type != sandbox.TypeFile {
			rec.AnswerType = string(a.Type)
		}
		if utf8.Valid(a.Data) {
			s := string(a.Data)
			rec.Answer = &s
		} else {
			rec.AnswerBase64 = base64.StdEncoding.EncodeToString(a.Data)
		}
	}
	if j.Move != nil {
		rec.Move = j.Move.String()
	}
	return rec
}

// storeData keeps each data file's content in blobs/ (each distinct content
// once) so a disputed turn can be rebuilt exactly.
func (m *runner) storeData(ctx context.Context, side rules.Side, data []sandbox.Entry, rec *transcript.Turn) error {
	for _, e := range data {
		if e.SHA256 == "" {
			continue
		}
		rec.DataFiles = append(rec.DataFiles, transcript.DataFile{Name: e.Name, Size: e.Size, SHA256: e.SHA256})
		if m.tw.HasBlob(e.SHA256) {
			continue
		}
		content, err := m.boxes[side].ReadFile(ctx, e.Name, m.proto.MaxDataFileBytes)
		if err != nil {
			return fmt.Errorf("fetch %s's data file %s: %w", side, e.Name, err)
		}
		got, err := m.tw.PutBlob(content)
		if err != nil {
			return fmt.Errorf("store data file: %w", err)
		}
		if got != e.SHA256 {
			return fmt.Errorf("data file %s changed between listing and fetching (%s, then %s)", e.Name, e.SHA256, got)
		}
	}
	return nil
}

func (m *runner) abort(reason string) {
	if m.header == nil {
		// Even a match that never started leaves a well-formed transcript.
		h, _ := m.describe(context.Background())
		m.tw.Append(transcript.TypeHeader, h)
		m.header = &h
	}
	m.res.Winner, m.res.Reason, m.res.AbortReason = transcript.WinnerNone, transcript.ReasonAborted, reason
	m.finish()
}

// finish writes the footer and result.json.
func (m *runner) finish() {
	m.res.Turns = m.st.Turn()
	if ps, ok := m.st.(interface{ Plies() int }); ok {
		m.res.Plies = ps.Plies()
	}
	m.res.DurationMs = ms(time.Since(m.start))
	m.stopSessions(context.Background())
	foot := transcript.Footer{Result: m.res, FinishedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if m.lines != nil {
		foot.Sessions = m.ended[:]
	}
	m.tw.Append(transcript.TypeFooter, foot)
	if data, err := json.MarshalIndent(m.res, "", "  "); err == nil {
		tmp := filepath.Join(m.cfg.Dir, ResultFile+".tmp")
		if os.WriteFile(tmp, append(data, '\n'), 0o644) == nil {
			os.Rename(tmp, filepath.Join(m.cfg.Dir, ResultFile))
		}
	}
	if m.cfg.Observer != nil {
		m.cfg.Observer.Finished(m.res)
	}
}
