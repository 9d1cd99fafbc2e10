package match

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// LineTimes resolves a line game's time control: the moveTime and gameTime
// rule options when given, else the game's defaults; a turn timeout set on the
// command line (different from the file games' default) caps moveTime.
func LineTimes(p rules.LineProtocol, opts map[string]string, lim sandbox.Limits) (rules.LineProtocol, error) {
	for name, dst := range map[string]*time.Duration{"moveTime": &p.MoveTime, "gameTime": &p.GameTime} {
		if v, ok := opts[name]; ok {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return p, fmt.Errorf("%s: want a positive duration, got %q", name, v)
			}
			*dst = d
		}
	}
	if lim.TurnTimeout > 0 && lim.TurnTimeout != sandbox.DefaultLimits().TurnTimeout {
		p.MoveTime = lim.TurnTimeout
	}
	return p, nil
}

// JudgeLine applies the verdict table to one answer of a line-protocol bot.
func JudgeLine(st rules.State, ex sandbox.Exchange, bankOut bool) Judgement {
	var j Judgement
	switch {
	case ex.Early != "":
		j.Verdict, j.Reason = rules.InvalidOutput, fmt.Sprintf("wrote %q before it was asked", clip(ex.Early))
	case ex.TimedOut && bankOut:
		j.Verdict, j.Reason = rules.Timeout, "its time bank for the game ran out"
	case ex.TimedOut:
		j.Verdict, j.Reason = rules.Timeout, fmt.Sprintf("no answer within the move time (%v)", ex.Wall.Round(time.Millisecond))
	case ex.Exited:
		j.Verdict, j.Reason = rules.Crash, "the bot exited or closed its output before answering"
	case ex.TooLong:
		j.Verdict, j.Reason = rules.InvalidOutput, fmt.Sprintf("the answer is longer than %d bytes", sandbox.MaxLine)
	default:
		j.Move, j.Verdict, j.Reason = judgeAnswer(st, []byte(ex.Line))
	}
	return j
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// startSessions starts both bots and sends them the opening lines. A bot that
// cannot start loses the game (done is true).
func (m *runner) startSessions(ctx context.Context) (done bool, err error) {
	var wg sync.WaitGroup
	var errs [2]error
	for _, side := range rules.Sides {
		m.bank[side] = m.lines.GameTime
		sb, ok := m.boxes[side].(sandbox.SessionBox)
		if !ok {
			return false, errors.New("the sandbox backend cannot run line-protocol bots")
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
			m.res.Faults = append(m.res.Faults, transcript.Fault{Ply: 1, Side: side.String(), Verdict: string(rules.Crash), Reason: sf.Reason})
			m.res.Winner, m.res.Reason = WinnerName(side.Other()), string(rules.Crash)
			return true, nil
		}
		if errs[side] != nil {
			return false, fmt.Errorf("start %s's bot: %w", side, errs[side])
		}
	}
	for _, side := range rules.Sides {
		for _, line := range m.lines.Codec.Start(side) {
			if err := m.sessions[side].Send(ctx, line); err != nil {
				return false, err
			}
		}
	}
	return false, nil
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
			continue
		}
		m.ended[side] = transcript.SessionEnd{Side: side.String(), ExitCode: rep.ExitCode, Signal: rep.Signal,
			CPUMs: ms(rep.CPU), PeakMemory: rep.PeakMemory, StderrTail: string(rep.Stderr.Data)}
	}
}

// lineTurn asks the side to move for one move over its session.
func (m *runner) lineTurn(ctx context.Context) (done bool, err error) {
	st := m.st
	side := st.ToMove()
	ply := st.Turn() + 1
	rec := transcript.Turn{Ply: ply, Side: side.String(), Phase: st.Phase(), TurnNumber: ply, GameDir: []sandbox.Entry{}}
	legal := st.LegalMoves()
	if m.lines.AutoSingle && len(legal) == 1 {
		rec.Auto, rec.Verdict, rec.Move = true, string(rules.OK), legal[0].String()
		return false, m.play(st, legal[0], rec)
	}
	clock := rules.Clock{Mine: m.bank[side], Theirs: m.bank[side.Other()]}
	question := m.lines.Codec.Request(st, m.last, clock)
	timeout := m.lines.MoveTime
	bankOut := false
	if m.lines.GameTime > 0 && m.bank[side] < timeout {
		timeout, bankOut = max(m.bank[side], time.Millisecond), true
	}
	t0 := time.Now()
	ex, err := m.sessions[side].Ask(ctx, question, timeout)
	if err != nil {
		return false, fmt.Errorf("%s's turn %d: %w", side, ply, err)
	}
	harness := time.Since(t0)
	ex.Wall = ex.Wall.Truncate(time.Microsecond) // what the transcript keeps, so replay counts the same
	if m.lines.GameTime > 0 {
		m.bank[side] -= ex.Wall
	}
	j := JudgeLine(st, ex, bankOut)
	rec.State = question
	rec.StateSHA256 = sum(question)
	if ex.Line != "" || !(ex.TimedOut || ex.Exited) {
		a := ex.Line
		rec.Answer = &a
		rec.AnswerSize = int64(len(a))
	}
	rec.Early, rec.Late, rec.Exited, rec.TooLong, rec.TimedOut = ex.Early, ex.Late, ex.Exited, ex.TooLong, ex.TimedOut
	rec.Verdict, rec.Reason = string(j.Verdict), j.Reason
	rec.WallMs, rec.HarnessMs = ms(ex.Wall), ms(harness)
	if j.Move != nil {
		rec.Move = j.Move.String()
	}
	played := j.Move
	if j.Verdict != rules.OK {
		m.res.Faults = append(m.res.Faults, transcript.Fault{Ply: ply, Side: side.String(), Verdict: string(j.Verdict), Reason: j.Reason})
		lateRandom := j.Verdict == rules.Timeout && m.lines.LateMove == "random" && !bankOut
		if m.cfg.OnFault == Forfeit && !lateRandom {
			m.reply(ctx, side, false)
			if err := m.tw.Append(transcript.TypeTurn, rec); err != nil {
				return false, err
			}
			m.observe(rec)
			m.res.Winner, m.res.Reason = WinnerName(side.Other()), string(j.Verdict)
			return true, nil
		}
		played = Substitute(m.rng, st)
		rec.Substituted = true
	}
	m.reply(ctx, side, j.Verdict == rules.OK)
	return false, m.play(st, played, rec)
}

// reply sends the game's status lines to the side that just answered.
func (m *runner) reply(ctx context.Context, side rules.Side, accepted bool) {
	for _, line := range m.lines.Codec.Reply(m.st, accepted, rules.Clock{Mine: m.bank[side], Theirs: m.bank[side.Other()]}) {
		m.sessions[side].Send(ctx, line)
	}
}

// play applies a move of the line protocol and records the turn.
func (m *runner) play(st rules.State, mv rules.Move, rec transcript.Turn) error {
	rec.Played = string(trimNL(st.EncodeMove(mv)))
	if err := st.Apply(mv); err != nil {
		return fmt.Errorf("apply a judged move: %w", err)
	}
	m.last = rec.Played
	if err := m.tw.Append(transcript.TypeTurn, rec); err != nil {
		return err
	}
	m.observe(rec)
	return nil
}
