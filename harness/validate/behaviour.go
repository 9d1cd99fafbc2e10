package validate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// dialogueSteps is how much of a dialogue the evidence keeps.
const dialogueSteps = 40

// behaviour runs the bot on every prepared position as each colour, then a full
// match against the random bot as each colour.
func behaviour(ctx context.Context, rep *Report, bot *submission.Bot, files []sandbox.File, o Options) error {
	proto := o.Game.Protocol().Files
	var walls, firsts []float64
	var peak int64
	dataName := ""
	ex, _ := o.Game.(rules.Exerciser)
	for _, side := range rules.Sides {
		if proto == nil || ex == nil {
			break // the other games get the full matches
		}
		positions := ex.Positions(o.Seed)[side]
		box, err := o.Backend.Open(ctx, sandbox.Spec{Program: bot.Program, Limits: o.Limits,
			Labels: map[string]string{"org.arenabots.arena.validate": rep.Name}})
		if err != nil {
			return fmt.Errorf("start the sandbox: %w", err)
		}
		failed := false
		for _, pos := range positions {
			view, err := pos.State.View(side)
			if err != nil {
				box.Close(ctx)
				return fmt.Errorf("render %s: %w", pos.Label, err)
			}
			r, err := box.Run(ctx, referee.FileTurn(proto, view))
			if err != nil {
				box.Close(ctx)
				return fmt.Errorf("sandbox: %w", err)
			}
			walls = append(walls, float64(r.Wall.Microseconds())/1000)
			peak = max(peak, r.PeakMemory)
			j := referee.JudgeTurn(pos.State, proto, r)
			for _, d := range j.Data {
				dataName = d.Name
			}
			if j.Verdict != rules.OK && !failed {
				failed = true
				detail, fix := failure(o.Game, j.Verdict, j.Reason, r.ExitCode, string(r.Stderr.Data))
				ev := evidence(pos.Label, view, r, j)
				if rd, ok := pos.State.(rules.Renderer); ok {
					ev.Board = rd.Render() // the true position, as the game draws it
				}
				rep.add(Check{Name: "answers as " + side.String(), Status: Fail,
					Detail: pos.Label + ": " + detail, Fix: fix, Evidence: ev})
			}
		}
		if err := box.Close(ctx); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		if !failed {
			rep.add(Check{Name: "answers as " + side.String(), Status: Pass,
				Detail: fmt.Sprintf("%d positions: every setup step, normal, fogged and shielded play, abilities used", len(positions))})
		}
	}
	if dataName != "" {
		var readme []byte
		for _, f := range files {
			if b := strings.ToLower(path.Base(f.Name)); strings.HasPrefix(b, "readme") {
				readme = f.Data
			}
		}
		if !bytes.Contains(readme, []byte(dataName)) {
			rep.add(Check{Name: "readme: data file", Status: Warn, Detail: fmt.Sprintf("the bot keeps a data file %q that the README does not mention", dataName),
				Fix: "name the data file in the README, with its format and purpose"})
		}
	}
	// The full matches are played even after a failure above: a team sees
	// whether its bot gets through a whole game all the same.
	for _, side := range rules.Sides {
		if o.Opponent == nil {
			rep.add(Check{Name: "match as " + side.String(), Status: Skip, Detail: "not run: there is no built-in random bot to play against"})
			continue
		}
		w, first, ms, err := fullMatch(ctx, rep, bot, side, o)
		if err != nil {
			return err
		}
		walls = append(walls, w...)
		if first > 0 {
			firsts = append(firsts, first)
		}
		peak = max(peak, ms)
	}
	if len(walls)+len(firsts) > 0 {
		slices.Sort(walls)
		limit, start := o.Limits.TurnTimeout, time.Duration(0)
		if lp := o.Game.Protocol().Lines; lp != nil {
			l, err := referee.LineTimes(*lp, o.Rules)
			if err != nil {
				return err
			}
			limit, start = l.MoveTime, rules.ProgramStart
		}
		rep.Usage = &Usage{Turns: len(walls) + len(firsts), LimitMs: float64(limit.Microseconds()) / 1000, PeakMemory: peak, MemLimit: o.Limits.Memory}
		if len(walls) > 0 {
			rep.Usage.P50Ms, rep.Usage.MaxMs = walls[len(walls)/2], walls[len(walls)-1]
		}
		if len(firsts) > 0 {
			rep.Usage.StartMs, rep.Usage.StartLimitMs = slices.Max(firsts), float64((limit+start).Microseconds())/1000
		}
		switch u := rep.Usage; {
		case rep.Failures > 0:
		case u.MaxMs > 0.8*u.LimitMs:
			rep.add(Check{Name: "time", Status: Warn, Detail: fmt.Sprintf("the slowest turn took %.0f ms of the %.0f ms limit", u.MaxMs, u.LimitMs),
				Fix: "leave a margin: a loaded host is slower than yours"})
		case u.StartMs > 0.8*u.StartLimitMs:
			rep.add(Check{Name: "time", Status: Warn, Detail: fmt.Sprintf("the first answer, which includes starting the program, took %.0f ms of the %.0f ms limit", u.StartMs, u.StartLimitMs),
				Fix: "start faster: load less before the first answer, or leave the work for later turns"})
		}
		if float64(peak) > 0.8*float64(o.Limits.Memory) && rep.Failures == 0 {
			rep.add(Check{Name: "memory", Status: Warn, Detail: fmt.Sprintf("peak memory %d MiB of %d MiB", peak>>20, o.Limits.Memory>>20), Fix: "use less memory"})
		}
	}
	return nil
}

// fixFor is what a bot author should do about a verdict: the game's own
// advice where it has some (rules.Advisor), else what holds for any game.
func fixFor(g rules.Game, v rules.Verdict) string {
	if a, ok := g.(rules.Advisor); ok {
		if fix := a.Advice(v); fix != "" {
			return fix
		}
	}
	files := g.Protocol().Files
	switch v {
	case rules.Timeout:
		return "answer well within the turn limit, on every kind of state"
	case rules.Crash, rules.BotError:
		return "run the bot on the state shown and fix the crash (the stderr tail is below)"
	case rules.OutOfMemory:
		return "stay under the memory limit"
	case rules.InvalidOutput:
		if files == nil {
			return "answer each question with exactly one line, as the protocol shows, and print nothing else"
		}
		return "write " + files.MoveFile + " exactly as the guide shows, then exit 0"
	case rules.IllegalMove:
		return "play only moves the rules allow in the position shown (arena rules explain)"
	case rules.BotRejectedState:
		return "read every kind of state the game's protocol describes (arena rules explain)"
	case rules.DataFileViolation:
		if files != nil {
			return fmt.Sprintf("keep at most %d regular data file of at most %d MiB in game_dir", files.DataFiles, files.MaxDataFileBytes>>20)
		}
	}
	return ""
}

func evidence(label string, state []byte, r sandbox.Report, j referee.Judgement) *Evidence {
	return &Evidence{Label: label, State: string(state), Answer: string(r.Answer.Data), ExitCode: r.ExitCode, Signal: r.Signal,
		Verdict: string(j.Verdict), Reason: j.Reason, WallMs: float64(r.Wall.Microseconds()) / 1000,
		PeakMemory: r.PeakMemory, StderrTail: string(r.Stderr.Data)}
}

// lineEvidence adds to a line game's faulty turn t the dialogue that led to
// it and the position it was asked in, rebuilt by replaying the transcript.
func lineEvidence(e *Evidence, lines []transcript.Line, dir string, turns []transcript.Turn, t transcript.Turn) error {
	var h transcript.Header
	if err := lines[0].Decode(&h); err != nil {
		return err
	}
	if h.Protocol != "lines" {
		return nil
	}
	d, err := transcript.Dialogue(h, turns, t.Side, t.Ply)
	if err != nil {
		return err
	}
	// Up to the faulty answer: what came after it was the fault's doing.
	for i, step := range d {
		if step.Question && step.Ply == t.Ply {
			d = d[:i+1]
			break
		}
	}
	for _, step := range d[max(0, len(d)-dialogueSteps):] {
		e.Dialogue = append(e.Dialogue, strings.Split(step.String(), "\n")...)
	}
	replay.Lines(lines, dir, func(s replay.State) {
		if s.Turn.Ply != t.Ply {
			return
		}
		if r, ok := s.Before.(rules.Renderer); ok {
			e.Board = r.Render()
		}
	})
	return nil
}

// MatchDir is where a validation kept in dir (Options.Dir) keeps its full
// match with the bot on side.
func MatchDir(dir string, side rules.Side) string {
	return filepath.Join(dir, "match-as-"+side.String())
}

// fullMatch plays the bot against the random bot with the bot on side. It
// returns the bot's answers' wall times in ms, apart from its first answer
// in a line game (first; 0 for none), whose clock also covers starting the
// program, and its peak memory.
func fullMatch(ctx context.Context, rep *Report, bot *submission.Bot, side rules.Side, o Options) (walls []float64, first float64, peak int64, err error) {
	dir := ""
	if o.Dir != "" {
		dir = MatchDir(o.Dir, side)
	} else {
		tmp, err := os.MkdirTemp("", "arena-validate-")
		if err != nil {
			return nil, 0, 0, err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "match")
	}
	white, black := bot, o.Opponent
	if side == rules.Black {
		white, black = o.Opponent, bot
	}
	res, err := match.Run(ctx, match.Config{Game: o.Game, Rules: o.Rules, Seed: o.Seed + uint64(side), White: white, Black: black,
		Backend: o.Backend, Limits: o.Limits, Dir: dir, Labels: map[string]string{"org.arenabots.arena.validate": rep.Name}})
	if err != nil {
		return nil, 0, 0, err
	}
	name := "match as " + side.String()
	if res.Reason == transcript.ReasonAborted {
		return nil, 0, 0, fmt.Errorf("%s aborted by the host or sandbox: %s", name, res.AbortReason)
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return nil, 0, 0, err
	}
	var foot transcript.Footer
	if lines[len(lines)-1].Decode(&foot) == nil {
		for _, s := range foot.Sessions {
			if s.Side == side.String() {
				peak = max(peak, s.PeakMemory)
			}
		}
	}
	var turns []transcript.Turn
	asked := false
	for _, l := range lines {
		var t transcript.Turn
		if l.Type != transcript.TypeTurn || l.Decode(&t) != nil {
			continue
		}
		turns = append(turns, t)
		if t.Side != side.String() || t.Auto {
			continue
		}
		if o.Game.Protocol().Lines != nil && !asked {
			first, asked = t.WallMs, true
		} else {
			walls = append(walls, t.WallMs)
		}
		peak = max(peak, t.PeakMemory)
		if t.Verdict != string(rules.OK) {
			answer := ""
			if t.Answer != nil {
				answer = *t.Answer
			}
			e := &Evidence{Label: fmt.Sprintf("ply %d of the match as %s", t.Ply, side), State: t.State, Answer: answer,
				ExitCode: t.ExitCode, Signal: t.Signal, Verdict: t.Verdict, Reason: t.Reason, WallMs: t.WallMs,
				PeakMemory: t.PeakMemory, StderrTail: t.StderrTail}
			if err := lineEvidence(e, lines, dir, turns, t); err != nil {
				return nil, 0, 0, err
			}
			detail, fix := failure(o.Game, rules.Verdict(t.Verdict), t.Reason, t.ExitCode, t.StderrTail)
			rep.add(Check{Name: name, Status: Fail, Detail: fmt.Sprintf("ply %d: %s", t.Ply, detail), Fix: fix,
				Evidence: e})
			return walls, first, peak, nil
		}
	}
	outcome := "a draw (" + res.Reason + ")"
	if res.Winner != transcript.WinnerDraw {
		who := "the random bot"
		if res.Winner == side.String() {
			who = "this bot"
		}
		outcome = who + " won by " + res.Reason
	}
	rep.add(Check{Name: name, Status: Pass, Detail: fmt.Sprintf("a full match against the random bot: %s after %s, no faults", outcome, words.Plural(res.Plies, "ply"))})
	return walls, first, peak, nil
}
