// Package replay re-judges a match from its transcript with the rules engine
// alone: no bot runs. It recomputes every state that was handed out, every
// verdict, every move played and the result, and checks the hash chain, the
// footer's signature and the data-file blobs. The first thing that differs is
// reported with the ply, the field, and both values.
package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games" // a transcript may be of any game
	"github.com/arenabots/arena/sandbox"
)

// Divergence is the first place where the transcript and the recomputation
// disagree.
type Divergence struct {
	Line       int    `json:"line"` // 1-based line of the transcript
	Ply        int    `json:"ply,omitempty"`
	Field      string `json:"field"`
	Recorded   string `json:"recorded"`
	Recomputed string `json:"recomputed"`
}

func (d *Divergence) Error() string {
	where := fmt.Sprintf("line %d", d.Line)
	if d.Ply > 0 {
		where = fmt.Sprintf("ply %d (line %d)", d.Ply, d.Line)
	}
	return fmt.Sprintf("%s, %s: recorded %s, recomputed %s", where, d.Field, d.Recorded, d.Recomputed)
}

// Report is the outcome of a replay.
type Report struct {
	Consistent bool              `json:"consistent"`
	Header     transcript.Header `json:"-"`
	Result     transcript.Result `json:"result"`
	Turns      int               `json:"turns"`
	Blobs      int               `json:"blobs"`
	SignedBy   string            `json:"signedBy,omitempty"` // key id of the signer
	// Tampered says why the file itself does not hold together (chain,
	// signature, a blob); Divergence where the recomputation disagrees.
	Tampered   string      `json:"tampered,omitempty"`
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Problem is what makes the report inconsistent, or "".
func (r *Report) Problem() string {
	switch {
	case r.Tampered != "":
		return r.Tampered
	case r.Divergence != nil:
		return r.Divergence.Error()
	}
	return ""
}

// State is the recomputed game at one turn, as Walk hands it out.
type State struct {
	Before rules.State // the position the bot was asked to move in
	Turn   transcript.Turn
	Line   int
}

// File replays the transcript at path (a transcript.jsonl or the match directory
// holding one). The error is for a file that cannot be read at all.
func File(path string) (*Report, error) {
	path, dir := Locate(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines, err := transcript.Read(bytes.NewReader(data))
	rep := &Report{}
	if err != nil {
		if len(lines) == 0 {
			return nil, err
		}
		rep.Tampered = err.Error()
		return rep, nil
	}
	return Lines(lines, dir, nil), nil
}

// Locate accepts a transcript file or the directory holding it.
func Locate(path string) (file, dir string) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, transcript.FileName), path
	}
	return path, filepath.Dir(path)
}

// Lines replays parsed lines; blobs are looked up in dir. each, when set, is
// called for every turn with the recomputed position before it.
func Lines(lines []transcript.Line, dir string, each func(State)) *Report {
	rep := &Report{}
	if err := transcript.VerifyChain(lines); err != nil {
		rep.Tampered = "hash chain: " + err.Error()
		return rep
	}
	key, err := transcript.VerifySignature(lines)
	if err != nil {
		rep.Tampered = "signature: " + err.Error()
		return rep
	}
	if err := lines[0].Decode(&rep.Header); err != nil {
		rep.Tampered = "header: " + err.Error()
		return rep
	}
	if key != "" {
		if key != rep.Header.SigningKey {
			rep.Tampered = fmt.Sprintf("signature: the footer is signed by key %s, the header names %s", transcript.KeyID(key), transcript.KeyID(rep.Header.SigningKey))
			return rep
		}
		rep.SignedBy = transcript.KeyID(key)
	} else if rep.Header.SigningKey != "" {
		rep.Tampered = "signature: the header names a signing key but the footer is not signed"
		return rep
	}
	r := &replayer{rep: rep, dir: dir, each: each}
	if d := r.run(lines); d != nil {
		rep.Divergence = d
		return rep
	}
	rep.Consistent = rep.Tampered == ""
	return rep
}

type replayer struct {
	lines *rules.LineProtocol
	bank  [2]time.Duration
	last  string
	rep   *Report
	dir   string
	each  func(State)
	rng   *rand.Rand
	seen  map[string]bool
}

func diverge(line, ply int, field string, recorded, recomputed any) *Divergence {
	return &Divergence{Line: line, Ply: ply, Field: field, Recorded: show(recorded), Recomputed: show(recomputed)}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 300 {
		return string(b[:297]) + "..."
	}
	return string(b)
}

func (r *replayer) run(lines []transcript.Line) *Divergence {
	h := r.rep.Header
	g, err := rules.Lookup(h.Game)
	if err != nil {
		return diverge(1, 0, "game", h.Game, err.Error())
	}
	proto := g.Protocol().Files
	if lp := g.Protocol().Lines; lp != nil {
		if h.TimeControl == nil {
			return diverge(1, 0, "timeControl", nil, "a line game's header must record its time control")
		}
		l := *lp
		l.MoveTime, l.GameTime, l.LateMove, l.AutoSingle = h.TimeControl.MoveTime, h.TimeControl.GameTime, h.TimeControl.LateMove, h.TimeControl.AutoSingle
		r.lines = &l
		r.bank = [2]time.Duration{l.GameTime, l.GameTime}
	}
	st, err := g.New(h.Rules, h.Seed)
	if err != nil {
		return diverge(1, 0, "rules", h.Rules, err.Error())
	}
	policy := match.Policy(h.OnFault)
	r.rng = match.FaultRNG(h.Seed)
	r.seen = map[string]bool{}
	res := transcript.Result{
		Game: h.Game, Seed: h.Seed, Faults: []transcript.Fault{},
		White: transcript.BotRef{Name: h.White.Name, SHA256: h.White.SHA256},
		Black: transcript.BotRef{Name: h.Black.Name, SHA256: h.Black.SHA256},
	}
	forfeited := false
	for i, l := range lines[1 : len(lines)-1] {
		n := i + 2
		var t transcript.Turn
		if err := l.Decode(&t); err != nil {
			return diverge(n, 0, "record", "a turn", err.Error())
		}
		if forfeited {
			return diverge(n, t.Ply, "record", "a turn", "none: the match was already forfeited")
		}
		if st.Outcome().Over {
			return diverge(n, t.Ply, "record", "a turn", "none: the game was already over")
		}
		if r.each != nil {
			r.each(State{Before: st.Clone(), Turn: t, Line: n})
		}
		if d := r.turn(n, st, proto, policy, t, &res, &forfeited); d != nil {
			return d
		}
		r.rep.Turns++
	}
	var foot transcript.Footer
	n := len(lines)
	if err := lines[n-1].Decode(&foot); err != nil {
		return diverge(n, 0, "footer", "a footer", err.Error())
	}
	res.Turns = st.Turn()
	if ps, ok := st.(interface{ Plies() int }); ok {
		res.Plies = ps.Plies()
	}
	switch o := st.Outcome(); {
	case forfeited:
	case o.Over:
		res.Winner, res.Reason = match.WinnerName(o.Winner), o.Reason
	default:
		// The game did not finish: only an aborted footer is consistent.
		res.Winner, res.Reason, res.AbortReason = transcript.WinnerNone, transcript.ReasonAborted, foot.Result.AbortReason
	}
	res.DurationMs = foot.Result.DurationMs
	if !reflect.DeepEqual(normal(foot.Result), normal(res)) {
		return diverge(n, 0, "result", foot.Result, res)
	}
	r.rep.Result = res
	return nil
}

func normal(r transcript.Result) transcript.Result {
	if r.Faults == nil {
		r.Faults = []transcript.Fault{}
	}
	return r
}

// Facts rebuilds the sandbox's report of a turn from its record.
func Facts(t transcript.Turn) (sandbox.Report, error) {
	rep := sandbox.Report{
		StartError: t.StartError, ExitCode: t.ExitCode, Signal: t.Signal,
		TimedOut: t.TimedOut, OOMKilled: t.OOMKilled,
		Wall:       time.Duration(t.WallMs * float64(time.Millisecond)),
		PeakMemory: t.PeakMemory, GameDir: t.GameDir,
	}
	a := &rep.Answer
	switch {
	case t.Answer != nil:
		a.Present, a.Data = true, []byte(*t.Answer)
	case t.AnswerBase64 != "":
		data, err := base64.StdEncoding.DecodeString(t.AnswerBase64)
		if err != nil {
			return rep, fmt.Errorf("answerBase64: %v", err)
		}
		a.Present, a.Data = true, data
	case t.AnswerType != "":
		a.Present = true
	}
	if a.Present {
		a.Type = sandbox.TypeFile
		if t.AnswerType != "" {
			a.Type = sandbox.EntryType(t.AnswerType)
		}
		a.Size, a.Truncated = t.AnswerSize, t.AnswerTruncated
	}
	return rep, nil
}

func (r *replayer) turn(n int, st rules.State, proto *rules.FileProtocol, policy match.Policy, t transcript.Turn, res *transcript.Result, forfeited *bool) *Divergence {
	side := st.ToMove()
	if t.Ply != st.Turn()+1 {
		return diverge(n, t.Ply, "ply", t.Ply, st.Turn()+1)
	}
	if t.Side != side.String() {
		return diverge(n, t.Ply, "side", t.Side, side.String())
	}
	if t.Phase != st.Phase() {
		return diverge(n, t.Ply, "phase", t.Phase, st.Phase())
	}
	if r.lines != nil {
		return r.lineTurn(n, st, policy, t, res, forfeited)
	}
	view, err := st.View(side)
	if err != nil {
		return diverge(n, t.Ply, "state", t.State, err.Error())
	}
	if t.State != string(view) {
		return diverge(n, t.Ply, "state", t.State, string(view))
	}
	if sum := sha256.Sum256(view); t.StateSHA256 != hex.EncodeToString(sum[:]) {
		return diverge(n, t.Ply, "stateSha256", t.StateSHA256, hex.EncodeToString(sum[:]))
	}
	facts, err := Facts(t)
	if err != nil {
		return diverge(n, t.Ply, "answer", t.AnswerBase64, err.Error())
	}
	j := match.JudgeTurn(st, proto, facts)
	if d := compare(n, t, j); d != nil {
		return d
	}
	if d := r.dataFiles(n, t, j); d != nil {
		return d
	}
	played, done, d := r.settle(n, st, t, j, policy == match.RandomMove, res, forfeited)
	if d != nil || done {
		return d
	}
	if want := string(bytes.TrimRight(st.EncodeMove(played), "\r\n")); t.Played != want {
		return diverge(n, t.Ply, "played", t.Played, want)
	}
	if err := st.Apply(played); err != nil {
		return diverge(n, t.Ply, "played", t.Played, err.Error())
	}
	return nil
}

// dataFiles checks the recorded data files against the listing and the blobs.
func (r *replayer) dataFiles(n int, t transcript.Turn, j match.Judgement) *Divergence {
	var want []transcript.DataFile
	for _, e := range j.Data {
		if e.SHA256 != "" {
			want = append(want, transcript.DataFile{Name: e.Name, Size: e.Size, SHA256: e.SHA256})
		}
	}
	if !reflect.DeepEqual(want, t.DataFiles) && (len(want) > 0 || len(t.DataFiles) > 0) {
		return diverge(n, t.Ply, "dataFiles", t.DataFiles, want)
	}
	for _, df := range t.DataFiles {
		if r.seen[df.SHA256] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.dir, transcript.BlobDir, df.SHA256))
		if err != nil {
			r.rep.Tampered = fmt.Sprintf("ply %d: the blob of data file %s (%s) is missing", t.Ply, df.Name, df.SHA256)
			return diverge(n, t.Ply, "blob "+df.SHA256, "present", "missing")
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != df.SHA256 || int64(len(data)) != df.Size {
			r.rep.Tampered = fmt.Sprintf("ply %d: blobs/%s holds other content (sha256 %s, %d bytes)", t.Ply, df.SHA256, got, len(data))
			return diverge(n, t.Ply, "blob "+df.SHA256, df.SHA256, got)
		}
		r.seen[df.SHA256] = true
		r.rep.Blobs++
	}
	return nil
}

// lineTurn re-judges one turn of a line-protocol game.
func (r *replayer) lineTurn(n int, st rules.State, policy match.Policy, t transcript.Turn, res *transcript.Result, forfeited *bool) *Divergence {
	side := st.ToMove()
	l := r.lines
	var played rules.Move
	if t.Auto {
		legal := st.LegalMoves()
		if !l.AutoSingle || len(legal) != 1 {
			return diverge(n, t.Ply, "auto", true, false)
		}
		played = legal[0]
	} else {
		question := l.Codec.Request(st, r.last, rules.Clock{Mine: r.bank[side], Theirs: r.bank[side.Other()]})
		if t.State != question {
			return diverge(n, t.Ply, "state", t.State, question)
		}
		bankOut := l.GameTime > 0 && r.bank[side] < l.MoveTime
		ex := sandbox.Exchange{Early: t.Early, TimedOut: t.TimedOut, Exited: t.Exited, TooLong: t.TooLong,
			Wall: time.Duration(math.Round(t.WallMs*1000)) * time.Microsecond}
		if t.Answer != nil {
			ex.Line = *t.Answer
		}
		if l.GameTime > 0 {
			r.bank[side] -= ex.Wall
		}
		j := match.JudgeLine(st, ex, bankOut)
		if d := compare(n, t, j); d != nil {
			return d
		}
		lateRandom := j.Verdict == rules.Timeout && l.LateMove == "random" && !bankOut
		var done bool
		var d *Divergence
		played, done, d = r.settle(n, st, t, j, policy == match.RandomMove || lateRandom, res, forfeited)
		if d != nil || done {
			return d
		}
	}
	want := string(bytes.TrimRight(st.EncodeMove(played), "\r\n"))
	if t.Played != want {
		return diverge(n, t.Ply, "played", t.Played, want)
	}
	if err := st.Apply(played); err != nil {
		return diverge(n, t.Ply, "played", t.Played, err.Error())
	}
	r.last = want
	return nil
}

// compare checks a recorded judgement against the recomputed one.
func compare(n int, t transcript.Turn, j match.Judgement) *Divergence {
	move := ""
	if j.Move != nil {
		move = j.Move.String()
	}
	switch {
	case string(j.Verdict) != t.Verdict:
		return diverge(n, t.Ply, "verdict", t.Verdict, j.Verdict)
	case j.Reason != t.Reason:
		return diverge(n, t.Ply, "reason", t.Reason, j.Reason)
	case j.Review != t.Review:
		return diverge(n, t.Ply, "review", t.Review, j.Review)
	case move != t.Move:
		return diverge(n, t.Ply, "move", t.Move, move)
	}
	return nil
}

// settle decides what a judged turn played: the bot's move, a substitute for
// a fault (substitute true), or nothing because the fault forfeited the game
// (done true).
func (r *replayer) settle(n int, st rules.State, t transcript.Turn, j match.Judgement, substitute bool, res *transcript.Result, forfeited *bool) (rules.Move, bool, *Divergence) {
	if j.Verdict == rules.OK {
		if t.Substituted {
			return nil, false, diverge(n, t.Ply, "substituted", true, false)
		}
		return j.Move, false, nil
	}
	res.Faults = append(res.Faults, transcript.Fault{Ply: t.Ply, Side: t.Side, Verdict: t.Verdict, Reason: j.Reason, Review: j.Review})
	if !substitute {
		if t.Played != "" || t.Substituted {
			return nil, false, diverge(n, t.Ply, "played", t.Played, "nothing: the fault forfeits the game")
		}
		*forfeited = true
		res.Winner, res.Reason = match.WinnerName(st.ToMove().Other()), t.Verdict
		return nil, true, nil
	}
	if !t.Substituted {
		return nil, false, diverge(n, t.Ply, "substituted", false, true)
	}
	return match.Substitute(r.rng, st), false, nil
}
