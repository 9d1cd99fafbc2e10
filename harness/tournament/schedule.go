// Package tournament runs an event: a deterministic schedule of matches played
// concurrently in the sandbox, every result stored in SQLite as it happens so
// that an interrupted tournament resumes where it stopped, and standings by the
// competition's scoring and tie-break rules.
//
// A game aborted by the host or sandbox is retried a bounded number of times and
// otherwise reported unplayed; it is never scored as anybody's loss.
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
}

// Schedule lists every game of the tournament. It is a pure function of its
// arguments. Round robin pairs every bot with every other by the circle method,
// round by round; a gauntlet pairs the challenger with each other bot. Each pair
// plays gamesPerPair games, colours alternating, the first game of a pair with
// the lower-numbered bot as White in odd rounds. Every game's seed is derived
// from the tournament seed and the game's id.
func Schedule(format string, bots, challenger, gamesPerPair int, seed uint64) ([]Game, error) {
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
	round := 0
	for leg := 0; leg < gamesPerPair; leg++ {
		for ri, pairs := range rounds {
			round++
			for _, p := range pairs {
				a, b := p[0], p[1]
				if (leg+ri)%2 == 1 {
					a, b = b, a
				}
				id := len(games) + 1
				games = append(games, Game{ID: id, Round: round, White: a, Black: b, Seed: gameSeed(seed, id)})
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
