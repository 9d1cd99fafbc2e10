package tiles

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/golden"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/rulestest"
)

// listener hears a match as the harness carries it out.
type listener interface {
	// sent: line went to side. asked: side was asked question and answered.
	sent(side rules.Side, line string)
	asked(side rules.Side, question, answer string)
	// turn is called after each move was applied and replied to, with the
	// state before it.
	turn(before, after *State, m Move)
}

// runMatch plays a game the way the harness drives a line game: the Start
// lines, then for each turn the Request lines and question, the answer
// (chosen by pick among the legal moves), Apply, and the Reply lines; and
// the End lines once the game is over. It returns the number of turns.
func runMatch(s *State, pick func(*State, []rules.Move) rules.Move, l listener) int {
	c := Codec{}
	deliver := func(out [2][]string) {
		for _, side := range rules.Sides {
			for _, line := range out[side] {
				l.sent(side, line)
			}
		}
	}
	deliver(c.Start(s))
	turns := 0
	prev := &State{}
	for !s.Outcome().Over {
		me := s.ToMove()
		before, q := c.Request(s, "", rules.Clock{})
		deliver(before)
		legal := s.LegalMoves()
		mv := pick(s, legal)
		answer := string(s.EncodeMove(mv))
		l.asked(me, q, answer)
		m, err := s.ParseMove([]byte(answer))
		if err != nil {
			panic(fmt.Sprintf("a legal move does not parse back: %q: %v", answer, err))
		}
		s.snapshotInto(prev)
		if err := s.Apply(m); err != nil {
			panic(fmt.Sprintf("a legal move is refused: %q: %v", answer, err))
		}
		deliver(c.Reply(s, me, true, rules.Clock{}))
		l.turn(prev, s, m.(Move))
		turns++
	}
	deliver(c.End(s))
	return turns
}

// snapshotInto copies s into c for reading what s was before a move: the
// board and the chains' headers (a chain's cells are only ever appended to,
// so the copied headers keep reading the cells they had). c's slices are
// reused.
func (s *State) snapshotInto(c *State) {
	board, chains := c.board, c.chains
	*c = *s
	c.board = append(board[:0], s.board...)
	for _, side := range rules.Sides {
		c.chains[side] = append(chains[side][:0], s.chains[side]...)
		c.known[side] = nil
	}
}

// randomPicker plays a random valid line, taking INFO or DESTROY half the
// time they are offered so that chains get destroyed.
func randomPicker(seed uint64) func(*State, []rules.Move) rules.Move {
	rng := rand.New(rand.NewPCG(seed, 0xb07))
	return func(_ *State, legal []rules.Move) rules.Move {
		if m, _ := asMove(legal[0]); m.Kind == Info && rng.IntN(2) == 0 {
			return legal[rng.IntN(2)]
		}
		return legal[rng.IntN(len(legal))]
	}
}

// transcript writes the whole message stream.
type transcript struct{ b bytes.Buffer }

func (t *transcript) sent(side rules.Side, line string) { fmt.Fprintf(&t.b, "> %s %s\n", side, line) }
func (t *transcript) asked(side rules.Side, q, a string) {
	fmt.Fprintf(&t.b, "? %s %s\n< %s %s\n", side, q, side, a)
}
func (t *transcript) turn(_, _ *State, _ Move) {}

func TestGoldenWire(t *testing.T) {
	for _, greeting := range []string{GreetingEngine, GreetingSeed} {
		t.Run(greeting, func(t *testing.T) {
			o := DefaultOptions()
			// A small board, so that the bots meet: the seed's game has
			// UPDATE TILE, TILE TERMINATED, LAID TERMINATED, HINT, FAILED,
			// DESTROYED and UPDATE DESTROYED.
			o.Greeting = greeting
			o.Size, o.Terminators, o.Amplifiers, o.Turns = 6, 4, 3, 100
			s, err := NewState(o, 4)
			if err != nil {
				t.Fatal(err)
			}
			var tr transcript
			fmt.Fprintf(&tr.b, "# tiles, seed 4, greeting=%s, size=6 terminators=4 amplifiers=3 turns=100 k=10; '>' a line sent, '?' the question, '<' the answer\n", greeting)
			runMatch(s, randomPicker(4), &tr)
			p := s.Points()
			fmt.Fprintf(&tr.b, "# %+v, points %d %d\n", s.Outcome(), p[0], p[1])
			golden.Check(t, "wire-"+greeting+".golden", tr.b.Bytes(), "the wire in rules/tiles/explain.go and docs")
		})
	}
}

func TestTheExplanationsDialogueIsTheGames(t *testing.T) {
	o := DefaultOptions()
	o.Size, o.Terminators, o.Amplifiers, o.K, o.Turns = 4, 2, 1, 4, 10
	s, err := NewState(o, 1616)
	if err != nil {
		t.Fatal(err)
	}
	rulestest.Check(t, Game{}.Explain(), Game{}.Protocol().Lines, s, time.Second)
	if p := s.Points(); p != [2]int{0, 10} || s.Outcome().Reason != ReasonNoTiles {
		t.Fatalf("the example ends with points %v (%s); the explanation says 0 and 10, no tiles left", p, s.Outcome().Reason)
	}
}
