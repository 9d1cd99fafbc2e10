package transcript

import "fmt"

// Heard is one step of a line-game bot's dialogue: a line it was sent, or,
// with Question set, a question it was asked (Line) and the answer it gave.
type Heard struct {
	Ply      int
	Line     string
	Question bool
	Answer   *string // nil: no answer (timed out, exited)
}

// String shows the step as live output and validate do: "> line" for a line
// sent, "? question" then "< answer" for a question.
func (h Heard) String() string {
	if !h.Question {
		return "> " + h.Line
	}
	a := "(no answer)"
	if h.Answer != nil {
		a = "< " + *h.Answer
	}
	return "? " + h.Line + "\n" + a
}

// Dialogue rebuilds, from a header and its turns in order, everything the
// side's bot was sent and answered, up to and including turn ply (0: the
// whole match): the opening, then for each turn the lines before the
// question, the question when the side was asked, and the lines after it.
// It is the order the match runner delivers them in.
func Dialogue(h Header, turns []Turn, side string, ply int) ([]Heard, error) {
	i := 0
	switch side {
	case "white":
	case "black":
		i = 1
	default:
		return nil, fmt.Errorf("dialogue: side %q", side)
	}
	var out []Heard
	sent := func(ply int, lines *Lines) {
		for _, l := range lines.Sides()[i] {
			out = append(out, Heard{Ply: ply, Line: l})
		}
	}
	if len(turns) > 0 && turns[0].StartError != "" {
		return out, nil // no bot started: nothing was sent
	}
	sent(0, h.Opening)
	for _, t := range turns {
		if ply > 0 && t.Ply > ply {
			break
		}
		sent(t.Ply, t.Before)
		if t.Side == side && !t.Auto {
			out = append(out, Heard{Ply: t.Ply, Line: t.State, Question: true, Answer: t.Answer})
		}
		sent(t.Ply, t.After)
	}
	return out, nil
}
