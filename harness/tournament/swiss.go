package tournament

import (
	"math"
	"math/bits"
	"sort"
)

// Swiss is the format that plays a few rounds, each bot meeting one
// opponent of about its score per round, never the same one twice.
const Swiss = "swiss"

// SwissRounds is a Swiss tournament's rounds when none are asked for:
// ceil(log2 n) + 2, enough for one bot to stand alone on top and for the
// places behind it to settle.
func SwissRounds(bots int) int {
	if bots < 2 {
		return 1
	}
	return bits.Len(uint(bots-1)) + 2
}

// Bye is the opponent of a bot that sits a Swiss round out (an odd field):
// the bye scores as a win and is not a game.
const Bye = -1

// swissState is what the rounds so far say of each bot, as pairing reads
// it: its points (game points: 1 a win, ½ a draw, a bye 1), whom it met,
// how many more games it had the first move in than the second, the side
// of its last game, and its byes.
type swissState struct {
	points []float64
	met    []map[int]bool
	color  []int // first moves less second moves, over its pairings
	last   []int // the side of its last pairing's first game: 1 first, -1 second, 0 none
	byes   []int
}

// swissHistory reads the rounds so far from the records (every game of
// them finished: played, or left unplayed), in the order they were played.
func swissHistory(n int, recs []Record) swissState {
	s := swissState{points: make([]float64, n), met: make([]map[int]bool, n), color: make([]int, n), last: make([]int, n), byes: make([]int, n)}
	for i := range s.met {
		s.met[i] = map[int]bool{}
	}
	for _, r := range recs {
		if r.Playoff > 0 {
			continue
		}
		s.met[r.White][r.Black], s.met[r.Black][r.White] = true, true
		s.color[r.White]++
		s.color[r.Black]--
		s.last[r.White], s.last[r.Black] = 1, -1
		if p, ok := r.Score(r.White); ok {
			s.points[r.White] += p
			s.points[r.Black] += 1 - p
		}
	}
	for _, b := range byes(n, recs) {
		s.byes[b.bot]++
		s.points[b.bot]++
	}
	return s
}

type bye struct{ round, bot int }

// byes are the rounds each bot sat out, round by round: a Swiss round's
// bots that play no game in it.
func byes(n int, recs []Record) []bye {
	in := map[int]map[int]bool{}
	for _, r := range recs {
		if r.Playoff > 0 {
			continue // played after the round, not in it
		}
		if in[r.Round] == nil {
			in[r.Round] = map[int]bool{}
		}
		in[r.Round][r.White], in[r.Round][r.Black] = true, true
	}
	rounds := make([]int, 0, len(in))
	for r := range in {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	var out []bye
	for _, r := range rounds {
		for b := range n {
			if !in[r][b] {
				out = append(out, bye{r, b})
			}
		}
	}
	return out
}

// swissPairings pairs the next round from the state: the bye (an odd
// field) to the lowest-placed bot that has had none; then, from the top,
// each bot with an opponent it has not met, the Dutch way: in its score
// group, the top half against the bottom half in order, a bot that cannot
// be paired there floating down to the next group. A pairing that leaves
// the rest unpairable is undone and the next candidate tried; two bots
// that must both have the same side (two games more of the other) meet
// only when nothing else pairs, and rematches only when no pairing without
// one exists. Each pair is
// (first mover of its first game, the other): the bot that had the first
// move less often, or, level, the one whose last first game was second.
// It is a pure function of the state, and so of the results.
func swissPairings(s swissState) (pairs [][2]int, bye int) {
	n := len(s.points)
	// Placing order: points, then the bot's own number.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return s.points[order[a]] > s.points[order[b]] })
	bye = Bye
	if n%2 == 1 {
		for k := n - 1; k >= 0; k-- {
			if b := order[k]; s.byes[b] == minInt(s.byes) {
				bye = b
				break
			}
		}
		order = deleteValue(order, bye)
	}
	var matched [][2]int
	for _, loose := range []struct{ rematch, clash bool }{{false, false}, {false, true}, {true, true}} {
		if m, ok := pairDutch(order, s, loose.rematch, loose.clash); ok {
			matched = m
			break
		}
	}
	for _, p := range matched {
		a, b := p[0], p[1]
		if s.color[b] < s.color[a] || (s.color[b] == s.color[a] && s.last[b] < s.last[a]) {
			a, b = b, a
		}
		pairs = append(pairs, [2]int{a, b})
	}
	return pairs, bye
}

// pairDutch pairs the bots in placing order (backtracking); rematch allows
// opponents already met, clash two bots that both must have the same side
// (each had it two games fewer than the other). ok is false when no
// pairing exists.
func pairDutch(order []int, s swissState, rematch, clash bool) ([][2]int, bool) {
	var out [][2]int
	used := map[int]bool{}
	var solve func() bool
	steps := 0
	solve = func() bool {
		steps++
		if steps > 200000 { // a pathological field: take rematches instead
			return false
		}
		a := -1
		for _, b := range order {
			if !used[b] {
				a = b
				break
			}
		}
		if a < 0 {
			return true
		}
		used[a] = true
		for _, b := range candidates(a, order, used, s) {
			if !rematch && s.met[a][b] || !clash && (s.color[a] <= -2 && s.color[b] <= -2 || s.color[a] >= 2 && s.color[b] >= 2) {
				continue
			}
			used[b] = true
			out = append(out, [2]int{a, b})
			if solve() {
				return true
			}
			out = out[:len(out)-1]
			used[b] = false
		}
		used[a] = false
		return false
	}
	return out, solve()
}

// candidates are a's possible opponents in the order the Dutch system
// prefers them: first its own score group, from the one half a group
// below it (top half against bottom half) outwards, then the groups below
// (and above, for a bot left over at the bottom) by closeness of points.
func candidates(a int, order []int, used map[int]bool, s swissState) []int {
	var group, rest []int
	for _, b := range order {
		if used[b] && b != a {
			continue
		}
		if s.points[b] == s.points[a] {
			group = append(group, b)
		} else {
			rest = append(rest, b)
		}
	}
	at := make(map[int]int, len(group))
	for i, b := range group {
		at[b] = i
	}
	ideal := at[a] + len(group)/2
	out := make([]int, 0, len(group)+len(rest))
	for _, b := range group {
		if b != a {
			out = append(out, b)
		}
	}
	sort.SliceStable(out, func(x, y int) bool { return abs(at[out[x]]-ideal) < abs(at[out[y]]-ideal) })
	sort.SliceStable(rest, func(x, y int) bool {
		return math.Abs(s.points[rest[x]]-s.points[a]) < math.Abs(s.points[rest[y]]-s.points[a])
	})
	return append(out, rest...)
}

// swissRound is round r's games from its pairings: each pair plays
// gamesPerPair games, sides alternating, in side-swapped pairs sharing a
// seed (as Schedule's); ids and pair numbers go on from those of the
// rounds before.
func swissRound(round int, pairs [][2]int, gamesPerPair int, seed uint64, openings, nextID, nextPair int) []Game {
	var games []Game
	for leg := 0; leg < gamesPerPair; leg++ {
		for pi, p := range pairs {
			a, b := p[0], p[1]
			if leg%2 == 1 {
				a, b = b, a
			}
			g := Game{ID: nextID + len(games), Round: round, White: a, Black: b}
			if leg%2 == 1 {
				first := games[(leg-1)*len(pairs)+pi]
				g.Seed, g.Pair, g.Opening = first.Seed, first.Pair, first.Opening
			} else {
				g.Seed, g.Pair = gameSeed(seed, g.ID), nextPair
				nextPair++
				if openings > 0 {
					g.Opening = (round-1)%openings + 1
				}
			}
			games = append(games, g)
		}
	}
	return games
}

func minInt(xs []int) int {
	m := math.MaxInt
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func deleteValue(xs []int, v int) []int {
	out := xs[:0:0]
	for _, x := range xs {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
