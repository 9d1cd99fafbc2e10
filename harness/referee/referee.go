// Package referee is the one judge of a match. It holds the game state, the
// fault policy and its random stream, the line games' clocks and the
// substitutions, and decides from the facts of each turn its verdict, the move
// played, the record the transcript keeps and the lines each side is sent.
//
// The match runner drives a Referee with a sandbox; replay drives one with the
// facts a transcript recorded; rerun and validate build their turns and judge
// their answers with the same functions. So play and replay agree by
// construction, not by keeping copies in step.
//
// A Referee must never run a process, touch a file or read a clock: every
// fact it judges is handed to it.
package referee

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
	"unicode/utf8"

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

// Config is what a referee needs to judge one match.
type Config struct {
	Game    rules.Game
	Rules   map[string]string
	Seed    uint64
	OnFault Policy // "" is Forfeit
	// White and Black name the bots in the result.
	White, Black transcript.BotRef
}

// Referee judges one match, turn by turn. It is not safe for concurrent use.
type Referee struct {
	cfg    Config
	st     rules.State
	files  *rules.FileProtocol
	lines  *rules.LineProtocol
	policy Policy
	// rng is the random-move policy's source, apart from the game's own so
	// that substitutions never change the game's random decisions.
	rng *rand.Rand
	// bank is each side's time left (line games with a game clock); last is
	// the previous move in wire form.
	bank [2]time.Duration
	last string
	// asked is set once a side was asked its first question (line games):
	// only that answer's clock covers the program's start.
	asked [2]bool
	// cleanup lists game-directory entries to remove before a side's next
	// turn (data-file violations under the random-move policy).
	cleanup [2][]string
	faults  []transcript.Fault
	// forfeit is set when a fault ended the game.
	forfeit *rules.Outcome
}

// New starts the game and its referee.
func New(cfg Config) (*Referee, error) {
	if cfg.Game == nil {
		return nil, errors.New("referee: no game")
	}
	if cfg.OnFault == "" {
		cfg.OnFault = Forfeit
	}
	if _, err := ParsePolicy(string(cfg.OnFault)); err != nil {
		return nil, err
	}
	p := cfg.Game.Protocol()
	r := &Referee{cfg: cfg, files: p.Files, policy: cfg.OnFault, rng: FaultRNG(cfg.Seed), faults: []transcript.Fault{}}
	if p.Files == nil && p.Lines == nil {
		return nil, fmt.Errorf("%s has no bot protocol", cfg.Game.Name())
	}
	if p.Lines != nil {
		l, err := LineTimes(*p.Lines, cfg.Rules)
		if err != nil {
			return nil, err
		}
		r.lines = &l
		r.bank = [2]time.Duration{l.GameTime, l.GameTime}
	}
	st, err := cfg.Game.New(cfg.Rules, cfg.Seed)
	if err != nil {
		return nil, err
	}
	r.st = st
	return r, nil
}

// FaultRNG is the random source of the random-move policy.
func FaultRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xfa17)) }

// LineTimes resolves a line game's time control from its defaults and the
// rule options that set them.
func LineTimes(p rules.LineProtocol, opts map[string]string) (rules.LineProtocol, error) {
	for _, o := range []struct {
		name string
		dst  *time.Duration
	}{{p.MoveTimeOption, &p.MoveTime}, {p.GameTimeOption, &p.GameTime}} {
		v, ok := opts[o.name]
		if o.name == "" || !ok {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return p, fmt.Errorf("%s: want a positive duration, got %q", o.name, v)
		}
		*o.dst = d
	}
	return p, nil
}

// State is the game as it stands. It must not be changed by the caller.
func (r *Referee) State() rules.State { return r.st }

// Lines is the line protocol with its resolved clock, or nil for a file game.
func (r *Referee) Lines() *rules.LineProtocol { return r.lines }

// Files is the file protocol, or nil for a line game.
func (r *Referee) Files() *rules.FileProtocol { return r.files }

// TimeControl is the line game's clock as the transcript header records it.
func (r *Referee) TimeControl() *transcript.TimeControl {
	if r.lines == nil {
		return nil
	}
	l := r.lines
	return &transcript.TimeControl{MoveTime: l.MoveTime, GameTime: l.GameTime, StartTime: rules.ProgramStart, LateMove: l.LateMove, AutoSingle: l.AutoSingle}
}

// Over reports whether the game has ended, by the rules or by a forfeit.
func (r *Referee) Over() bool { return r.forfeit != nil || r.st.Outcome().Over }

// Opening is what each side of a line game is sent when the match starts.
func (r *Referee) Opening() [2][]string {
	if r.lines == nil {
		return [2][]string{}
	}
	return r.lines.Codec.Start(r.st)
}

// Ask is the next turn: who is asked what, and how to run it.
type Ask struct {
	Ply   int
	Side  rules.Side
	Phase string
	// Auto is set when the only legal move is played without asking.
	Auto bool
	// View is the state file's content and Turn the turn to run in the
	// side's box (file games).
	View []byte
	Turn sandbox.Turn
	// Send lists the lines each side is sent before the question; Question
	// is the line the bot is asked and Timeout how long it may take to answer
	// (line games).
	Send     [2][]string
	Question string
	Timeout  time.Duration
	// Clock is each side's time bank when the question is asked (line
	// games with a game time): the mover's, less the turn's wall time, is
	// what the mover has left after it.
	Clock rules.Clock
	// bankOut is set when the time bank, not the move time, limits the answer.
	bankOut bool
}

// BankOut says the time bank, not the move time, limits the answer.
func (a Ask) BankOut() bool { return a.bankOut }

// Next says what the next turn asks. It must be called once per turn, then
// Settle with the turn's facts.
func (r *Referee) Next() (Ask, error) {
	st := r.st
	a := Ask{Ply: st.Turn() + 1, Side: st.ToMove(), Phase: st.Phase()}
	if r.lines != nil {
		l := r.lines
		if l.AutoSingle && len(st.LegalMoves()) == 1 {
			a.Auto = true
			return a, nil
		}
		a.Clock = r.clock(a.Side)
		a.Send, a.Question = l.Codec.Request(st, r.last, a.Clock)
		a.Timeout = l.MoveTime
		if l.GameTime > 0 && r.bank[a.Side] < a.Timeout {
			a.Timeout, a.bankOut = max(r.bank[a.Side], time.Millisecond), true
		}
		if !r.asked[a.Side] {
			a.Timeout += rules.ProgramStart
			r.asked[a.Side] = true
		}
		return a, nil
	}
	view, err := st.View(a.Side)
	if err != nil {
		return a, fmt.Errorf("render the state: %w", err)
	}
	a.View = view
	a.Turn = FileTurn(r.files, view)
	a.Turn.Remove = append(a.Turn.Remove, r.cleanup[a.Side]...)
	r.cleanup[a.Side] = nil
	return a, nil
}

// FileTurn is the sandbox turn that hands a bot view as its state file and
// collects its answer: every file-protocol turn is built here.
func FileTurn(p *rules.FileProtocol, view []byte) sandbox.Turn {
	return sandbox.Turn{
		Remove:     []string{p.MoveFile},
		Put:        []sandbox.File{{Name: p.StateFile, Data: view, Mode: 0o644}},
		Args:       []string{sandbox.GameDirToken + "/" + p.StateFile},
		Collect:    p.MoveFile,
		CollectMax: p.MaxMoveBytes,
		HashMax:    p.MaxDataFileBytes,
	}
}

func (r *Referee) clock(side rules.Side) rules.Clock {
	return rules.Clock{Mine: r.bank[side], Theirs: r.bank[side.Other()]}
}

// Facts are what the sandbox saw of one turn: a Report for a file game, an
// Exchange for a line game. An automatic move has none.
type Facts struct {
	Report   sandbox.Report
	Exchange sandbox.Exchange
}

// Step is a settled turn.
type Step struct {
	// Record is the turn as the transcript keeps it, every fact included;
	// only HarnessMs is left to the runner, which alone can measure it.
	Record transcript.Turn
	// Judgement is the verdict with what the game directory held.
	Judgement Judgement
	// Send lists the lines each side is sent now, in order.
	Send [2][]string
}

// Settle judges the facts of the turn a asked for and plays it: the bot's
// move, a random legal move for a fault the policy forgives, or nothing for a
// fault that forfeits the game. The error is the referee's own inconsistency
// (a judged move that cannot be applied), never the bot's doing.
func (r *Referee) Settle(a Ask, f Facts) (Step, error) {
	st := r.st
	var s Step
	if a.Ply != st.Turn()+1 || a.Side != st.ToMove() {
		return s, fmt.Errorf("referee: settling ply %d (%s), but it is ply %d (%s)", a.Ply, a.Side, st.Turn()+1, st.ToMove())
	}
	s.Record = transcript.Turn{Ply: a.Ply, Side: a.Side.String(), Phase: a.Phase, TurnNumber: a.Ply, GameDir: []sandbox.Entry{},
		Before: transcript.LinesOf(a.Send)}
	if n, ok := st.(rules.Numbered); ok {
		s.Record.SetupStep, s.Record.TurnNumber = n.SetupStep(), n.TurnNumber()
	}
	forgiven := r.policy == RandomMove
	switch {
	case a.Auto:
		s.Judgement = Judgement{Verdict: rules.OK, Move: st.LegalMoves()[0]}
		s.Record.Auto = true
	case r.lines != nil:
		ex := f.Exchange
		ex.Wall, ex.HostWait = ex.Wall.Truncate(time.Microsecond), ex.HostWait.Truncate(time.Microsecond) // what the transcript keeps
		if r.lines.GameTime > 0 {
			// The bot's own time: the host's wait for a CPU is not the bot's.
			r.bank[a.Side] -= ex.Wall - ex.HostWait
		}
		s.Judgement = JudgeLine(st, ex, a.bankOut)
		recordExchange(&s.Record, a.Question, ex)
		forgiven = forgiven || (s.Judgement.Verdict == rules.Timeout && r.lines.LateMove == "random" && !a.bankOut)
	default:
		rep := f.Report
		rep.Wall, rep.CPU, rep.HostWait = rep.Wall.Truncate(time.Microsecond), rep.CPU.Truncate(time.Microsecond), rep.HostWait.Truncate(time.Microsecond)
		s.Judgement = JudgeTurn(st, r.files, rep)
		recordReport(&s.Record, a.View, rep)
		for _, e := range s.Judgement.Data {
			if e.SHA256 != "" {
				s.Record.DataFiles = append(s.Record.DataFiles, transcript.DataFile{Name: e.Name, Size: e.Size, SHA256: e.SHA256, Mode: transcript.ModeString(e.Mode)})
			}
		}
	}
	j := s.Judgement
	rec := &s.Record
	rec.Verdict, rec.Reason, rec.Review = string(j.Verdict), j.Reason, j.Review
	if j.Move != nil {
		rec.Move = j.Move.String()
	}
	played := j.Move
	if j.Verdict != rules.OK {
		r.faults = append(r.faults, transcript.Fault{Ply: a.Ply, Side: a.Side.String(), Verdict: string(j.Verdict), Reason: j.Reason, Review: j.Review})
		if !forgiven {
			r.forfeit = &rules.Outcome{Over: true, Winner: a.Side.Other(), Reason: string(j.Verdict)}
			r.reply(&s, a, false)
			return s, nil
		}
		played = Substitute(r.rng, st)
		rec.Substituted = true
		r.cleanup[a.Side] = j.Offending
	}
	rec.Played = trimNL(st.EncodeMove(played))
	if err := st.Apply(played); err != nil {
		return s, fmt.Errorf("referee: apply a judged move: %w", err)
	}
	r.last = rec.Played
	r.reply(&s, a, j.Verdict == rules.OK)
	return s, nil
}

// reply adds the lines the game sends after a judged answer (none after an
// automatic move, which asked nothing), and its closing lines once the game
// is over.
func (r *Referee) reply(s *Step, a Ask, accepted bool) {
	if r.lines == nil {
		return
	}
	if !a.Auto {
		s.Send = join(s.Send, r.lines.Codec.Reply(r.st, a.Side, accepted, r.clock(a.Side)))
	}
	if r.Over() {
		s.Send = join(s.Send, r.lines.Codec.End(r.st))
	}
	s.Record.After = transcript.LinesOf(s.Send)
}

func join(a, b [2][]string) [2][]string {
	for i := range a {
		a[i] = append(a[i], b[i]...)
	}
	return a
}

// StartFailed settles a line-game bot that could not be started at all: it
// cannot play, so it loses whatever the policy.
func (r *Referee) StartFailed(side rules.Side, reason string) Step {
	return r.cannotPlay(side, rules.Crash, reason)
}

// BuildFailed settles a bot handed in as source that did not build: it loses
// whatever the policy. When both sides fail so, the game is a draw.
func (r *Referee) BuildFailed(side rules.Side, reason string) Step {
	return r.cannotPlay(side, rules.BuildError, reason)
}

func (r *Referee) cannotPlay(side rules.Side, v rules.Verdict, reason string) Step {
	st := r.st
	s := Step{Judgement: Judgement{Verdict: v, Reason: reason}}
	s.Record = transcript.Turn{Ply: st.Turn() + 1, Side: side.String(), Phase: st.Phase(), TurnNumber: st.Turn() + 1,
		StartError: reason, ExitCode: -1, Verdict: string(v), Reason: reason, GameDir: []sandbox.Entry{}}
	r.faults = append(r.faults, transcript.Fault{Ply: s.Record.Ply, Side: side.String(), Verdict: string(v), Reason: reason})
	winner := side.Other()
	if r.forfeit != nil && r.forfeit.Winner == side {
		winner = rules.NoSide // the other side could not play either
	}
	r.forfeit = &rules.Outcome{Over: true, Winner: winner, Reason: string(v)}
	return s
}

// Substitute picks the random legal move played for a faulting bot.
func Substitute(rng *rand.Rand, st rules.State) rules.Move {
	legal := st.LegalMoves()
	return legal[rng.IntN(len(legal))]
}

// Result is the match's result so far: the game's outcome, or a forfeit, or,
// for a game that did not finish, "aborted" (the caller says why). Duration
// is left to the caller.
func (r *Referee) Result() transcript.Result {
	res := transcript.Result{
		Game: r.cfg.Game.Name(), White: r.cfg.White, Black: r.cfg.Black, Seed: r.cfg.Seed,
		Turns: r.st.Turn(), Plies: r.st.Plies(), Faults: append([]transcript.Fault{}, r.faults...),
		Winner: transcript.WinnerNone, Reason: transcript.ReasonAborted,
	}
	if sc, ok := r.st.(rules.Scorer); ok {
		p := sc.Points()
		res.Points = p[:]
	}
	o := r.st.Outcome()
	if r.forfeit != nil {
		o = *r.forfeit
	}
	if o.Over {
		res.Winner, res.Reason = WinnerName(o.Winner), o.Reason
	}
	return res
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

func trimNL(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// duration reads a recorded millisecond figure back, exact to the
// microsecond the record keeps.
func duration(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1000)) * time.Microsecond
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// recordReport writes a file-protocol turn's facts into its record.
func recordReport(rec *transcript.Turn, view []byte, rep sandbox.Report) {
	rec.State, rec.StateSHA256 = string(view), sum(view)
	rec.StartError, rec.ExitCode, rec.Signal = rep.StartError, rep.ExitCode, rep.Signal
	rec.TimedOut, rec.OOMKilled = rep.TimedOut, rep.OOMKilled
	rec.WallMs, rec.CPUMs, rec.PeakMemory, rec.Survivors = ms(rep.Wall), ms(rep.CPU), rep.PeakMemory, rep.Survivors
	rec.HostWaitMs = ms(rep.HostWait)
	if rep.GameDir != nil {
		rec.GameDir = rep.GameDir
	}
	rec.StdoutBytes, rec.StderrBytes = rep.Stdout.Total, rep.Stderr.Total
	rec.StdoutTail, rec.StderrTail = string(rep.Stdout.Data), string(rep.Stderr.Data)
	a := rep.Answer
	if !a.Present {
		return
	}
	rec.AnswerSize, rec.AnswerTruncated = a.Size, a.Truncated
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

// recordExchange writes a line-protocol turn's facts into its record.
func recordExchange(rec *transcript.Turn, question string, ex sandbox.Exchange) {
	rec.State, rec.StateSHA256 = question, sum([]byte(question))
	if ex.Line != "" || !(ex.TimedOut || ex.Exited) {
		a := ex.Line
		rec.Answer, rec.AnswerSize = &a, int64(len(a))
	}
	rec.Early, rec.Late, rec.Exited, rec.TooLong, rec.TimedOut = ex.Early, ex.Late, ex.Exited, ex.TooLong, ex.TimedOut
	rec.WallMs, rec.HostWaitMs = ms(ex.Wall), ms(ex.HostWait)
}

// FactsOf reads back from a record the facts it was made from: Settle of
// FactsOf(rec) rebuilds rec. It is how replay judges again.
func FactsOf(rec transcript.Turn) (Facts, error) {
	var f Facts
	f.Exchange = sandbox.Exchange{Early: rec.Early, Late: rec.Late, TimedOut: rec.TimedOut, Exited: rec.Exited,
		TooLong: rec.TooLong, Wall: duration(rec.WallMs), HostWait: duration(rec.HostWaitMs)}
	if rec.Answer != nil {
		f.Exchange.Line = *rec.Answer
	}
	rep := sandbox.Report{
		StartError: rec.StartError, ExitCode: rec.ExitCode, Signal: rec.Signal,
		TimedOut: rec.TimedOut, OOMKilled: rec.OOMKilled,
		Wall: duration(rec.WallMs), CPU: duration(rec.CPUMs), HostWait: duration(rec.HostWaitMs),
		PeakMemory: rec.PeakMemory, Survivors: rec.Survivors, GameDir: rec.GameDir,
		Stdout: sandbox.Tail{Total: rec.StdoutBytes, Data: []byte(rec.StdoutTail)},
		Stderr: sandbox.Tail{Total: rec.StderrBytes, Data: []byte(rec.StderrTail)},
	}
	a := &rep.Answer
	switch {
	case rec.Answer != nil:
		a.Present, a.Data = true, []byte(*rec.Answer)
	case rec.AnswerBase64 != "":
		data, err := base64.StdEncoding.DecodeString(rec.AnswerBase64)
		if err != nil {
			return f, fmt.Errorf("answerBase64: %v", err)
		}
		a.Present, a.Data = true, data
	case rec.AnswerType != "":
		a.Present = true
	}
	if a.Present {
		a.Type = sandbox.TypeFile
		if rec.AnswerType != "" {
			a.Type = sandbox.EntryType(rec.AnswerType)
		}
		a.Size, a.Truncated = rec.AnswerSize, rec.AnswerTruncated
	}
	f.Report = rep
	return f, nil
}
