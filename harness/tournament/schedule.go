// Package tournament is a tournament as data: its configuration, the
// schedule and pairing of every format (a deterministic function of the
// seed and the results so far), the store that keeps every result in SQLite
// as it happens, and the standings by the competition's scoring and
// tie-break rules, with the reports drawn from them.
//
// It must never play a game: harness/runner plays the schedule it makes,
// and harness/event reads its store without importing anything that plays.
// A game aborted by the host or sandbox is recorded unplayed, never scored
// as anybody's loss.
package tournament

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Formats.
const (
	RoundRobin = "round-robin"
	Gauntlet   = "gauntlet"
)

// Game is one scheduled match between two bots (indexes into the bot list).
type Game struct {
	ID    int    `json:"id"` // 1-based, the order games are played in
	Round int    `json:"round"`
	White int    `json:"white"`
	Black int    `json:"black"`
	Seed  uint64 `json:"seed"`
	// Pair numbers the side-swapped pair the game belongs to (from 1): the
	// two games of a pair share the seed and the opening, sides swapped.
	Pair int `json:"pair"`
	// Opening is the opening the game starts from, an index into the
	// configuration's openings plus one (0: the game's own start).
	Opening int `json:"opening,omitempty"`
	// Playoff numbers the playoff round the game belongs to (0: a game of
	// the format's own): 1 for the side-swapped pairs of bots level after
	// every tie-break on a place the playoff decides, 2 and on for the
	// deciders of those still level. Its Round is the round it follows.
	Playoff int `json:"playoff,omitempty"`
}

// Schedule lists every game of the tournament. It is a pure function of its
// arguments. Round robin pairs every bot with every other by the circle method,
// round by round; a gauntlet pairs the challenger with each other bot. Each pair
// of bots plays gamesPerPair games, colours alternating, the first game with
// the lower-numbered bot as White in odd rounds, in side-swapped pairs: games
// 2k+1 and 2k+2 of two bots share a seed (derived from the tournament seed
// and the first one's id) and an opening, so that neither side's luck of the
// draw or of the opening counts (an odd last game is a pair of its own).
// With n openings, the pairs of a round all start from the same opening,
// the next round from the next one, round after round, so that every bot
// meets the same openings.
func Schedule(format string, bots, challenger, gamesPerPair int, seed uint64, openings int) ([]Game, error) {
	if bots < 2 {
		return nil, fmt.Errorf("a tournament needs at least 2 bots, got %d", bots)
	}
	if gamesPerPair < 1 {
		return nil, fmt.Errorf("games per pair must be at least 1, got %d", gamesPerPair)
	}
	var rounds [][][2]int
	switch format {
	case RoundRobin:
		rounds = circle(bots)
	case Gauntlet:
		if challenger < 0 || challenger >= bots {
			return nil, fmt.Errorf("the challenger must be one of the %d bots", bots)
		}
		for other := 0; other < bots; other++ {
			if other != challenger {
				rounds = append(rounds, [][2]int{{challenger, other}})
			}
		}
	default:
		return nil, fmt.Errorf("format: want %s or %s, got %q", RoundRobin, Gauntlet, format)
	}
	var games []Game
	round, pairs := 0, 0
	first := map[[3]int]Game{} // the first game of each pair, by (leg/2, round, pairing)
	for leg := 0; leg < gamesPerPair; leg++ {
		for ri, pairings := range rounds {
			round++
			for pi, p := range pairings {
				a, b := p[0], p[1]
				if (leg+ri)%2 == 1 {
					a, b = b, a
				}
				g := Game{ID: len(games) + 1, Round: round, White: a, Black: b}
				key := [3]int{leg / 2, ri, pi}
				if f, ok := first[key]; ok && leg%2 == 1 {
					g.Seed, g.Pair, g.Opening = f.Seed, f.Pair, f.Opening
				} else {
					pairs++
					g.Seed, g.Pair = gameSeed(seed, g.ID), pairs
					if openings > 0 {
						g.Opening = (leg/2*len(rounds)+ri)%openings + 1
					}
					first[key] = g
				}
				games = append(games, g)
			}
		}
	}
	return games, nil
}

// circle is the circle method: n-1 rounds (n rounded up to even; the extra slot
// is a bye) in which every pair meets once.
func circle(n int) [][][2]int {
	slots := make([]int, 0, n+1)
	for i := 0; i < n; i++ {
		slots = append(slots, i)
	}
	if n%2 == 1 {
		slots = append(slots, -1) // bye
	}
	m := len(slots)
	var rounds [][][2]int
	for r := 0; r < m-1; r++ {
		var pairs [][2]int
		for i := 0; i < m/2; i++ {
			a, b := slots[i], slots[m-1-i]
			if a >= 0 && b >= 0 {
				if a > b {
					a, b = b, a
				}
				pairs = append(pairs, [2]int{a, b})
			}
		}
		rounds = append(rounds, pairs)
		// Keep the first slot, rotate the rest.
		last := slots[m-1]
		copy(slots[2:], slots[1:m-1])
		slots[1] = last
	}
	return rounds
}

func gameSeed(seed uint64, id int) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], seed)
	binary.LittleEndian.PutUint64(b[8:], uint64(id))
	s := sha256.Sum256(b[:])
	return binary.LittleEndian.Uint64(s[:8]) & (1<<53 - 1)
}
