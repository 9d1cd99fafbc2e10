package referee

import (
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Judgement is the harness's reading of one turn's facts.
type Judgement struct {
	Verdict rules.Verdict
	Reason  string
	Review  bool       // the bot claims the state it was given was malformed
	Move    rules.Move // set when the answer parsed, even if illegal
	// Data lists the game-directory entries that count as data files.
	Data []sandbox.Entry
	// Offending lists entries that broke the data-file rule.
	Offending []string
}

// JudgeTurn applies the verdict table to a turn's facts. It is pure: the facts
// come from the sandbox, the rules from the game. Process faults come first (the
// bot did not finish cleanly), then the data-file rule, then the move itself.
func JudgeTurn(st rules.State, p *rules.FileProtocol, r sandbox.Report) Judgement {
	var j Judgement
	j.Data, j.Offending = dataFiles(p, r.GameDir)
	switch {
	case r.StartError != "":
		j.Verdict, j.Reason = rules.Crash, r.StartError
		return j
	case r.OOMKilled:
		j.Verdict, j.Reason = rules.OutOfMemory, fmt.Sprintf("killed for exceeding the memory limit (peak %d MiB)", r.PeakMemory>>20)
		return j
	case r.TimedOut:
		j.Verdict, j.Reason = rules.Timeout, fmt.Sprintf("still running at the time limit (stopped after %v)", r.Wall.Round(time.Millisecond))
		return j
	case r.Signal != 0:
		j.Verdict, j.Reason = rules.Crash, fmt.Sprintf("killed by signal %d (%s)", r.Signal, syscall.Signal(r.Signal))
		return j
	case r.ExitCode != 0:
		v, ok := p.ExitVerdicts[r.ExitCode]
		if !ok {
			j.Verdict, j.Reason = rules.Crash, fmt.Sprintf("exit code %d", r.ExitCode)
			return j
		}
		j.Verdict = v
		switch v {
		case rules.BotRejectedState:
			j.Reason, j.Review = fmt.Sprintf("exit code %d: the bot says the state it was given was malformed", r.ExitCode), true
		case rules.IllegalMove:
			j.Reason = fmt.Sprintf("exit code %d: the bot says its own move is illegal", r.ExitCode)
		case rules.BotError:
			j.Reason = fmt.Sprintf("exit code %d: the bot reports an internal error", r.ExitCode)
		default:
			j.Reason = fmt.Sprintf("exit code %d", r.ExitCode)
		}
		return j
	}
	if len(j.Offending) > 0 {
		j.Verdict, j.Reason = rules.DataFileViolation, dataFileReason(p, r.GameDir, j.Offending)
		return j
	}
	a := r.Answer
	switch {
	case !a.Present:
		j.Verdict, j.Reason = rules.InvalidOutput, p.MoveFile+" was not written"
		return j
	case a.Type != sandbox.TypeFile:
		j.Verdict, j.Reason = rules.InvalidOutput, fmt.Sprintf("%s is a %s, not a regular file; it was not read", p.MoveFile, a.Type)
		return j
	case a.Truncated || int64(len(a.Data)) > p.MaxMoveBytes:
		j.Verdict, j.Reason = rules.InvalidOutput, fmt.Sprintf("%s is %d bytes; the limit is %d", p.MoveFile, a.Size, p.MaxMoveBytes)
		return j
	}
	j.Move, j.Verdict, j.Reason = judgeAnswer(st, a.Data)
	return j
}

// JudgeLine applies the verdict table to one answer of a line-protocol bot.
// bankOut says the time bank, not the move time, limited the answer.
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

// judgeAnswer reads an answer and judges the move it names.
func judgeAnswer(st rules.State, answer []byte) (rules.Move, rules.Verdict, string) {
	m, err := st.ParseMove(answer)
	if err == nil {
		err = st.Judge(m)
	}
	if err != nil {
		return m, rules.VerdictOf(err), err.Error()
	}
	return m, rules.OK, ""
}

// dataFiles splits the game directory's extra entries into the data files and
// the ones that break the rule: too many, not a regular file, or too big.
func dataFiles(p *rules.FileProtocol, dir []sandbox.Entry) (data []sandbox.Entry, offending []string) {
	var extra []sandbox.Entry
	for _, e := range dir {
		if e.Name == p.StateFile || e.Name == p.MoveFile {
			continue
		}
		extra = append(extra, e)
	}
	sort.Slice(extra, func(i, k int) bool { return extra[i].Name < extra[k].Name })
	for _, e := range extra {
		if e.Type != sandbox.TypeFile || e.Size > p.MaxDataFileBytes || len(extra) > p.DataFiles {
			offending = append(offending, e.Name)
			continue
		}
		data = append(data, e)
	}
	return data, offending
}

func dataFileReason(p *rules.FileProtocol, dir []sandbox.Entry, offending []string) string {
	var extra []string
	var why []string
	for _, e := range dir {
		if e.Name == p.StateFile || e.Name == p.MoveFile {
			continue
		}
		extra = append(extra, e.Name)
		switch {
		case e.Type != sandbox.TypeFile:
			why = append(why, fmt.Sprintf("%s is a %s", e.Name, e.Type))
		case e.Size > p.MaxDataFileBytes:
			why = append(why, fmt.Sprintf("%s is %d bytes (limit %d)", e.Name, e.Size, p.MaxDataFileBytes))
		}
	}
	if len(extra) > p.DataFiles {
		why = append([]string{fmt.Sprintf("game_dir holds %d entries besides %s and %s (%s); at most %d is allowed",
			len(extra), p.StateFile, p.MoveFile, strings.Join(extra, ", "), p.DataFiles)}, why...)
	}
	return strings.Join(why, "; ")
}
