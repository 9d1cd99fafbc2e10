package tiles

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arenabots/arena/rules"
)

// followers drives one Listener per side with what the harness sends, and
// checks before each of a side's questions that the cells it believes its
// own are exactly its tiles on the board.
type followers struct {
	t      *testing.T
	l      [2]*follower
	bots   [2]bool // the side plays with its Listener's answers
	rng    *rand.Rand
	seed   uint64
	failed bool
}

func (f *followers) sent(side rules.Side, line string) {
	if _, err := f.l[side].Hear(line); err != nil && !f.failed {
		f.failed = true
		f.t.Errorf("seed %d: %s heard %q: %v", f.seed, side, line, err)
	}
}

func (f *followers) asked(side rules.Side, _, answer string) { f.l[side].Said(answer) }

func (f *followers) turn(_, after *State, _ Move) {}

// pick answers for a side played by its Listener: a random one of the
// answers it offers, each of which must be valid.
func (f *followers) pick(model func(*State, []rules.Move) rules.Move) func(*State, []rules.Move) rules.Move {
	return func(s *State, legal []rules.Move) rules.Move {
		me := s.ToMove()
		var own []int
		for i, c := range s.board {
			if rules.Side(c.owner) == me && c.owner >= 0 {
				own = append(own, i)
			}
		}
		var believed []int
		for _, ch := range f.l[me].chains {
			believed = append(believed, ch...)
		}
		slices.Sort(believed)
		if !slices.Equal(own, believed) && !f.failed {
			f.failed = true
			f.t.Errorf("seed %d turn %d: %s believes its tiles are %v, the board has %v", f.seed, s.turn, me, believed, own)
		}
		if !f.bots[me] {
			return model(s, legal)
		}
		answers, err := f.l[me].Hear("TURN")
		if err != nil || len(answers) == 0 {
			f.t.Fatalf("seed %d turn %d: no answer offered (%v)", f.seed, s.turn, err)
		}
		a := answers[f.rng.IntN(len(answers))]
		m, err := s.ParseMove([]byte(a))
		if err == nil {
			err = s.Judge(m)
		}
		if err != nil {
			f.t.Fatalf("seed %d turn %d: %s offered %q, which the referee refuses: %v", f.seed, s.turn, me, a, err)
		}
		return m
	}
}

// TestFollowerPlaysOnlyValidLines plays random games in which one side, or
// both, answer with the built-in bot's Listener, and the other side with the
// model bot that also INFOs and DESTROYs (so that chains get destroyed), over
// every option the random options vary.
func TestFollowerPlaysOnlyValidLines(t *testing.T) {
	for seed := range uint64(600) {
		o := randomOptions(seed)
		if seed%3 == 0 {
			o.Greeting = GreetingSeed
		}
		s, err := NewState(o, seed)
		if err != nil {
			t.Fatal(err)
		}
		f := &followers{t: t, rng: rand.New(rand.NewPCG(seed, 1)), seed: seed}
		for _, side := range rules.Sides {
			l, err := Game{}.Follow(nil)
			if err != nil {
				t.Fatal(err)
			}
			f.l[side] = l.(*follower)
		}
		f.bots = [2]bool{seed%3 != 1, seed%3 != 2}
		runMatch(s, f.pick(randomPicker(seed)), f)
		if f.failed {
			return
		}
	}
}

func TestFollowerRefusesLinesTheGameNeverSends(t *testing.T) {
	for _, lines := range [][]string{
		{"HELLO"},
		{"START", "SIZE x"},
		{"START", "SIZE 12", "13 1"},
		{"START", "SIZE 12", "1 1", "AMPLIFIERS 0", "LAID", "UPDATE TILE 0 3"},
		{"START", "SIZE 12", "1 1", "AMPLIFIERS 0", "LAID", "UPDATE SOMETHING 1 3"},
		{"START", "SIZE 12", "1 1", "AMPLIFIERS 0", "LAID", "DESTROYED -1"},
		{"START", "SIZE 12", "1 1", "AMPLIFIERS 0", "LAID", "NEWS"},
		{"START", "SIZE 12", "1 1", "AMPLIFIERS 0", "LAID", ""},
	} {
		l, _ := Game{}.Follow(nil)
		var err error
		for _, line := range lines {
			if _, err = l.Hear(line); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("%q: accepted", lines)
		}
	}
}
