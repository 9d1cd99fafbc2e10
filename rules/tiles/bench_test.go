package tiles

import (
	"math/rand/v2"
	"testing"

	"github.com/arenabots/arena/rules"
)

// playRandom plays one game with default options, each turn a random valid
// line from LegalMoves, and returns its turns.
func playRandom(seed uint64, rng *rand.Rand) int {
	s, err := NewState(DefaultOptions(), seed)
	if err != nil {
		panic(err)
	}
	for !s.Outcome().Over {
		legal := s.LegalMoves()
		if err := s.Apply(legal[rng.IntN(len(legal))]); err != nil {
			panic(err)
		}
	}
	return s.Turn()
}

func BenchmarkRandomGames(b *testing.B) {
	b.ReportAllocs()
	rng := rand.New(rand.NewPCG(1, 2))
	turns, seed := 0, uint64(0)
	for b.Loop() {
		turns += playRandom(seed, rng)
		seed++
	}
	b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(float64(turns)/float64(b.N), "turns/game")
}

// BenchmarkRandomGamesWire adds the codec's lines, as the harness asks for
// them each turn.
func BenchmarkRandomGamesWire(b *testing.B) {
	b.ReportAllocs()
	rng := rand.New(rand.NewPCG(1, 2))
	turns, seed := 0, uint64(0)
	c := Codec{}
	for b.Loop() {
		s, _ := NewState(DefaultOptions(), seed)
		c.Start(s)
		for !s.Outcome().Over {
			me := s.ToMove()
			c.Request(s, "", rules.Clock{})
			legal := s.LegalMoves()
			m, err := s.ParseMove(s.EncodeMove(legal[rng.IntN(len(legal))]))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Apply(m); err != nil {
				b.Fatal(err)
			}
			c.Reply(s, me, true, rules.Clock{})
			turns++
		}
		c.End(s)
		seed++
	}
	b.ReportMetric(float64(turns)/b.Elapsed().Seconds(), "turns/s")
}

func FuzzParseMove(f *testing.F) {
	for _, s := range []string{
		"INFO", "DESTROY", "TERMINATE", "TELEPORT 3", "MOVE U", "LAY", "TERMINATE TELEPORT 12 MOVE R LAY",
		"  MOVE   D  LAY \r\n", "TELEPORT 0000000000000000001", "TERMINATE MOVE U MOVE D", "LAY MOVE U",
		"MOVE\tU", "", "INFO LAY", "TELEPORT -1", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMove(data)
		if err != nil {
			if v := rules.VerdictOf(err); v != rules.InvalidOutput {
				t.Fatalf("%q: a parse error of verdict %s: %v", data, v, err)
			}
			return
		}
		line := m.String()
		back, err := ParseMove([]byte(line))
		if err != nil || back != m {
			t.Fatalf("%q parsed to %+v, which writes %q, which parses to %+v (%v)", data, m, line, back, err)
		}
		if back.String() != line {
			t.Fatalf("%q is not canonical: %q", line, back.String())
		}
		// Judging never panics, whatever the position.
		s := board(t)
		_ = s.Judge(m)
		_ = s.Judge(&m)
	})
}
