// Package view renders a match transcript as one self-contained HTML file: the
// board ply by ply, the fog as each player saw it (or what each knew), shields,
// abilities, terrain and chains where a game draws them, each turn's verdict,
// time and exit code, the lines a line game exchanged, the points over the
// match where a game keeps them, and the result. It needs no network and
// no other file; everything is computed here by replaying the transcript with
// the rules engine and embedded as data.
//
// A page must never run what a transcript holds: bot output, names and
// moves are data, escaped by html/template and JSON, and the page loads
// nothing from anywhere.
package view

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
)

//go:embed page.html
var page string

// Step is one position of the match: the start, then the position after each
// turn together with that turn's facts.
type Step struct {
	Ply         int                    `json:"ply"`
	Side        string                 `json:"side,omitempty"`
	Phase       string                 `json:"phase,omitempty"`
	Move        string                 `json:"move,omitempty"`
	Played      string                 `json:"played,omitempty"`
	Substituted bool                   `json:"substituted,omitempty"`
	Verdict     string                 `json:"verdict,omitempty"`
	Reason      string                 `json:"reason,omitempty"`
	ExitCode    int                    `json:"exitCode"`
	Signal      int                    `json:"signal,omitempty"`
	WallMs      float64                `json:"wallMs"`
	CPUMs       float64                `json:"cpuMs"`
	PeakMemory  int64                  `json:"peakMemory"`
	StderrTail  string                 `json:"stderrTail,omitempty"`
	Frames      map[string]rules.Frame `json:"frames"` // "true", "white", "black"
	// Points is each side's score in the position, White first, for games
	// decided on points (rules.Scorer).
	Points *[2]int `json:"points,omitempty"`
	// The lines of a line game's turn: what each side was sent before the
	// question, the question, the answer read (nil when there was none), what
	// each side was sent once the turn was judged, and output the bot wrote
	// when it was not asked. Auto: the only legal move, played without asking.
	Before   *transcript.Lines `json:"before,omitempty"`
	Question string            `json:"question,omitempty"`
	Answer   *string           `json:"answer,omitempty"`
	After    *transcript.Lines `json:"after,omitempty"`
	Early    string            `json:"early,omitempty"`
	Late     string            `json:"late,omitempty"`
	Auto     bool              `json:"auto,omitempty"`
}

// Data is everything the page shows.
type Data struct {
	Game       string            `json:"game"`
	White      string            `json:"white"`
	Black      string            `json:"black"`
	Seed       uint64            `json:"seed"`
	Result     transcript.Result `json:"result"`
	Consistent bool              `json:"consistent"`
	Problem    string            `json:"problem,omitempty"`
	// Lines is set for a line game; Opening is what each side was sent when
	// it started.
	Lines   bool              `json:"lines,omitempty"`
	Opening *transcript.Lines `json:"opening,omitempty"`
	Steps   []Step            `json:"steps"`
	// Live, for a match being played, is where its next steps stream from
	// (server-sent events: "step" with the step's number as id, then "end"
	// with the result); the page follows them.
	Live string `json:"live,omitempty"`
}

// Picture sets the position a step shows, st: its frames and points.
func (s *Step) Picture(st rules.State) {
	s.Frames = map[string]rules.Frame{}
	if f, ok := st.(rules.Framer); ok {
		s.Frames = map[string]rules.Frame{
			"true":  f.Frame(rules.NoSide),
			"white": f.Frame(rules.White),
			"black": f.Frame(rules.Black),
		}
	}
	if sc, ok := st.(rules.Scorer); ok {
		p := sc.Points()
		s.Points = &p
	}
}

// Build replays the transcript (file or match directory) and collects the steps.
// A transcript that does not replay consistently is still shown up to where it
// diverges, with the problem at the top.
func Build(path string) (*Data, error) {
	file, dir := replay.Locate(path)
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lines, err := transcript.Read(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	d := &Data{}
	if len(lines) > 0 {
		var h transcript.Header
		if err := lines[0].Decode(&h); err != nil {
			return nil, fmt.Errorf("%s: its header: %w", file, err)
		}
		d = Begin(h)
	}
	var last *replay.State
	rep := replay.Lines(lines, dir, func(s replay.State) {
		if len(d.Steps) == 0 {
			d.Steps = append(d.Steps, Step{})
		}
		d.Steps[len(d.Steps)-1].Picture(s.Before)
		d.Steps = append(d.Steps, NewStep(s.Turn, d.Lines))
		last = &s
	})
	d.Consistent, d.Problem, d.Result = rep.Consistent, rep.Problem(), rep.Result
	if !rep.Consistent && len(lines) > 0 {
		var foot transcript.Footer
		if err := lines[len(lines)-1].Decode(&foot); err != nil {
			d.Problem += fmt.Sprintf("; its last line does not read as a footer (%v)", err)
		}
		d.Result = foot.Result
	}
	// The position after the last turn.
	if last != nil {
		d.Steps[len(d.Steps)-1].Picture(last.After)
	}
	if len(d.Steps) == 0 {
		return d, fmt.Errorf("%s: no turns to show (%s)", file, rep.Problem())
	}
	shareLegends(d.Steps)
	return d, nil
}

// Begin is what the page shows of a match before its first turn: the
// game, the sides and the seed its header names.
func Begin(h transcript.Header) *Data {
	return &Data{Game: h.Game, White: h.White.Name, Black: h.Black.Name, Seed: h.Seed,
		Lines: h.Protocol == protocolLines, Opening: h.Opening}
}

// NewStep is the step of turn t, without its position (Picture sets it);
// lines says the match is a line game, whose steps carry the lines.
func NewStep(t transcript.Turn, lines bool) Step {
	step := Step{
		Ply: t.Ply, Side: t.Side, Phase: t.Phase, Move: t.Move, Played: t.Played, Substituted: t.Substituted,
		Verdict: t.Verdict, Reason: t.Reason, ExitCode: t.ExitCode, Signal: t.Signal,
		WallMs: t.WallMs, CPUMs: t.CPUMs, PeakMemory: t.PeakMemory, StderrTail: t.StderrTail,
	}
	if lines {
		step.Before, step.Question, step.Answer, step.After = t.Before, t.State, t.Answer, t.After
		step.Early, step.Late, step.Auto = t.Early, t.Late, t.Auto
	}
	if t.Verdict == string(rules.InvalidOutput) {
		// No move was read from the answer: the record's move is the
		// empty one the referee kept ("[0,0]-[0,0]"), which would read as
		// a move played.
		step.Move = ""
	}
	return step
}

// protocolLines is the header's protocol of a line game.
const protocolLines = "lines"

// shareLegends drops each frame's legend where it repeats the one of the
// same view a step earlier; the page shows the last legend given.
func shareLegends(steps []Step) {
	var l Legends
	for i := range steps {
		l.Share(&steps[i])
	}
}

// Legends are the legends last given of each view, for steps given one at
// a time (a match followed as it is played).
type Legends map[string][]string

// Share drops each of s's legends that repeats the last one given of its
// view, and notes the others.
func (l *Legends) Share(s *Step) {
	if *l == nil {
		*l = Legends{}
	}
	for mode, f := range s.Frames {
		if f.Legend == nil {
			continue
		}
		if slices.Equal(f.Legend, (*l)[mode]) {
			f.Legend = nil
			s.Frames[mode] = f
			continue
		}
		(*l)[mode] = f.Legend
	}
}

// HTML renders the page.
func HTML(d *Data) ([]byte, error) {
	data, err := json.Marshal(d) // escapes <, > and &: safe inside <script>
	if err != nil {
		return nil, err
	}
	title := html.EscapeString(fmt.Sprintf("%s: %s vs %s", d.Game, d.White, d.Black))
	out := strings.Replace(page, "{{TITLE}}", title, 1)
	out = strings.Replace(out, "{{DATA}}", string(data), 1)
	return []byte(out), nil
}

// Hidden stands in the viewer for what a player's copy of a game leaves out
// of the other side's turns (transcript.Redact).
const Hidden = "(left out: a side's output is its own team's)"

// Redact leaves out of d what is the other side's own when the player of
// side keep ("white" or "black") looks at it: its stderr tails, and what it
// wrote out of turn.
func (d *Data) Redact(keep string) {
	for i := range d.Steps {
		d.Steps[i].Redact(keep)
	}
}

// Redact leaves out of s what is its side's own unless that side is keep
// ("" keeps neither side's).
func (s *Step) Redact(keep string) {
	if s.Side == "" || s.Side == keep {
		return
	}
	for _, f := range s.own() {
		if *f != "" {
			*f = Hidden
		}
	}
}

// Own says whether s holds any of its side's own output.
func (s *Step) Own() bool {
	for _, f := range s.own() {
		if *f != "" {
			return true
		}
	}
	return false
}

// own are the fields of s that are its side's own output: its stderr, and
// what it wrote out of turn.
func (s *Step) own() []*string { return []*string{&s.StderrTail, &s.Early, &s.Late} }

// DefaultOutput is where arena view writes the page of the match at path
// (a transcript or a match directory) when told nowhere: the match
// directory's name with .html, in the current directory. A match's own
// directory is evidence, never written to after its game.
func DefaultOutput(path string) string {
	_, dir := replay.Locate(path)
	name := filepath.Base(filepath.Clean(dir))
	if name == "." || name == string(filepath.Separator) || name == "" {
		name = "match"
	}
	return name + ".html"
}
