package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Difference is where two transcripts of one game stop being the same game:
// the first turn whose side, state, answer, verdict or move differs, or
// their results.
type Difference struct {
	Line  int    // 1-based, in the first transcript
	Ply   int    // 0 for a difference of the results
	Side  string // whose turn it was ("" for the results)
	Field string
	A, B  string // the field in each transcript, shortened
	// Resource says a side of the difference is a verdict the host's
	// speed or memory can decide (a timeout, memory run out, a build that
	// did not finish, a clock run out): it may differ between two honest
	// machines, and proves nothing of either.
	Resource bool
}

func (d *Difference) String() string {
	if d.Ply == 0 {
		return fmt.Sprintf("their results differ: %s %s against %s", d.Field, d.A, d.B)
	}
	return fmt.Sprintf("ply %d (%s) differs first, in its %s: %s against %s", d.Ply, d.Side, d.Field, d.A, d.B)
}

// resourceVerdicts are the verdicts a host's speed or memory can decide.
var resourceVerdicts = map[string]bool{"timeout": true, "out-of-memory": true, "build-error": true}

// Compare says where the transcripts a and b of one game differ in what
// the bots were given and did (nil: nowhere). Each turn's side, phase,
// state, the lines each side was sent, the answer, how the bot ended, its
// verdict, the move read and played and its data files' hashes count;
// times, output tails and what is said of the host do not. Both are
// chain-checked first.
func Compare(a, b []Line) (*Difference, error) {
	for _, t := range [][]Line{a, b} {
		if err := VerifyChain(t); err != nil {
			return nil, err
		}
	}
	n := min(len(a), len(b)) - 1 // the footers apart
	for i := 1; i < n; i++ {
		var x, y Turn
		if err := a[i].Decode(&x); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if err := b[i].Decode(&y); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if field, fa, fb := turnDiffers(x, y); field != "" {
			return &Difference{Line: i + 1, Ply: x.Ply, Side: x.Side, Field: field, A: short(fa), B: short(fb),
				Resource: resourceTurn(x) || resourceTurn(y)}, nil
		}
	}
	var fa, fb Footer
	if err := a[len(a)-1].Decode(&fa); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	if err := b[len(b)-1].Decode(&fb); err != nil {
		return nil, fmt.Errorf("footer: %w", err)
	}
	if len(a) != len(b) {
		// One went on where the other ended: its next turn, or its footer.
		return &Difference{Line: n + 1, Field: "length", A: fmt.Sprintf("%d turns", len(a)-2), B: fmt.Sprintf("%d turns", len(b)-2),
			Resource: clockReason(fa.Result.Reason) || clockReason(fb.Result.Reason)}, nil
	}
	ra, rb := fa.Result, fb.Result
	if ra.Winner != rb.Winner || ra.Reason != rb.Reason || ra.Plies != rb.Plies {
		return &Difference{Line: len(a), Field: "result", A: ra.Winner + " (" + ra.Reason + ")", B: rb.Winner + " (" + rb.Reason + ")",
			Resource: clockReason(ra.Reason) || clockReason(rb.Reason)}, nil
	}
	return nil, nil
}

// turnDiffers names the first field of what a bot was given and did that
// differs between two records of one turn, with its two values.
func turnDiffers(x, y Turn) (field, a, b string) {
	str := func(p *string) string {
		if p == nil {
			return "(none)"
		}
		return *p
	}
	js := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(data)
	}
	for _, f := range []struct{ name, a, b string }{
		{"side", x.Side, y.Side},
		{"phase", x.Phase + fmt.Sprint(x.SetupStep), y.Phase + fmt.Sprint(y.SetupStep)},
		{"state", x.StateSHA256, y.StateSHA256},
		{"lines sent before", js(x.Before), js(y.Before)},
		{"answer", str(x.Answer) + x.AnswerBase64 + x.AnswerType, str(y.Answer) + y.AnswerBase64 + y.AnswerType},
		{"answer size", fmt.Sprint(x.AnswerSize, x.AnswerTruncated), fmt.Sprint(y.AnswerSize, y.AnswerTruncated)},
		{"early output", x.Early, y.Early},
		{"start", x.StartError, y.StartError},
		{"verdict", x.Verdict, y.Verdict},
		{"end", fmt.Sprint(x.ExitCode, x.Signal, x.TimedOut, x.OOMKilled, x.Exited, x.TooLong),
			fmt.Sprint(y.ExitCode, y.Signal, y.TimedOut, y.OOMKilled, y.Exited, y.TooLong)},
		{"move", x.Move, y.Move},
		{"move played", fmt.Sprint(x.Played, x.Substituted, x.Auto), fmt.Sprint(y.Played, y.Substituted, y.Auto)},
		{"data files", js(x.DataFiles), js(y.DataFiles)},
		{"lines sent after", js(x.After), js(y.After)},
	} {
		if f.a != f.b {
			return f.name, f.a, f.b
		}
	}
	return "", "", ""
}

// resourceTurn says whether a turn's verdict is one the host can decide.
func resourceTurn(t Turn) bool {
	return resourceVerdicts[t.Verdict] || t.TimedOut || t.OOMKilled
}

// clockReason says whether a result's reason is one the host can decide:
// a forfeit for such a verdict, or a clock run out.
func clockReason(reason string) bool {
	return resourceVerdicts[reason] || strings.Contains(reason, "time") || strings.Contains(reason, "clock")
}

// short is a value as a difference shows it: at most 80 bytes.
func short(s string) string {
	if len(s) <= 80 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...", strings.ToValidUTF8(s[:77], ""))
}
