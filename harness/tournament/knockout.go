package tournament

import (
	"cmp"
	"fmt"
	"html"
	"sort"
	"strings"
)

// Knockout is the format in which each match's loser is out: a bracket of
// the bots seeded in the order given (1 against the last, 2 against the
// one before, ...), the top seeds sitting the first round out when the
// field is not a power of two.
const Knockout = "knockout"

// DoubleElimination is the format in which a bot is out at its second
// match lost: a knockout bracket of the unbeaten, a losers' bracket of the
// once beaten, and a grand final between the two brackets' winners (two
// matches if the losers' bracket's wins the first).
const DoubleElimination = "double-elimination"

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

// DecidedBySeed is a bracket place's DecidedBy when the match between the
// bot and the next one was level after its deciders: the better seed went
// through.
const DecidedBySeed = "seed"

// Match is one bracket match: its round, its place in the round, its part
// of the bracket, its two sides (bot indexes; Bye for a side no bot fills,
// open for one not known yet), the games it played and each side's points
// from them, who went through and who lost (open: not yet).
type Match struct {
	Round, Slot int
	Part        rune
	A, B        int
	Games       int
	APoints     float64
	BPoints     float64
	Winner      int
	Loser       int
	// Left counts its games not finished yet.
	Left int
	// BySeed: level after every decider, the better seed went through.
	BySeed bool
	// Skipped: a grand final's second match not needed (the unbeaten side
	// won the first).
	Skipped bool
}

// bracket is the bracket of a knockout or a double elimination (or of a
// stages tournament's second stage, once its first is over: nil before),
// the bot in each seed place, and how many losses put a bot out.
func (c Config) bracket(recs []Record) (g bracketGraph, seeds []int, lives int) {
	format, first, seeds := c.Format, 1, make([]int, len(c.Bots))
	for i := range seeds {
		seeds[i] = i
	}
	if c.Format == Stages {
		if format, seeds, first = c.secondStage(recs); seeds == nil {
			return nil, nil, 0
		}
	}
	switch format {
	case Knockout:
		return knockoutGraph(bracketSize(len(seeds)), first), seeds, 1
	case DoubleElimination:
		return doubleGraph(bracketSize(len(seeds)), first), seeds, 2
	}
	return nil, nil, 0
}

// matches are the tournament's bracket as its games leave it (none: not a
// bracket, or not yet).
func (c Config) matches(recs []Record) []Match {
	g, seeds, _ := c.bracket(recs)
	if g == nil {
		return nil
	}
	return g.resolve(seeds, c.GamesPerPair, recs)
}

// bracketPlaces ranks the rows of a bracket's bots by how far each went:
// the winner first, then by the round each went out in, later first;
// bots out in the same round share a place (their rows by seed). Rows of
// bots not in the bracket keep their order after them.
func bracketPlaces(rows []Row, ms []Match, seeds []int, lives int) []Row {
	out := eliminated(ms, lives, seeds)
	place := map[int]int{}
	for p, b := range seeds {
		place[b] = p
	}
	in := func(r Row) bool { _, ok := place[r.Bot]; return ok }
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case in(a) != in(b):
			return in(a)
		case !in(a):
			return false
		case out[a.Bot] != out[b.Bot]:
			return out[a.Bot] > out[b.Bot]
		}
		return place[a.Bot] < place[b.Bot]
	})
	bySeed := map[[2]int]bool{} // winner, loser of a match the seeds decided
	for _, m := range ms {
		if m.BySeed {
			bySeed[[2]int{m.Winner, m.Loser}] = true
		}
	}
	for i := range rows {
		rows[i].Rank = i + 1
		if i > 0 && in(rows[i]) && in(rows[i-1]) && out[rows[i].Bot] == out[rows[i-1].Bot] {
			rows[i].Rank = rows[i-1].Rank
		}
		if in(rows[i]) {
			rows[i].DecidedBy = ""
		}
	}
	for i := 0; i+1 < len(rows); i++ {
		if bySeed[[2]int{rows[i].Bot, rows[i+1].Bot}] && rows[i].Rank != rows[i+1].Rank {
			rows[i].DecidedBy = DecidedBySeed
		}
	}
	neighbours(rows)
	return rows
}

// BracketSVG draws a knockout's or a double elimination's bracket (a
// stages tournament's, once its second stage is seeded): a column a round,
// a box a match with both sides and their points, the winner's line bold;
// a double elimination's losers' bracket below its winners' and the grand
// final to their right; names as text, escaped. It draws the bracket as
// the games of the state leave it.
func (s *State) BracketSVG() string { return s.BracketSVGOf(nil) }

// BracketSVGOf draws the bracket as the games shown leave it (nil: every
// game): a game not shown counts as not yet finished, so a board frozen at
// a time draws the bracket as it stood then.
func (s *State) BracketSVGOf(shown func(Record) bool) string {
	recs := gamesShown(s.Games, shown)
	g, seeds, _ := s.Config.bracket(recs)
	if g == nil {
		return ""
	}
	ms := g.resolve(seeds, s.Config.GamesPerPair, recs)
	l := layOutBracket(g, len(seeds))
	name := s.seededName(seeds)
	var sb strings.Builder
	// Presentation attributes only, no <style>: the drawing shows under a
	// page's Content-Security-Policy as in a file.
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="bracket" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="the bracket" font-family="sans-serif" font-size="12">`, l.width, l.height, l.width, l.height)
	if l.double {
		fmt.Fprintf(&sb, `<text x="0" y="14" fill="#555">Winners' bracket</text><text x="%d" y="14" fill="#555">Grand final</text><text x="0" y="%d" fill="#555">Losers' bracket (out at a second loss)</text>`,
			l.winnersRounds*colW, l.top+l.winnersH+14)
	}
	for i, n := range g {
		x, cy := l.colX[n.round], l.center(n)
		drawMatch(&sb, ms[i], x, cy, name)
		// A line from each match its winner comes from, in the same part.
		for _, from := range []src{n.a, n.b} {
			if from.from < 0 || from.loser || g[from.from].part != n.part || n.reset {
				continue
			}
			p := g[from.from]
			px, py := l.colX[p.round]+boxW, l.center(p)
			fmt.Fprintf(&sb, `<path d="M%d %d H%d V%d H%d" stroke="#90a4ae" fill="none"/>`, px, py, px+(x-px)/2, cy, x)
		}
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// The sizes of a bracket's drawing: a match's box, a round's column, a
// first-round match's row, and a part's label above it.
const boxW, boxH, colW, rowH, labelH = 190, 44, 230, 56, 22

// gamesShown is games with those not shown (shown nil: every game shown)
// counted as not yet finished.
func gamesShown(games []Record, shown func(Record) bool) []Record {
	if shown == nil {
		return games
	}
	recs := make([]Record, len(games))
	for i, r := range games {
		if !shown(r) {
			r.Status, r.Winner = Pending, ""
		}
		recs[i] = r
	}
	return recs
}

// bracketLayout is where a bracket's drawing puts each round: its column's
// x and its section's top and height, and how many matches it has.
type bracketLayout struct {
	width, height int
	// double is a double elimination's: a losers' bracket below the
	// winners' and a grand final to their right, each part labelled.
	double bool
	// top is where the winners' bracket starts, winnersH its height and
	// winnersRounds its columns.
	top, winnersH, winnersRounds int
	colX, secTop, secH, count    map[int]int
}

// layOutBracket lays out the bracket g of bots seed places.
func layOutBracket(g bracketGraph, bots int) bracketLayout {
	parts := map[rune][]int{} // part -> its rounds in order
	count := map[int]int{}    // round -> matches
	for _, n := range g {
		if count[n.round] == 0 {
			parts[n.part] = append(parts[n.part], n.round)
		}
		count[n.round]++
	}
	size := bracketSize(bots)
	l := bracketLayout{double: len(parts[Losers]) > 0 || len(parts[Final]) > 0, winnersRounds: len(parts[Winners]), count: count}
	if l.double {
		l.top = labelH
	}
	l.winnersH = max(size/2, 1) * rowH
	hl := max(size/4, 1) * rowH
	l.height = l.top + l.winnersH
	if l.double {
		l.height += labelH + hl
	}
	cols := len(parts[Winners]) + len(parts[Final])
	l.width = max(max(cols, len(parts[Losers])), 1) * colW
	// Where each round's column stands and its section.
	l.colX, l.secTop, l.secH = map[int]int{}, map[int]int{}, map[int]int{}
	for i, r := range parts[Winners] {
		l.colX[r], l.secTop[r], l.secH[r] = i*colW, l.top, l.winnersH
	}
	for i, r := range parts[Final] {
		// The grand final stands level with the winners' final.
		l.colX[r], l.secTop[r], l.secH[r] = (len(parts[Winners])+i)*colW, l.top, l.winnersH
		count[r] = 1
	}
	for i, r := range parts[Losers] {
		l.colX[r], l.secTop[r], l.secH[r] = i*colW, l.top+l.winnersH+labelH, hl
	}
	return l
}

// center is the y of the middle of the match n's box.
func (l bracketLayout) center(n node) int {
	return l.secTop[n.round] + (2*n.slot+1)*l.secH[n.round]/(2*l.count[n.round])
}

// seededName names a bot of the bracket seeded as seeds: its seed place
// and name, "bye" or "…" (not known yet).
func (s *State) seededName(seeds []int) func(b int) string {
	seedOf := map[int]int{} // bot -> its seed place
	for p, b := range seeds {
		seedOf[b] = p
	}
	return func(b int) string {
		switch {
		case b == Bye:
			return "bye"
		case b < 0:
			return "…"
		}
		e := s.Config.Bots[b]
		// Its seed (a stages tournament's: its place in the qualifier),
		// not its place in the list given; a final names the team.
		return fmt.Sprintf("%d. %s", seedOf[b]+1, cmp.Or(e.Team, e.Name))
	}
}

// drawMatch draws the match m's box centred on cy at x: both sides with
// their points, the winner bold, or "not needed" when it was skipped.
func drawMatch(sb *strings.Builder, m Match, x, cy int, name func(int) string) {
	y := cy - boxH/2
	sb.WriteString(`<g class="m">`)
	stroke := ` stroke="#90a4ae"`
	if m.Skipped {
		stroke = ` stroke="#cfd8dc" stroke-dasharray="4 3"`
	}
	fmt.Fprintf(sb, `<rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="#fff"%s/>`, x, y, boxW, boxH, stroke)
	if m.Skipped {
		fmt.Fprintf(sb, `<text x="%d" y="%d" fill="#78909c">not needed</text>`, x+8, y+27)
	}
	for k, side := range []struct {
		bot    int
		points float64
	}{{m.A, m.APoints}, {m.B, m.BPoints}} {
		if m.Skipped {
			break
		}
		class := ` fill="#222"`
		if side.bot >= 0 && side.bot == m.Winner {
			class = ` fill="#222" font-weight="700"`
		}
		score := ""
		if m.Games > 0 {
			score = strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", side.points), "0"), ".")
		}
		fmt.Fprintf(sb, `<text x="%d" y="%d"%s>%s</text><text x="%d" y="%d" text-anchor="end"%s>%s</text>`,
			x+8, y+18+k*18, class, html.EscapeString(clip(name(side.bot), 24)), x+boxW-8, y+18+k*18, class, score)
	}
	sb.WriteString(`</g>`)
}

// clip shortens a name to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
