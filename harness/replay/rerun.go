package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

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
	Answer   string  `json:"answer,omitempty"`
}

// Rerun is a disputed turn run again, beside what the transcript recorded.
type Rerun struct {
	Header   transcript.Header `json:"-"`
	Recorded transcript.Turn   `json:"recorded"`
	Attempts []Attempt         `json:"attempts"`
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
	var found State
	var data []transcript.DataFile
	last := map[string][]transcript.DataFile{}
	file, dir := Locate(path)
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, found, nil, err
	}
	lines, err := transcript.Read(bytes.NewReader(raw))
	if err != nil {
		return nil, found, nil, err
	}
	rep := Lines(lines, dir, func(s State) {
		if s.Turn.Ply == ply {
			found = s
			data = last[s.Turn.Side]
		}
		last[s.Turn.Side] = s.Turn.DataFiles
	})
	if !rep.Consistent {
		return rep, found, nil, fmt.Errorf("the transcript does not replay consistently, so no turn of it is re-run: %s", rep.Problem())
	}
	if found.Before == nil {
		return rep, found, nil, fmt.Errorf("ply %d is not in the transcript (it has %d turns)", ply, rep.Turns)
	}
	return rep, found, data, nil
}

// RunAgain rebuilds the bot's game directory exactly as it was when the turn
// began (the turn the referee built, with the data files from blobs/), runs the bot in a fresh
// sandbox with the recorded limits, and judges what it does, Repeat times.
func RunAgain(ctx context.Context, o RerunOptions) (*Rerun, error) {
	rep, at, data, err := FindTurn(o.Path, o.Ply)
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
	proto := g.Protocol().Files
	if proto == nil {
		return nil, fmt.Errorf("rerun re-runs one turn of a game played one process per turn; %s bots live for the whole game (replay and view work for it)", h.Game)
	}
	_, dir := Locate(o.Path)
	turn := at.Ask.Turn
	turn.Clean = true
	for _, df := range data {
		content, err := os.ReadFile(filepath.Join(dir, transcript.BlobDir, df.SHA256))
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", df.Name, err)
		}
		turn.Put = append(turn.Put, sandbox.File{Name: df.Name, Data: content, Mode: 0o644})
	}
	repeat := max(o.Repeat, 1)
	box, err := o.Backend.Open(ctx, sandbox.Spec{Program: o.Bot.Program, Limits: h.Limits,
		Labels: map[string]string{"org.arenabots.arena.rerun": fmt.Sprintf("ply-%d", o.Ply)}})
	if err != nil {
		return nil, err
	}
	defer box.Close(context.WithoutCancel(ctx))
	out := &Rerun{Header: h, Recorded: t}
	for range repeat {
		r, err := box.Run(ctx, turn)
		if err != nil {
			return out, err
		}
		j := referee.JudgeTurn(at.Before.Clone(), proto, r)
		a := Attempt{Verdict: string(j.Verdict), Reason: j.Reason, ExitCode: r.ExitCode, Signal: r.Signal,
			TimedOut: r.TimedOut, WallMs: float64(r.Wall.Microseconds()) / 1000, CPUMs: float64(r.CPU.Microseconds()) / 1000,
			Answer: string(r.Answer.Data)}
		if j.Move != nil {
			a.Move = j.Move.String()
		}
		out.Attempts = append(out.Attempts, a)
	}
	return out, nil
}
