package codeclash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// protocolExample is one turn of the explanation's EXAMPLES: the state.json
// a bot was given and the move.json answers it shows, every one legal. The
// game goes on with the last answer.
type protocolExample struct {
	side    rules.Side
	state   []byte
	answers []Move
}

// protocolExamples plays the game the explanation's EXAMPLES are taken from
// and returns those turns as the referee wrote them.
func protocolExamples(t *testing.T) []protocolExample {
	t.Helper()
	s := NewState(DefaultOptions(), 7)
	var out []protocolExample
	take := func(answers ...Move) {
		view, err := s.View(s.ToMove())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, protocolExample{s.ToMove(), view, answers})
		for _, m := range answers[:len(answers)-1] {
			if err := s.Judge(m); err != nil {
				t.Fatalf("example answer %v: %v", m, err)
			}
		}
		mustApply(t, s, answers[len(answers)-1])
	}
	// 1. White's first setup turn: its king.
	take(standardPlacements[0])
	for _, m := range standardPlacements[1:9] {
		mustApply(t, s, m)
	}
	// 2. Black in setup step 4: a bishop.
	take(standardPlacements[9])
	for _, m := range standardPlacements[10:] {
		mustApply(t, s, m)
	}
	// 3. White's first play move, plain or with fog; the game goes on with fog.
	take(mv(1, 0, 2, 0), withAbility(mv(1, 0, 2, 0), Fog))
	// 4. Black, fogged, shields its king.
	take(withAbility(mv(3, 3, 2, 3), Shield, 4, 2))
	// 5. White, facing the shield, resets its pawns: the pawn on [2,0]
	// returns to [1,0].
	take(withAbility(mv(0, 2, 1, 3), PawnReset))
	if p := s.Board()[1][0]; p != (Piece{Kind: Pawn, Side: rules.White}) || !s.Board()[2][0].empty() {
		t.Fatalf("after the pawnReset of example 5, [1,0] holds %v and [2,0] %v; the explanation says the pawn went back", p, s.Board()[2][0])
	}
	return out
}

// explainedExample is an example as the explanation writes it.
type explainedExample struct {
	state string
	moves []string
}

// explainedExamples reads the EXAMPLES section: each "state.json" line
// starts an example and each "move.json" line one of its answers; the JSON
// is the more deeply indented lines that follow.
func explainedExamples(t *testing.T, text string) []explainedExample {
	t.Helper()
	_, section, ok := strings.Cut(text, "\nEXAMPLES\n")
	if !ok {
		t.Fatal("the explanation has no EXAMPLES section")
	}
	type block struct {
		kind string
		text strings.Builder
	}
	var blocks []*block
	var cur *block
	for _, l := range strings.Split(section, "\n") {
		switch {
		case l == "  state.json" || l == "  move.json":
			cur = &block{kind: strings.TrimSpace(l)}
			blocks = append(blocks, cur)
		case strings.HasPrefix(l, "    ") && cur != nil:
			cur.text.WriteString(l + "\n")
		default:
			cur = nil
		}
	}
	var out []explainedExample
	for _, b := range blocks {
		switch {
		case b.kind == "state.json":
			out = append(out, explainedExample{state: b.text.String()})
		case len(out) == 0:
			t.Fatal("EXAMPLES: a move.json before any state.json")
		default:
			out[len(out)-1].moves = append(out[len(out)-1].moves, b.text.String())
		}
	}
	return out
}

func TestTheExplanationsExamplesAreRealTurns(t *testing.T) {
	real := protocolExamples(t)
	shown := explainedExamples(t, Game{}.Explain())
	want := formatExamples(real)
	if len(shown) != len(real) {
		t.Fatalf("the explanation shows %d examples, the game has %d; its examples, to copy:\n%s", len(shown), len(real), want)
	}
	for i, ex := range shown {
		r := real[i]
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(ex.state)); err != nil {
			t.Fatalf("example %d: state.json is not JSON: %v\n%s", i+1, err, ex.state)
		}
		if compact.String()+"\n" != string(r.state) {
			t.Fatalf("example %d: state.json is not what the referee writes:\n%s\nwant\n%s\nthe examples, to copy:\n%s", i+1, compact.String(), r.state, want)
		}
		st, err := Game{}.FromView(nil, []byte(ex.state))
		if err != nil {
			t.Fatalf("example %d: state.json does not read back: %v", i+1, err)
		}
		if len(ex.moves) != len(r.answers) {
			t.Fatalf("example %d shows %d answers, the game %d; the examples, to copy:\n%s", i+1, len(ex.moves), len(r.answers), want)
		}
		for k, text := range ex.moves {
			m, err := st.ParseMove([]byte(text))
			if err == nil {
				err = st.Judge(m)
			}
			if err != nil {
				t.Fatalf("example %d: move.json %s is refused: %v", i+1, text, err)
			}
			if !sameMove(m.(Move), r.answers[k]) {
				t.Fatalf("example %d: move.json %s reads as %v, the game played %v; the examples, to copy:\n%s", i+1, text, m, r.answers[k], want)
			}
		}
	}
}

// formatExamples writes the examples' JSON the way the explanation shows it,
// for copying into it after a change to the format.
func formatExamples(exs []protocolExample) string {
	var b strings.Builder
	for i, ex := range exs {
		fmt.Fprintf(&b, "  %d. (%s)\n  state.json\n%s", i+1, ex.side, indent(formatState(ex.state)))
		for _, m := range ex.answers {
			fmt.Fprintf(&b, "  move.json\n%s", indent(formatMove(ex.encode(m))))
		}
	}
	return b.String()
}

// encode writes m as move.json for the state the example was taken from.
func (ex protocolExample) encode(m Move) []byte {
	st, err := FromView(DefaultOptions(), ex.state)
	if err != nil {
		return []byte(err.Error())
	}
	return st.EncodeMove(m)
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// spaced writes compact JSON with a space after each ',' and ':' outside
// strings.
func spaced(compact []byte) string {
	var b strings.Builder
	in, esc := false, false
	for _, c := range string(compact) {
		b.WriteRune(c)
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ',' || c == ':'):
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func marshal(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return spaced(data)
}

// formatState spreads state.json over lines: a field per line, a board row
// per line (wrapped to stay within the explanation's width).
func formatState(view []byte) string {
	var v viewJSON
	if err := json.Unmarshal(view, &v); err != nil {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"phase\": %s,\n  \"playerColor\": %s,\n  \"board\": [\n", marshal(v.Phase), marshal(v.PlayerColor))
	for r, row := range v.Board {
		line := "    ["
		for c, cell := range row {
			item := marshal(cell)
			if c < Size-1 {
				item += ","
			} else {
				item += "]"
			}
			if r < Size-1 && c == Size-1 {
				item += ","
			}
			if len(line)+1+len(item) > 72 && c > 0 {
				b.WriteString(line + "\n")
				line = "     " + item
				continue
			}
			if c > 0 {
				line += " "
			}
			line += item
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("  ],\n")
	activated := marshal(v.AbilitiesActivated)
	if len(`  "abilitiesActivated": `+activated+",") > 72 {
		var items []string
		for _, a := range v.AbilitiesActivated {
			items = append(items, "    "+marshal(a))
		}
		activated = "[\n" + strings.Join(items, ",\n") + "\n  ]"
	}
	fmt.Fprintf(&b, "  \"abilitiesRemaining\": %s,\n  \"abilitiesActivated\": %s,\n  \"turnNumber\": %d,\n  \"setupStep\": %d,\n  \"blockedTiles\": %s\n}\n",
		marshal(v.AbilitiesRemaining), activated, v.TurnNumber, v.SetupStep, marshal(v.BlockedTiles))
	return b.String()
}

// formatMove writes move.json with the ability, if any, on a line of its own.
func formatMove(data []byte) string {
	s := spaced(bytes.TrimSpace(data))
	if head, ability, ok := strings.Cut(s, `, "ability": `); ok {
		return head + ",\n " + `"ability": ` + ability
	}
	return s
}

// The limits the explanation states are the sandbox's defaults.
func TestTheExplanationsLimitsAreTheDefaults(t *testing.T) {
	d := sandbox.DefaultLimits()
	text := strings.Join(strings.Fields(Game{}.Explain()), " ")
	for _, want := range []string{
		fmt.Sprintf("%d s wall clock per turn", d.TurnTimeout/time.Second),
		fmt.Sprintf("%d GiB for all of the bot's processes", d.Memory/(1<<30)),
		fmt.Sprintf("at most %d processes and threads, %d open files", d.Pids, d.OpenFiles),
		fmt.Sprintf("game_dir %d MiB; /tmp %d MiB", d.GameDirBytes>>20, d.ScratchBytes>>20),
		fmt.Sprintf("the last %d KiB of each are kept", d.OutputTail>>10),
		fmt.Sprintf("at most %d KiB", MaxMoveBytes>>10),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the explanation does not say %q", want)
		}
	}
	if d.CPUs != 1 || !strings.Contains(text, "one core") {
		t.Errorf("the explanation says one core; the default is %v", d.CPUs)
	}
	if p := (Game{}).Protocol().Files; p.ExitVerdicts[1] != rules.BotRejectedState || p.ExitVerdicts[2] != rules.IllegalMove || p.ExitVerdicts[3] != rules.BotError || len(p.ExitVerdicts) != 3 {
		t.Errorf("the exit codes the explanation lists are not the protocol's: %v", p.ExitVerdicts)
	}
}
