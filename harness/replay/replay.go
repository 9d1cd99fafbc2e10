// Package replay re-judges a match from its transcript with the rules engine
// alone: no bot runs to replay it. It recomputes every state that was handed
// out, every verdict, every move played and the result, and checks the hash
// chain, the footer's signature and the data-file blobs. The first thing that
// differs is reported with the ply, the field, and both values.
//
// Rerun is the one place a bot runs again: a disputed turn is played in a
// fresh sandbox box with exactly the input the transcript recorded (a line
// game's bot is first sent its recorded dialogue), and its answer compared
// with the record. Replay must never trust a transcript's own verdicts, and
// rerun must never hand a bot anything the transcript does not hold.
package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games" // a transcript may be of any game
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
	// NotKept counts the data-file versions recorded by hash only under the
	// match's evidence policy (their content is not in blobs/).
	NotKept  int    `json:"notKept,omitempty"`
	SignedBy string `json:"signedBy,omitempty"` // key id of the signer
	// Head is the hash of the transcript's last line as recorded: the
	// chain's head, which a log entry names.
	Head string `json:"-"`
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

// State is the recomputed game at one turn, as Lines hands it out.
type State struct {
	Before rules.State // the position the bot was asked to move in
	After  rules.State // the position the turn left
	Ask    referee.Ask // what the bot was asked (Ask.Turn rebuilds a file turn)
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
	rep.Head = lines[len(lines)-1].Hash
	key, err := transcript.VerifySignature(lines)
	if err != nil {
		rep.Tampered = "signature: " + err.Error()
		return rep
	}
	return signed(rep, lines, key, dir, each)
}

// Published replays a published copy of a transcript (transcript.Redact:
// both sides' private fields left out) as r gives it, a line at a time,
// holding one line and the game's state: its chain is followed through
// the hashes its redacted lines give, its footer's signature checked when
// the footer is whole, and every move and verdict recomputed as Lines
// does. What the redacted lines left out is not checked. The error is
// why r could not be read to its end (a line too long or cut short, a
// read that failed); what the lines say is in the report.
func Published(r io.Reader) (*Report, error) {
	rep := &Report{}
	rp := &replayer{rep: rep, published: true}
	sc := transcript.NewScanner(r, 0)
	var (
		chain       transcript.Chain
		footer      transcript.Line
		footerWhole bool
		replaying   = true // until the replay diverges
	)
	for sc.Scan() {
		l, n := sc.Line(), sc.Lines()
		chained, whole, err := transcript.Unredact(l)
		if err != nil {
			rep.Tampered = fmt.Sprintf("redaction: line %d: %v", n, err)
			break
		}
		if err := chain.Next(chained); err != nil {
			rep.Tampered = "hash chain: " + err.Error()
			break
		}
		rep.Head = chained.Hash
		if l.Type == transcript.TypeFooter {
			footer, footerWhole = l, whole
		}
		if !replaying {
			continue // the chain is still followed to its end
		}
		var d *Divergence
		switch l.Type {
		case transcript.TypeHeader:
			if err := l.Decode(&rep.Header); err != nil {
				rep.Tampered = "header: " + err.Error()
				break
			}
			d = rp.start()
		case transcript.TypeFooter:
			if d = rp.prune(l, n); d == nil {
				d = rp.finish(l, n)
			}
		default:
			d = rp.step(n, l)
		}
		if rep.Tampered != "" {
			break
		}
		if d != nil {
			rep.Divergence, replaying = d, false
		}
	}
	if err := sc.Err(); err != nil {
		return rep, err
	}
	if rep.Tampered == "" {
		if err := chain.End(); err != nil {
			rep.Tampered = "hash chain: " + err.Error()
		}
	}
	if rep.Tampered == "" && footerWhole {
		// A footer that lost fields cannot show its signature, which was
		// over them: the chain's head, which a log entry names, stands for
		// it.
		if key, err := transcript.VerifySignature([]transcript.Line{footer}); err != nil {
			rep.Tampered = "signature: " + err.Error()
		} else {
			rep.Tampered = rep.signer(key)
		}
	}
	if rep.Tampered != "" {
		// What does not hold together is said first, as Lines says it.
		rep.Divergence = nil
	}
	rep.Consistent = rep.Tampered == "" && rep.Divergence == nil
	return rep, nil
}

// signed replays lines whose chain holds, signed by key.
func signed(rep *Report, lines []transcript.Line, key string, dir string, each func(State)) *Report {
	if err := lines[0].Decode(&rep.Header); err != nil {
		rep.Tampered = "header: " + err.Error()
		return rep
	}
	if rep.Tampered = rep.signer(key); rep.Tampered != "" {
		return rep
	}
	return play(rep, lines, dir, each)
}

// signer checks that the footer's signer (key, "" for none) is the key
// the header names, and keeps it: it returns why not, or "".
func (rep *Report) signer(key string) string {
	switch {
	case key != "" && key != rep.Header.SigningKey:
		return fmt.Sprintf("signature: the footer is signed by key %s, the header names %s", transcript.KeyID(key), transcript.KeyID(rep.Header.SigningKey))
	case key == "" && rep.Header.SigningKey != "":
		return "signature: the header names a signing key but the footer is not signed"
	case key != "":
		rep.SignedBy = transcript.KeyID(key)
	}
	return ""
}

// play recomputes every turn of lines.
func play(rep *Report, lines []transcript.Line, dir string, each func(State)) *Report {
	r := &replayer{rep: rep, dir: dir, each: each}
	if d := r.run(lines); d != nil {
		rep.Divergence = d
		return rep
	}
	rep.Consistent = rep.Tampered == ""
	return rep
}

type replayer struct {
	rep  *Report
	dir  string
	each func(State)
	// published: a published copy (Redact), which holds no data files.
	published bool
	ref       *referee.Referee
	seen      map[string]bool
	// pruned are the blobs the footer says the final policy removed.
	pruned map[string]bool
	// cannotPlay: the last turn was a bot's failure to start or build.
	cannotPlay bool
}

func diverge(line, ply int, field string, recorded, recomputed any) *Divergence {
	return &Divergence{Line: line, Ply: ply, Field: field, Recorded: show(recorded), Recomputed: show(recomputed)}
}

// sameJSON compares two values as the transcript writes them.
func sameJSON(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && bytes.Equal(ja, jb)
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

// run drives a referee with the recorded facts: each turn it settles must
// rebuild the recorded one, field for field.
func (r *replayer) run(lines []transcript.Line) *Divergence {
	if d := r.start(); d != nil {
		return d
	}
	// The footer says which blobs the evidence policy removed: read first,
	// so that each turn's blobs are checked as it is replayed.
	if d := r.prune(lines[len(lines)-1], len(lines)); d != nil {
		return d
	}
	for i, l := range lines[1 : len(lines)-1] {
		if d := r.step(i+2, l); d != nil {
			return d
		}
	}
	return r.finish(lines[len(lines)-1], len(lines))
}

// start sets up the referee the header describes and checks what it
// hands out before the first turn.
func (r *replayer) start() *Divergence {
	h := r.rep.Header
	g, err := rules.Lookup(h.Game)
	if err != nil {
		return diverge(1, 0, "game", h.Game, err.Error())
	}
	ref, err := referee.New(referee.Config{Game: g, Rules: h.Rules, Seed: h.Seed, OnFault: referee.Policy(h.OnFault),
		White: transcript.BotRef{Name: h.White.Name, SHA256: h.White.SHA256},
		Black: transcript.BotRef{Name: h.Black.Name, SHA256: h.Black.SHA256}})
	if err != nil {
		return diverge(1, 0, "rules", h.Rules, err.Error())
	}
	if tc := ref.TimeControl(); !reflect.DeepEqual(tc, h.TimeControl) {
		return diverge(1, 0, "timeControl", h.TimeControl, tc)
	}
	if o := transcript.LinesOf(ref.Opening()); !sameJSON(o, h.Opening) {
		return diverge(1, 0, "opening", h.Opening, o)
	}
	r.ref = ref
	r.seen = map[string]bool{}
	r.pruned = map[string]bool{}
	return nil
}

// prune reads the blobs the footer (line n) says the evidence policy
// removed; only the final policy removes any.
func (r *replayer) prune(footer transcript.Line, n int) *Divergence {
	var tail transcript.Footer
	if err := footer.Decode(&tail); err != nil {
		return diverge(n, 0, "footer", "a footer", err.Error())
	}
	if h := r.rep.Header; len(tail.Pruned) > 0 && (h.Evidence == nil || h.Evidence.Keep != transcript.KeepFinal) {
		return diverge(n, 0, "pruned", "none: only the final policy prunes", tail.Pruned)
	}
	for _, sum := range tail.Pruned {
		r.pruned[sum] = true
	}
	return nil
}

// step replays the turn on line n.
func (r *replayer) step(n int, l transcript.Line) *Divergence {
	var t transcript.Turn
	if err := l.Decode(&t); err != nil {
		return diverge(n, 0, "record", "a turn", err.Error())
	}
	if r.published && len(t.DataFiles) > 0 {
		// Redact leaves every data file out of a published copy: one that
		// names some was not made by it, and its blobs are not the
		// verifier's to look for.
		r.rep.Tampered = fmt.Sprintf("line %d: it names data files, which a published transcript leaves out", n)
		return diverge(n, t.Ply, "dataFiles", "none in a published transcript", len(t.DataFiles))
	}
	ref := r.ref
	// Both bots may fail to start or build: the second failure is
	// recorded after the first ended the game.
	bothFailed := n == 3 && r.cannotPlay && t.StartError != "" && t.Ply == 1
	if ref.Over() && !bothFailed {
		return diverge(n, t.Ply, "record", "a turn", "none: the game was already over")
	}
	r.cannotPlay = t.StartError != "" && t.Ply == 1
	var before rules.State
	if r.each != nil {
		before = ref.State().Clone()
	}
	a, d := r.turn(n, ref, t)
	if d != nil {
		return d
	}
	if r.each != nil {
		r.each(State{Before: before, After: ref.State().Clone(), Turn: t, Ask: a, Line: n})
	}
	r.rep.Turns++
	return nil
}

// finish checks the footer's result (line n) against the referee's.
func (r *replayer) finish(footer transcript.Line, n int) *Divergence {
	var foot transcript.Footer
	if err := footer.Decode(&foot); err != nil {
		return diverge(n, 0, "footer", "a footer", err.Error())
	}
	res := r.ref.Result()
	if res.Reason == transcript.ReasonAborted {
		// The game did not finish: only an aborted footer is consistent.
		res.AbortReason = foot.Result.AbortReason
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

// turn settles one recorded turn again and compares the records.
func (r *replayer) turn(n int, ref *referee.Referee, t transcript.Turn) (referee.Ask, *Divergence) {
	var a referee.Ask
	if t.StartError != "" && (ref.Lines() != nil || t.Verdict == string(rules.BuildError)) {
		// A line-game bot that could not be started, or a bot that did not
		// build.
		side, err := rules.ParseSide(t.Side)
		if err != nil {
			return a, diverge(n, t.Ply, "side", t.Side, err.Error())
		}
		var s referee.Step
		if t.Verdict == string(rules.BuildError) {
			s = ref.BuildFailed(side, t.StartError)
		} else {
			s = ref.StartFailed(side, t.StartError)
		}
		return a, compare(n, t, s.Record)
	}
	a, err := ref.Next()
	if err != nil {
		return a, diverge(n, t.Ply, "state", t.State, err.Error())
	}
	// Whether a version was kept is the runner's decision under the
	// evidence policy, not the referee's: it is checked against the policy.
	ev := r.rep.Header.Evidence
	mayDrop := ev != nil && (ev.Keep == transcript.KeepNone || ev.Budget > 0)
	f, err := referee.FactsOf(t)
	if err != nil {
		return a, diverge(n, t.Ply, "answer", t.AnswerBase64, err.Error())
	}
	s, err := ref.Settle(a, f)
	if err != nil {
		return a, diverge(n, t.Ply, "played", t.Played, err.Error())
	}
	for i, df := range t.DataFiles {
		if df.NotKept && !mayDrop {
			return a, diverge(n, t.Ply, "dataFiles", "kept", "not kept, which the evidence policy does not allow")
		}
		if i < len(s.Record.DataFiles) {
			s.Record.DataFiles[i].NotKept = df.NotKept
		}
	}
	if d := compare(n, t, s.Record); d != nil {
		return a, d
	}
	return a, r.blobs(n, t)
}

// compare reports the first field, in the record's order, where the
// recomputed record differs from the recorded one. HarnessMs is the runner's
// own measure and is not recomputed.
func compare(n int, recorded, recomputed transcript.Turn) *Divergence {
	recomputed.HarnessMs = recorded.HarnessMs
	a, b := reflect.ValueOf(recorded), reflect.ValueOf(recomputed)
	for i := range a.NumField() {
		x, _ := json.Marshal(a.Field(i).Interface())
		y, _ := json.Marshal(b.Field(i).Interface())
		if !bytes.Equal(x, y) && !(empty(x) && empty(y)) {
			name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
			return diverge(n, recorded.Ply, name, a.Field(i).Interface(), b.Field(i).Interface())
		}
	}
	return nil
}

func empty(j []byte) bool { return string(j) == "null" || string(j) == "[]" }

// blobs checks that every data file the turn recorded is in blobs/ with its
// content.
func (r *replayer) blobs(n int, t transcript.Turn) *Divergence {
	for _, df := range t.DataFiles {
		if r.seen[df.SHA256] {
			continue
		}
		if df.NotKept || r.pruned[df.SHA256] {
			r.seen[df.SHA256] = true
			r.rep.NotKept++
			continue
		}
		data, err := transcript.ReadBlob(r.dir, df.SHA256)
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
