package tournament

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
)

// The first round pairs the top half against the bottom half in order; an
// odd field's last bot sits it out.
func TestSwissFirstRound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bots int
		want [][2]int
		bye  int
	}{
		{8, [][2]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, Bye},
		{7, [][2]int{{0, 3}, {1, 4}, {2, 5}}, 6},
		{2, [][2]int{{0, 1}}, Bye},
	} {
		pairs, bye := swissPairings(swissHistory(c.bots, nil))
		if !slices.Equal(pairs, c.want) || bye != c.bye {
			t.Errorf("%d bots: %v, bye %d; want %v, bye %d", c.bots, pairs, bye, c.want, c.bye)
		}
	}
	for n, want := range map[int]int{2: 3, 8: 5, 9: 6, 300: 11, 1000: 12} {
		if got := SwissRounds(n); got != want {
			t.Errorf("SwissRounds(%d) = %d, want %d", n, got, want)
		}
	}
}

// playRounds plays rounds of a Swiss tournament of n bots by pairing each
// round from the results so far, with results drawn at random (one game a
// pairing), and checks every round as it is paired.
func playRounds(t *testing.T, rng *rand.Rand, n, rounds int) []Record {
	t.Helper()
	var recs []Record
	for round := 1; round <= rounds; round++ {
		s := swissHistory(n, recs)
		pairs, bye := swissPairings(s)
		seen := map[int]bool{}
		if bye != Bye {
			seen[bye] = true
			if s.byes[bye] > 0 && slices.Contains(s.byes, 0) {
				t.Fatalf("%d bots, round %d: bot %d has a second bye while others had none", n, round, bye)
			}
		}
		for _, p := range pairs {
			for _, b := range p {
				if seen[b] {
					t.Fatalf("%d bots, round %d: bot %d paired twice: %v", n, round, b, pairs)
				}
				seen[b] = true
			}
			if s.met[p[0]][p[1]] && (n > 14 || canPairAfresh(s, bye)) {
				t.Fatalf("%d bots, round %d: %v meet again, though the round can be paired without a rematch", n, round, p)
			}
		}
		if len(seen) != n {
			t.Fatalf("%d bots, round %d: %d placed", n, round, len(seen))
		}
		for _, p := range pairs {
			id := len(recs) + 1
			r := Record{Game: Game{ID: id, Round: round, White: p[0], Black: p[1], Pair: id}, Status: Done}
			switch rng.IntN(5) {
			case 0:
				r.Winner = transcript.WinnerDraw
			case 1, 2:
				r.Winner = transcript.WinnerWhite
			default:
				r.Winner = transcript.WinnerBlack
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// canPairAfresh says, by trying every pairing, whether the bots but bye
// can all meet opponents they have not met.
func canPairAfresh(s swissState, bye int) bool {
	free := map[int]bool{}
	for b := range s.points {
		free[b] = b != bye
	}
	var try func() bool
	try = func() bool {
		a := -1
		for b := range s.points {
			if free[b] {
				a = b
				break
			}
		}
		if a < 0 {
			return true
		}
		free[a] = false
		for b := range s.points {
			if free[b] && !s.met[a][b] {
				free[b] = false
				if try() {
					return true
				}
				free[b] = true
			}
		}
		free[a] = true
		return false
	}
	return try()
}

// Random results over every field size from 3 to 40, as many rounds as a
// Swiss plays (at most one fewer than the bots): every bot
// placed once a round, no second bye before every bot had one, the first
// move balanced within two games for every bot (a rematch only where no
// pairing without one exists, checked by trying every pairing); and in round two of a
// field of eight that lost no game to a draw, winners meet winners.
func TestSwissPairingsHoldTheirRules(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 2026))
	for n := 3; n <= 40; n++ {
		for range 5 {
			recs := playRounds(t, rng, n, min(SwissRounds(n), n-1))
			s := swissHistory(n, recs)
			for b := range n {
				if s.color[b] > 2 || s.color[b] < -2 {
					t.Errorf("%d bots: bot %d moved first %+d games more than second", n, b, s.color[b])
				}
			}
		}
	}
	var recs []Record
	for i, p := range [][2]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}} {
		recs = append(recs, Record{Game: Game{ID: i + 1, Round: 1, White: p[0], Black: p[1], Pair: i + 1}, Status: Done, Winner: transcript.WinnerWhite})
	}
	s := swissHistory(8, recs)
	pairs, _ := swissPairings(s)
	for _, p := range pairs {
		if s.points[p[0]] != s.points[p[1]] {
			t.Errorf("round two pairs %v of %v and %v points", p, s.points[p[0]], s.points[p[1]])
		}
	}
}
