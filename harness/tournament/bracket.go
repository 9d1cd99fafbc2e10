package tournament

import (
	"math/bits"
	"sort"
)

// A bracket is a graph of matches: each match's two sides come from a seed
// place or from an earlier match's winner or loser, in the order the
// matches are listed. A knockout uses winners only; a double elimination
// sends each loser of its winners' bracket to its losers' bracket, and a
// bot is out at its second loss. Both are played, placed and drawn by the
// code below.

// open is a side, a winner or a loser not known yet.
const open = -2

// src is where a match's side comes from: a seed place (from < 0), or
// the winner (or loser) of the match listed at from.
type src struct {
	from, seed int
	loser      bool
}

func seedSrc(place int) src  { return src{from: -1, seed: place} }
func winnerOf(match int) src { return src{from: match} }
func loserOf(match int) src  { return src{from: match, loser: true} }

// Bracket parts a match belongs to.
const (
	Winners = 'W' // a knockout's only bracket; a double elimination's unbeaten
	Losers  = 'L' // a double elimination's once beaten
	Final   = 'F' // a double elimination's grand final and its second match
)

// node is one match of a bracket: its round (unique to its part, so that
// a round's matches never share a bot and a record's round and bots name
// its match), its place in the round, its part and its sides. A reset is
// the grand final's second match, played only if the first was won by the
// losers' bracket's side (the one side that had lost once before it).
type node struct {
	round, slot int
	part        rune
	a, b        src
	reset       bool
}

// bracketGraph is a bracket's matches in the order they can be played.
type bracketGraph []node

// knockoutGraph is a knockout of size seed places (a power of two),
// rounds numbered from first: seeds 1 against size, 2 against size-1, ...,
// placed so that seeds 1 and 2 can meet only in the final.
func knockoutGraph(size, first int) bracketGraph {
	order := bracketOrder(size)
	var g bracketGraph
	for i := 0; i < size; i += 2 {
		g = append(g, node{round: first, slot: i / 2, part: Winners, a: seedSrc(order[i] - 1), b: seedSrc(order[i+1] - 1)})
	}
	prev := g.indexes(first)
	for round := first + 1; len(prev) > 1; round++ {
		var next []int
		for i := 0; i < len(prev); i += 2 {
			next = append(next, len(g))
			g = append(g, node{round: round, slot: i / 2, part: Winners, a: winnerOf(prev[i]), b: winnerOf(prev[i+1])})
		}
		prev = next
	}
	return g
}

// doubleGraph is a double elimination of size seed places: the knockout
// above as its winners' bracket; its losers' bracket takes the first
// round's losers, paired, then in turn the losers of each later winners'
// round (in reverse order, so that two bots who met meet late again) and
// halves its survivors between them; the grand final sets the winners'
// bracket's winner against the losers' bracket's, and a second match is
// played if the latter wins the first (both have then lost once). Rounds
// are numbered in the order they can be played.
func doubleGraph(size, first int) bracketGraph {
	order := bracketOrder(size)
	var g bracketGraph
	round := first
	for i := 0; i < size; i += 2 {
		g = append(g, node{round: round, slot: i / 2, part: Winners, a: seedSrc(order[i] - 1), b: seedSrc(order[i+1] - 1)})
	}
	winners := g.indexes(round)
	var survivors []src
	for _, m := range winners {
		survivors = append(survivors, loserOf(m))
	}
	halve := func() {
		if len(survivors) < 2 {
			return
		}
		round++
		var next []src
		for i := 0; i < len(survivors); i += 2 {
			next = append(next, winnerOf(len(g)))
			g = append(g, node{round: round, slot: i / 2, part: Losers, a: survivors[i], b: survivors[i+1]})
		}
		survivors = next
	}
	halve()
	for len(winners) > 1 {
		round++
		var next []int
		for i := 0; i < len(winners); i += 2 {
			next = append(next, len(g))
			g = append(g, node{round: round, slot: i / 2, part: Winners, a: winnerOf(winners[i]), b: winnerOf(winners[i+1])})
		}
		winners = next
		// The round's losers drop in, in reverse order.
		round++
		for i := range survivors {
			drop := loserOf(winners[len(winners)-1-i])
			g = append(g, node{round: round, slot: i, part: Losers, a: survivors[i], b: drop})
			survivors[i] = winnerOf(len(g) - 1)
		}
		if len(winners) > 1 {
			halve()
		}
	}
	round++
	g = append(g, node{round: round, part: Final, a: winnerOf(winners[0]), b: survivors[0]})
	g = append(g, node{round: round + 1, part: Final, a: winnerOf(winners[0]), b: survivors[0], reset: true})
	return g
}

// indexes are the positions of round's matches.
func (g bracketGraph) indexes(round int) []int {
	var out []int
	for i, n := range g {
		if n.round == round {
			out = append(out, i)
		}
	}
	return out
}

// resolve is each match of the bracket as its games (recs) leave it:
// seeds[p] is the bot in seed place p (past its end: a bye). A match is
// decided once all its games are finished and one side leads, or, level
// after gamesPerPair games and maxDeciders single deciders, by seed (the
// side in the better seed place goes through).
func (g bracketGraph) resolve(seeds []int, gamesPerPair int, recs []Record) []Match {
	place := map[int]int{}
	for p, b := range seeds {
		place[b] = p
	}
	byRound := map[int][]Record{}
	for _, r := range recs {
		if r.Playoff > 0 {
			continue // a stages tournament's cut, before the bracket
		}
		byRound[r.Round] = append(byRound[r.Round], r)
	}
	ms := make([]Match, 0, len(g))
	side := func(s src) int {
		switch {
		case s.from >= 0 && s.loser:
			return ms[s.from].Loser
		case s.from >= 0:
			return ms[s.from].Winner
		case s.seed < len(seeds):
			return seeds[s.seed]
		}
		return Bye
	}
	for i, n := range g {
		m := Match{Round: n.round, Slot: n.slot, Part: n.part, A: side(n.a), B: side(n.b), Winner: open, Loser: open}
		if n.reset {
			switch first := ms[i-1]; {
			case first.Winner == open:
				m.A, m.B = open, open
			case first.Winner == first.A:
				// Won by the unbeaten side: no second match.
				m.A, m.B, m.Skipped = open, open, true
			}
		}
		switch {
		case m.Skipped || m.A == open || m.B == open:
		case m.A == Bye && m.B == Bye:
			m.Winner, m.Loser = Bye, Bye
		case m.B == Bye:
			m.Winner, m.Loser = m.A, Bye
		case m.A == Bye:
			m.Winner, m.Loser = m.B, Bye
		default:
			for _, r := range byRound[n.round] {
				if !(r.White == m.A && r.Black == m.B || r.White == m.B && r.Black == m.A) {
					continue
				}
				m.Games++
				p, ok := r.Score(m.A)
				if !ok {
					if r.Status != Unplayed {
						m.Left++
					}
					continue
				}
				m.APoints += p
				m.BPoints += 1 - p
			}
			if m.Left > 0 || m.Games < gamesPerPair {
				break
			}
			switch {
			case m.APoints > m.BPoints:
				m.Winner, m.Loser = m.A, m.B
			case m.BPoints > m.APoints:
				m.Winner, m.Loser = m.B, m.A
			case m.Games >= gamesPerPair+maxDeciders:
				m.Winner, m.Loser, m.BySeed = m.A, m.B, true
				if place[m.B] < place[m.A] {
					m.Winner, m.Loser = m.B, m.A
				}
			}
		}
		ms = append(ms, m)
	}
	return ms
}

// next are the games the bracket adds once every game so far is finished:
// a decider for each match level after its games, and each match whose
// sides are both known its games (none: the bracket is over). Ids and
// pair numbers go on from nextID and nextPair.
func (g bracketGraph) next(ms []Match, gamesPerPair int, seed uint64, openings, nextID, nextPair int) []Game {
	var games []Game
	opening := func(round int) int {
		if openings == 0 {
			return 0
		}
		return (round-1)%openings + 1
	}
	fresh := map[int][][2]int{}
	for _, m := range ms {
		if m.A < 0 || m.B < 0 || m.Winner != open {
			continue
		}
		if m.Games == 0 {
			fresh[m.Round] = append(fresh[m.Round], [2]int{m.A, m.B})
			continue
		}
		// A decider, the side to move first alternating with the match's games.
		white, black := m.A, m.B
		if m.Games%2 == 1 {
			white, black = m.B, m.A
		}
		id := nextID + len(games)
		games = append(games, Game{ID: id, Round: m.Round, White: white, Black: black, Seed: gameSeed(seed, id), Pair: nextPair, Opening: opening(m.Round)})
		nextPair++
	}
	rounds := make([]int, 0, len(fresh))
	for r := range fresh {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	for _, r := range rounds {
		// A match is played in full: its games, sides alternating, in
		// side-swapped pairs sharing a seed.
		round := swissRound(r, fresh[r], gamesPerPair, seed, openings, nextID+len(games), nextPair)
		for _, g := range round {
			nextPair = max(nextPair, g.Pair+1)
		}
		games = append(games, round...)
	}
	return games
}

// eliminated is the round each bot went out in, from a resolved bracket: a
// bot is out at its lives-th loss (1 in a knockout, 2 in a double
// elimination); a bot not out (the winner, or one still playing) gets
// the round after the last.
func eliminated(ms []Match, lives int, bots []int) map[int]int {
	losses := map[int]int{}
	out := map[int]int{}
	last := 0
	for _, m := range ms {
		last = max(last, m.Round)
		if m.Winner < 0 || m.Skipped || m.Loser < 0 {
			continue
		}
		losses[m.Loser]++
		if losses[m.Loser] == lives {
			out[m.Loser] = m.Round
		}
	}
	for _, b := range bots {
		if _, ok := out[b]; !ok {
			out[b] = last + 1
		}
	}
	return out
}

// bracketSize is the smallest power of two that holds bots.
func bracketSize(bots int) int {
	if bots <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(bots-1))
}
