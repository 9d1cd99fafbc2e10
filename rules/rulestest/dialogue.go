// Package rulestest keeps the example dialogues of the line games'
// explanations true: it plays a dialogue the way the harness carries one out
// and reads the example back out of an explanation, so that a test can
// compare the two. It is for tests only and must never be imported by code
// that ships.
package rulestest

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
)

// A dialogue is written one line per row: "W< text" is a line White's bot
// reads, "W> text" the line it writes (its answer); B for Black. A last row
// "..." says the game goes on.
const more = "..."

var row = regexp.MustCompile(`^\s*([WB][<>]( .*)?|\.\.\.)$`)

// Example returns the rows of the example dialogue in an explanation: every
// line that is a dialogue row, without its indentation.
func Example(explain string) []string {
	var out []string
	for _, l := range strings.Split(explain, "\n") {
		if row.MatchString(l) {
			out = append(out, strings.TrimLeft(l, " "))
		}
	}
	return out
}

// Answers returns the answers of a dialogue's rows, in order.
func Answers(rows []string) []string {
	var out []string
	for _, r := range rows {
		if len(r) >= 2 && r[1] == '>' {
			out = append(out, strings.TrimPrefix(r[2:], " "))
		}
	}
	return out
}

func prefix(side rules.Side) string {
	if side == rules.White {
		return "W"
	}
	return "B"
}

// Play carries out a line game from st the way the harness does, and returns
// its rows: each side's Start lines, then for every turn the lines due before
// it, the question to the side to move and the next of answers, the lines sent
// once it is played, and the End lines when the game is over. A move that is
// the only legal one is played without asking when the protocol says so. Each
// answer takes think off the mover's time bank when the game has one.
//
// It stops when the game is over (the rows end with the End lines) or when
// the answers run out ("..." is the last row); an answer the game refuses is
// an error, since an example shows a game played by its rules.
func Play(p *rules.LineProtocol, st rules.State, answers []string, think time.Duration) ([]string, error) {
	var rows []string
	deliver := func(out [2][]string) {
		for _, side := range rules.Sides {
			for _, l := range out[side] {
				rows = append(rows, prefix(side)+"< "+l)
			}
		}
	}
	bank := [2]time.Duration{p.GameTime, p.GameTime}
	clock := func(s rules.Side) rules.Clock { return rules.Clock{Mine: bank[s], Theirs: bank[s.Other()]} }
	deliver(p.Codec.Start(st))
	last := ""
	for !st.Outcome().Over {
		me := st.ToMove()
		if p.AutoSingle && len(st.LegalMoves()) == 1 {
			m := st.LegalMoves()[0]
			if err := st.Apply(m); err != nil {
				return rows, fmt.Errorf("the only legal move %v: %w", m, err)
			}
			last = strings.TrimRight(string(st.EncodeMove(m)), "\r\n")
			if st.Outcome().Over {
				deliver(p.Codec.End(st))
			}
			continue
		}
		if len(answers) == 0 {
			return append(rows, more), nil
		}
		before, q := p.Codec.Request(st, last, clock(me))
		deliver(before)
		rows = append(rows, prefix(me)+"< "+q)
		answer := answers[0]
		answers = answers[1:]
		rows = append(rows, prefix(me)+"> "+answer)
		if p.GameTime > 0 {
			bank[me] -= think
		}
		m, err := st.ParseMove([]byte(answer))
		if err == nil {
			err = st.Apply(m)
		}
		if err != nil {
			return rows, fmt.Errorf("%s answers %q to %q: %w", me, answer, q, err)
		}
		last = strings.TrimRight(string(st.EncodeMove(m)), "\r\n")
		deliver(p.Codec.Reply(st, me, true, clock(me)))
		if st.Outcome().Over {
			deliver(p.Codec.End(st))
		}
	}
	if len(answers) > 0 {
		return rows, fmt.Errorf("the game is over with %d answers left: %q", len(answers), answers)
	}
	return rows, nil
}

// Check plays the answers of the example dialogue in explain from st and
// fails t unless the example is exactly the dialogue the game carries out.
func Check(t testing.TB, explain string, p *rules.LineProtocol, st rules.State, think time.Duration) {
	t.Helper()
	want := Example(explain)
	if len(Answers(want)) == 0 {
		t.Fatalf("the explanation has no example dialogue (rows such as \"W< line\" and \"W> answer\")")
	}
	got, err := Play(p, st, Answers(want), think)
	if err != nil {
		t.Fatalf("the example dialogue is not a game: %v\nplayed so far:\n  %s", err, strings.Join(got, "\n  "))
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("the example dialogue differs from the game's at row %d: the explanation has %q, the game sends %q\nthe whole dialogue, to copy into the explanation:\n  %s",
				i+1, w, g, strings.Join(got, "\n  "))
		}
	}
}
