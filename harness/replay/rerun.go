package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Attempt is what the bot did when one disputed turn was run again.
type Attempt struct {
	Verdict  string  `json:"verdict"`
	Reason   string  `json:"reason,omitempty"`
	Move     string  `json:"move,omitempty"`
	ExitCode int     `json:"exitCode"`
	Signal   int     `json:"signal,omitempty"`
	TimedOut bool    `json:"timedOut,omitempty"`
	WallMs   float64 `json:"wallMs"`
	CPUMs    float64 `json:"cpuMs"`
	// HostWaitMs is how much of WallMs the host kept the bot waiting for a
	// CPU (its deadline moved past it, as in play).
	HostWaitMs float64 `json:"hostWaitMs,omitempty"`
	Answer     string  `json:"answer,omitempty"`
	// Stderr is the end of what the bot wrote to its standard error: in its
	// turn (a file game), or from its start to the disputed answer (a line
	// game's bot, stopped then).
	Stderr string `json:"stderr,omitempty"`
	// EarlierDiffer counts the earlier questions of a line game the bot
	// answered otherwise than the transcript says (it was sent the recorded
	// lines all the same); FirstDiffer is the ply of the first.
	EarlierDiffer int `json:"earlierDiffer,omitempty"`
	FirstDiffer   int `json:"firstDiffer,omitempty"`
	Earlier       int `json:"earlier,omitempty"` // earlier questions asked
}

// Rerun is a disputed turn run again, beside what the transcript recorded.
type Rerun struct {
	Header   transcript.Header `json:"-"`
	Recorded transcript.Turn   `json:"recorded"`
	// Limit is the time the disputed answer was given, as the referee gives
	// it (a line game's first answer includes the program's start).
	Limit    time.Duration `json:"limitNs"`
	Attempts []Attempt     `json:"attempts"`
}

// RerunOptions names the turn and how to run it.
type RerunOptions struct {
	Path    string // transcript or match directory
	Ply     int
	Side    string // optional: must match the ply's side
	Bot     *submission.Bot
	Backend sandbox.Backend
	Repeat  int
}

// FindTurn replays the transcript up to ply and returns the position the bot was
// asked to move in, its record, and the data files its game directory held when
// the turn began. A transcript that does not replay consistently is refused: a
// turn of a changed record proves nothing.
func FindTurn(path string, ply int) (*Report, State, []transcript.DataFile, error) {
	rep, found, data, _, err := findTurn(path, ply)
	return rep, found, data, err
}

// findTurn is FindTurn that also returns the turns up to ply, in order.
func findTurn(path string, ply int) (*Report, State, []transcript.DataFile, []transcript.Turn, error) {
	var found State
	var turns []transcript.Turn
	var data []transcript.DataFile
	last := map[string][]transcript.DataFile{}
	file, dir := Locate(path)
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, found, nil, nil, err
	}
	lines, err := transcript.Read(bytes.NewReader(raw))
	if err != nil {
		return nil, found, nil, nil, err
	}
	rep := Lines(lines, dir, func(s State) {
		if s.Turn.Ply <= ply {
			turns = append(turns, s.Turn)
		}
		if s.Turn.Ply == ply {
			found = s
			data = last[s.Turn.Side]
		}
		last[s.Turn.Side] = s.Turn.DataFiles
	})
	if !rep.Consistent {
		return rep, found, nil, nil, fmt.Errorf("the transcript does not replay consistently, so no turn of it is re-run: %s", rep.Problem())
	}
	if found.Before == nil {
		return rep, found, nil, nil, fmt.Errorf("ply %d is not in the transcript (it has %d turns)", ply, rep.Turns)
	}
	return rep, found, data, turns, nil
}

// UnrerunnableError is a turn that cannot be run again: the evidence it
// needs was not kept. Rerunnable lists the turns of the game that can be.
type UnrerunnableError struct {
	Ply        int
	Reason     string
	Rerunnable []int
}

func (e *UnrerunnableError) Error() string {
	if len(e.Rerunnable) == 0 {
		return e.Reason + "; no turn of this game can be run again"
	}
	return e.Reason + "; the turns that can be run again: " + Ranges(e.Rerunnable)
}

// Ranges writes sorted turn numbers as ranges: "1-14, 16, 18-20".
func Ranges(plies []int) string {
	var parts []string
	for i := 0; i < len(plies); {
		j := i
		for j+1 < len(plies) && plies[j+1] == plies[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(plies[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", plies[i], plies[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Rerunnable lists the turns of the match at path that can be run again:
// every turn that asked a bot something, but those that began with a data
// file whose content was not kept.
func Rerunnable(path string) ([]int, error) {
	file, dir := Locate(path)
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	lines, err := transcript.Read(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	last := map[string][]transcript.DataFile{}
	var out, unstarted []int
	rep := Lines(lines, dir, func(s State) {
		t := s.Turn
		ok := !t.Auto
		for _, df := range last[t.Side] {
			if df.NotKept || !transcript.HasBlob(dir, df.SHA256) {
				ok = false
			}
		}
		if ok {
			out = append(out, t.Ply)
		}
		if t.StartError != "" {
			unstarted = append(unstarted, t.Ply)
		}
		last[t.Side] = t.DataFiles
	})
	if !rep.Consistent {
		return nil, fmt.Errorf("the transcript does not replay consistently, so no turn of it is re-run: %s", rep.Problem())
	}
	if rep.Header.Protocol == "lines" {
		// A line bot that did not start was asked nothing.
		out = slices.DeleteFunc(out, func(p int) bool { return slices.Contains(unstarted, p) })
	}
	return out, nil
}

// RunAgain rebuilds the bot's game directory exactly as it was when the turn
// began (the turn the referee built, with the data files from blobs/), runs the bot in a fresh
// sandbox with the recorded limits, and judges what it does, Repeat times.
//
// A line game's bot lives for the whole game, so its turn is run again the
// only faithful way: a fresh bot is sent every line the transcript says it
// was sent, in order, and asked every earlier question (its answers are
// noted, but what it is sent next is the record's), then asked the disputed
// question with the recorded time limit.
func RunAgain(ctx context.Context, o RerunOptions) (*Rerun, error) {
	rep, at, data, turns, err := findTurn(o.Path, o.Ply)
	if err != nil {
		return nil, err
	}
	h, t := rep.Header, at.Turn
	if o.Side != "" && o.Side != t.Side {
		return nil, fmt.Errorf("ply %d was %s's turn, not %s's", o.Ply, t.Side, o.Side)
	}
	want := h.White
	if t.Side == rules.Black.String() {
		want = h.Black
	}
	if o.Bot.SHA256 != want.SHA256 {
		return nil, fmt.Errorf("the bot given has sha256 %s; %s's bot in this match (%s) had %s", o.Bot.SHA256, t.Side, want.Name, want.SHA256)
	}
	g, err := rules.Lookup(h.Game)
	if err != nil {
		return nil, err
	}
	if g.Protocol().Lines != nil {
		return runLinesAgain(ctx, o, h, at, turns)
	}
	proto := g.Protocol().Files
	_, dir := Locate(o.Path)
	turn := at.Ask.Turn
	turn.Clean = true
	for _, df := range data {
		content, err := transcript.ReadBlob(dir, df.SHA256)
		if df.NotKept || errors.Is(err, fs.ErrNotExist) {
			policy := "unknown"
			if h.Evidence != nil {
				policy = h.Evidence.Keep
				if h.Evidence.Budget > 0 {
					policy += fmt.Sprintf(", budget %d bytes", h.Evidence.Budget)
				}
			}
			can, lerr := Rerunnable(o.Path)
			if lerr != nil {
				return nil, lerr
			}
			return nil, &UnrerunnableError{Ply: o.Ply, Rerunnable: can, Reason: fmt.Sprintf("ply %d began with %s's data file %s (sha256 %s, %d bytes), whose content was not kept (evidence policy: %s); "+
				"the transcript proves its hash, but the turn cannot be run again without it", o.Ply, t.Side, df.Name, df.SHA256, df.Size, policy)}
		}
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", df.Name, err)
		}
		turn.Put = append(turn.Put, sandbox.File{Name: df.Name, Data: content, Mode: df.FileMode(), Owned: true})
	}
	repeat := max(o.Repeat, 1)
	box, err := o.Backend.Open(ctx, sandbox.Spec{Program: o.Bot.Program, Limits: h.Limits,
		Labels: map[string]string{"org.arenabots.arena.rerun": fmt.Sprintf("ply-%d", o.Ply)}})
	if err != nil {
		return nil, err
	}
	defer box.Close(context.WithoutCancel(ctx))
	out := &Rerun{Header: h, Recorded: t, Limit: h.Limits.TurnTimeout}
	for range repeat {
		r, err := box.Run(ctx, turn)
		if err != nil {
			return out, err
		}
		j := referee.JudgeTurn(at.Before.Clone(), proto, r)
		a := Attempt{Verdict: string(j.Verdict), Reason: j.Reason, ExitCode: r.ExitCode, Signal: r.Signal,
			TimedOut: r.TimedOut, WallMs: float64(r.Wall.Microseconds()) / 1000, CPUMs: float64(r.CPU.Microseconds()) / 1000,
			HostWaitMs: float64(r.HostWait.Microseconds()) / 1000,
			Answer:     string(r.Answer.Data), Stderr: string(r.Stderr.Data)}
		if j.Move != nil {
			a.Move = j.Move.String()
		}
		out.Attempts = append(out.Attempts, a)
	}
	return out, nil
}

// runLinesAgain re-runs a line game's turn: see RunAgain.
func runLinesAgain(ctx context.Context, o RerunOptions, h transcript.Header, at State, turns []transcript.Turn) (*Rerun, error) {
	t := at.Turn
	out := &Rerun{Header: h, Recorded: t, Limit: at.Ask.Timeout}
	if t.Auto || t.StartError != "" {
		return nil, fmt.Errorf("ply %d asked the bot nothing (%s): there is no answer to run again", o.Ply, map[bool]string{true: "an automatic move", false: "the bot did not start"}[t.Auto])
	}
	dialogue, err := transcript.Dialogue(h, turns, t.Side, t.Ply)
	if err != nil {
		return nil, err
	}
	earlierLimit, startTime := 5*time.Second, time.Duration(0)
	if tc := h.TimeControl; tc != nil && tc.MoveTime > 0 {
		earlierLimit, startTime = tc.MoveTime, tc.StartTime
	}
	box, err := o.Backend.Open(ctx, sandbox.Spec{Program: o.Bot.Program, Limits: h.Limits,
		Labels: map[string]string{"org.arenabots.arena.rerun": fmt.Sprintf("ply-%d", o.Ply)}})
	if err != nil {
		return nil, err
	}
	defer box.Close(context.WithoutCancel(ctx))
	sb, ok := box.(sandbox.SessionBox)
	if !ok {
		return nil, errors.New("the sandbox backend cannot run line-protocol bots")
	}
	for i := range max(o.Repeat, 1) {
		if i > 0 {
			if err := box.Reset(ctx); err != nil {
				return out, err
			}
		}
		a, err := talkAgain(ctx, sb, dialogue, at, earlierLimit, startTime)
		if err != nil {
			return out, err
		}
		out.Attempts = append(out.Attempts, a)
	}
	return out, nil
}

// talkAgain starts the bot once and goes through its recorded dialogue up to
// the disputed question, which it judges. Earlier questions get the move time
// (the first of them also startTime, as the referee gives it); the disputed
// one gets what the referee gave it.
func talkAgain(ctx context.Context, sb sandbox.SessionBox, dialogue []transcript.Heard, at State, earlierLimit, startTime time.Duration) (Attempt, error) {
	var a Attempt
	s, err := sb.StartSession(ctx, nil)
	var sf *sandbox.StartFailure
	if errors.As(err, &sf) {
		return Attempt{Verdict: string(rules.Crash), Reason: sf.Reason, ExitCode: -1}, nil
	}
	if err != nil {
		return a, err
	}
	stopped := false
	defer func() {
		if !stopped {
			s.Stop(context.WithoutCancel(ctx)) // a fault is already being returned
		}
	}()
	for _, step := range dialogue {
		if !step.Question {
			if err := s.Send(ctx, step.Line); err != nil {
				return a, err
			}
			continue
		}
		if step.Ply != at.Turn.Ply {
			ex, err := s.Ask(ctx, step.Line, earlierLimit+startTime)
			startTime = 0
			if err != nil {
				return a, err
			}
			a.Earlier++
			if step.Answer == nil || ex.Line != *step.Answer || ex.TimedOut || ex.Exited {
				if a.EarlierDiffer == 0 {
					a.FirstDiffer = step.Ply
				}
				a.EarlierDiffer++
			}
			continue
		}
		ex, err := s.Ask(ctx, step.Line, at.Ask.Timeout)
		if err != nil {
			return a, err
		}
		j := referee.JudgeLine(at.Before.Clone(), ex, at.Ask.BankOut())
		a.Verdict, a.Reason, a.TimedOut, a.Answer = string(j.Verdict), j.Reason, ex.TimedOut, ex.Line
		a.WallMs, a.HostWaitMs = float64(ex.Wall.Microseconds())/1000, float64(ex.HostWait.Microseconds())/1000
		if j.Move != nil {
			a.Move = j.Move.String()
		}
		// What the bot wrote to its standard error up to its answer.
		stopped = true
		rep, err := s.Stop(context.WithoutCancel(ctx))
		if err != nil {
			return a, err
		}
		a.Stderr = string(rep.Stderr.Data)
		return a, nil
	}
	return a, fmt.Errorf("ply %d: the transcript holds no question to %s at that ply", at.Turn.Ply, at.Turn.Side)
}

// Sandbox is where a disputed turn runs again: the backend kind, image and
// runtime the match recorded, unless cfg names others (a runtime is taken
// from the record only for the backend it was recorded with).
func Sandbox(h transcript.Header, cfg sandbox.Config) sandbox.Config {
	if cfg.Kind == "" {
		cfg.Kind = h.Sandbox["backend"]
	}
	if cfg.Image == "" {
		cfg.Image = h.Sandbox["image"]
	}
	if cfg.Runtime == "" && cfg.Kind == h.Sandbox["backend"] {
		cfg.Runtime = h.Sandbox["runtime"]
	}
	return cfg
}

// ImageDrift says how the runtime image of b differs from the one the match
// ran on, or "" when it does not (or nothing was recorded to compare).
func ImageDrift(ctx context.Context, b sandbox.Backend, h transcript.Header) (string, error) {
	then := h.Sandbox["imageId"]
	if then == "" {
		return "", nil
	}
	d, err := b.Describe(ctx)
	if err != nil {
		return "", err
	}
	switch now := d["imageId"]; {
	case now == "":
		return fmt.Sprintf("the %s sandbox runs no runtime image; the match ran on %s", d["backend"], then), nil
	case now != then:
		return fmt.Sprintf("image %s is %s now; the match ran on %s", d["image"], now, then), nil
	}
	return "", nil
}
