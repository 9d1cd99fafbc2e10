package tournament

import (
	"cmp"
	"fmt"
	"html"
	"math/bits"
	"sort"
	"strings"
)

// Knockout is the format in which each match's loser is out: a bracket of
// the bots seeded in the order given (1 against the last, 2 against the
// one before, ...), the top seeds sitting the first round out when the
// field is not a power of two.
const Knockout = "knockout"

// maxDeciders is how many single games a knockout match level after its
// games per pair adds, sides alternating, before the higher seed goes
// through.
const maxDeciders = 4

// bracketOrder is the seeds in the order they stand in a bracket of size
// (a power of two), 1-based: 1, 8, 4, 5, 2, 7, 3, 6 for 8, so that seeds 1
// and 2 can meet only in the final.
func bracketOrder(size int) []int {
	order := []int{1}
	for n := 1; n < size; n *= 2 {
		next := make([]int, 0, 2*n)
		for _, s := range order {
			next = append(next, s, 2*n+1-s)
		}
		order = next
	}
	return order
}

// bracketSize is the smallest power of two that holds bots.
func bracketSize(bots int) int {
	if bots <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(bots-1))
}

// Match is one knockout match: its round, its place in the round, its two
// sides (bot indexes; Bye for a side no bot fills), the games it played
// and each side's points from them, and who went through (-1: not yet).
type Match struct {
	Round, Slot int
	A, B        int
	Games       int
	APoints     float64
	BPoints     float64
	Winner      int
	// Left counts its games not finished yet.
	Left int
	// BySeed: level after every decider, the higher seed went through.
	BySeed bool
}

// bracket rebuilds a knockout's matches from its games: the first round
// from the seeding, each later one from the winners of the round before.
// Round r's matches are complete once all their games are finished and
// one side leads, or the deciders ran out (the higher seed: the lower
// index).
func bracket(bots, gamesPerPair int, recs []Record) [][]Match {
	size := bracketSize(bots)
	order := bracketOrder(size)
	var rounds [][]Match
	var first []Match
	for i := 0; i < size; i += 2 {
		a, b := order[i]-1, order[i+1]-1
		if a >= bots {
			a = Bye
		}
		if b >= bots {
			b = Bye
		}
		first = append(first, Match{Round: 1, Slot: i / 2, A: a, B: b, Winner: -1})
	}
	rounds = append(rounds, first)
	byRound := map[int][]Record{}
	for _, r := range recs {
		byRound[r.Round] = append(byRound[r.Round], r)
	}
	for round := 1; ; round++ {
		ms := rounds[round-1]
		for i := range ms {
			m := &ms[i]
			switch {
			case m.A == Bye && m.B == Bye:
				m.Winner = Bye
				continue
			case m.B == Bye:
				m.Winner = m.A
				continue
			case m.A == Bye:
				m.Winner = m.B
				continue
			}
			for _, r := range byRound[round] {
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
				continue
			}
			switch {
			case m.APoints > m.BPoints:
				m.Winner = m.A
			case m.BPoints > m.APoints:
				m.Winner = m.B
			case m.Games >= gamesPerPair+maxDeciders:
				m.Winner, m.BySeed = min(m.A, m.B), true
			}
		}
		if len(ms) == 1 {
			return rounds
		}
		next := make([]Match, 0, len(ms)/2)
		for i := 0; i < len(ms); i += 2 {
			next = append(next, Match{Round: round + 1, Slot: i / 2, A: ms[i].Winner, B: ms[i+1].Winner, Winner: -1})
		}
		done := true
		for _, m := range next {
			done = done && m.A != -1 && m.B != -1
		}
		if !done {
			return rounds
		}
		rounds = append(rounds, next)
	}
}

// knockoutGames are the games a knockout adds once every game so far is
// finished: a decider for each match of the last round still level, or
// else the next round's matches (none: the bracket is over). Ids and pair
// numbers go on from nextID and nextPair.
func knockoutGames(bots, gamesPerPair int, seed uint64, openings int, recs []Record, nextID, nextPair int) []Game {
	rounds := bracket(bots, gamesPerPair, recs)
	last := rounds[len(rounds)-1]
	var games []Game
	add := func(round, white, black int) {
		g := Game{ID: nextID + len(games), Round: round, White: white, Black: black, Seed: gameSeed(seed, nextID+len(games)), Pair: nextPair}
		nextPair++
		if openings > 0 {
			g.Opening = (round-1)%openings + 1
		}
		games = append(games, g)
	}
	played := false
	for _, m := range last {
		if m.A < 0 || m.B < 0 || m.Winner != -1 {
			played = played || m.Games > 0
			continue
		}
		if m.Games == 0 {
			continue
		}
		played = true
		// A decider, the side to move first alternating with the match's games.
		if m.Games%2 == 0 {
			add(m.Round, m.A, m.B)
		} else {
			add(m.Round, m.B, m.A)
		}
	}
	if len(games) > 0 || played && len(last) == 1 {
		return games
	}
	// A round with no game yet is played in full: each match its games,
	// sides alternating, in side-swapped pairs sharing a seed.
	var pairs [][2]int
	for _, m := range last {
		if m.A >= 0 && m.B >= 0 && m.Games == 0 {
			pairs = append(pairs, [2]int{m.A, m.B})
		}
	}
	return swissRound(last[0].Round, pairs, gamesPerPair, seed, openings, nextID, nextPair)
}

// knockoutPlaces ranks rows by how far each bot went: the winner first,
// the final's loser second, the semi-finals' losers level third, and so on;
// level bots by seed (their order given) for the order of the rows.
func knockoutPlaces(rows []Row, bots, gamesPerPair int, recs []Record) []Row {
	rounds := bracket(bots, gamesPerPair, recs)
	out := map[int]int{} // the round each bot lost in (len+1: still in, or won)
	for b := range bots {
		out[b] = len(rounds) + 1
	}
	for _, ms := range rounds {
		for _, m := range ms {
			if m.Winner < 0 && m.Winner != Bye {
				continue
			}
			for _, s := range []int{m.A, m.B} {
				if s >= 0 && s != m.Winner {
					out[s] = m.Round
				}
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := out[rows[i].Bot], out[rows[j].Bot]
		if a != b {
			return a > b
		}
		return rows[i].Bot < rows[j].Bot
	})
	for i := range rows {
		rows[i].Rank = i + 1
		if i > 0 && out[rows[i].Bot] == out[rows[i-1].Bot] {
			rows[i].Rank = rows[i-1].Rank
		}
		rows[i].DecidedBy = ""
	}
	neighbours(rows)
	return rows
}

// standings are the tournament's rows from the games of recs (all: every
// game, whose rounds pair a Swiss tournament's byes), placed as its format
// places them: by points and tie-breaks, a knockout by how far each bot
// went.
func (c Config) standings(recs, all []Record) []Row {
	rows := Standings(names(c.Bots), scored(c, recs, all), c.Scoring, c.TieBreaks, c.Seed)
	if c.Format == Knockout {
		rows = knockoutPlaces(rows, len(c.Bots), c.GamesPerPair, recs)
	}
	return rows
}

// BracketSVG draws a knockout's bracket: a column a round, a box a match
// with both sides and their points, the winner's line bold; names as text,
// escaped.
func (s *State) BracketSVG() string {
	if s.Config.Format != Knockout {
		return ""
	}
	rounds := bracket(len(s.Config.Bots), s.Config.GamesPerPair, s.Games)
	size := bracketSize(len(s.Config.Bots))
	levels := bits.Len(uint(size)) - 1
	const boxW, boxH, colW, rowH = 190, 44, 230, 56
	height := max(size/2, 1) * rowH
	width := max(levels, 1) * colW
	name := func(b int) string {
		switch {
		case b == Bye:
			return "bye"
		case b < 0:
			return "…"
		}
		e := s.Config.Bots[b]
		return fmt.Sprintf("%d. %s", b+1, cmp.Or(e.Team, e.Name)) // a final names the team
	}
	var sb strings.Builder
	// Presentation attributes only, no <style>: the drawing shows under a
	// page's Content-Security-Policy as in a file.
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="bracket" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="the bracket" font-family="sans-serif" font-size="12">`, width, height, width, height)
	for r := 1; r <= levels; r++ {
		n := size >> r
		for slot := range n {
			x := (r - 1) * colW
			cy := (2*slot + 1) * height / (2 * n)
			y := cy - boxH/2
			m := Match{A: -1, B: -1, Winner: -1}
			if r <= len(rounds) && slot < len(rounds[r-1]) {
				m = rounds[r-1][slot]
			}
			sb.WriteString(`<g class="m">`)
			fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="#fff" stroke="#90a4ae"/>`, x, y, boxW, boxH)
			for i, side := range []struct {
				bot    int
				points float64
			}{{m.A, m.APoints}, {m.B, m.BPoints}} {
				class := ` fill="#222"`
				if side.bot >= 0 && side.bot == m.Winner {
					class = ` fill="#222" font-weight="700"`
				}
				score := ""
				if m.Games > 0 {
					score = strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", side.points), "0"), ".")
				}
				fmt.Fprintf(&sb, `<text x="%d" y="%d"%s>%s</text><text x="%d" y="%d" text-anchor="end"%s>%s</text>`,
					x+8, y+18+i*18, class, html.EscapeString(clip(name(side.bot), 24)), x+boxW-8, y+18+i*18, class, score)
			}
			sb.WriteString(`</g>`)
			if r < levels {
				nx := r * colW
				ny := (2*(slot/2) + 1) * height / n
				fmt.Fprintf(&sb, `<path d="M%d %d H%d V%d H%d" stroke="#90a4ae" fill="none"/>`, x+boxW, cy, x+boxW+(colW-boxW)/2, ny, nx)
			}
		}
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// clip shortens a name to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
