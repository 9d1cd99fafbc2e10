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
	still := 0 // the round after the last: no bot still in went out
	for _, r := range out {
		still = max(still, r)
	}
	for i := range rows {
		rows[i].Rank = i + 1
		rows[i].Out = !in(rows[i]) || out[rows[i].Bot] < still
		if i > 0 && in(rows[i]) && in(rows[i-1]) && out[rows[i].Bot] == out[rows[i-1].Bot] {
			rows[i].Rank = rows[i-1].Rank
		}
		if in(rows[i]) { // placed by the bracket, not by points and lot
			rows[i].DecidedBy, rows[i].ByLot = "", false
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
// stages tournament's, once its second stage is seeded) as BracketOf lays
// it out: a column a round, a box a match with both sides and their
// points, the winner's line bold; a double elimination's losers' bracket
// below its winners' and the grand final to their right; names as text,
// escaped. It draws the bracket as the games of the state leave it.
func (s *State) BracketSVG() string { return s.BracketSVGOf(nil) }

// BracketSVGOf draws the bracket as the games shown leave it (nil: every
// game; "" for a tournament with no bracket).
func (s *State) BracketSVGOf(shown func(Record) bool) string { return s.BracketOf(shown).SVG() }

// Bracket is a bracket laid out for drawing, every place in pixels: its
// size, its parts' labels, and a box a match with its sides and the lines
// that lead to it. The report draws it with SVG; the event's pages with
// their template, to the same drawing.
type Bracket struct {
	Width, Height int
	// Double: a double elimination's bracket, its parts labelled: the
	// winners' bracket at the top left, the grand final at FinalX, the
	// losers' bracket at the left of LosersY (each label's baseline).
	Double          bool
	FinalX, LosersY int
	Matches         []BracketMatch
}

// BracketMatch is a match's box: its corner and size; whether it was not
// needed (Skipped: its note at NoteX, NoteY and no sides), its two sides,
// and the lines from the matches its sides come from, in the same part.
type BracketMatch struct {
	X, Y, W, H   int
	Skipped      bool
	NoteX, NoteY int
	Sides        []BracketSide
	From         []BracketLine
}

// BracketSide is a side of a match: its name (its seed's number and its
// team, clipped) at X, Y; its points ("" before a game), right-aligned at
// ScoreX; and whether it won the match.
type BracketSide struct {
	X, Y, ScoreX int
	Name, Points string
	Won          bool
}

// BracketLine is the line from the middle of a match's right edge (X1,
// Y1) across to XMid, down or up to Y2, and across to the next match's
// left edge at X2.
type BracketLine struct{ X1, Y1, XMid, Y2, X2 int }

// BracketOf lays the bracket out as the games shown leave it (nil: every
// game): a game not shown counts as not yet finished, so a board frozen at
// a time draws the bracket as it stood then. It is nil for a tournament
// with no bracket (yet).
func (s *State) BracketOf(shown func(Record) bool) *Bracket {
	recs := s.Games
	if shown != nil {
		recs = make([]Record, len(s.Games))
		for i, r := range s.Games {
			if !shown(r) {
				r.Status, r.Winner = Pending, ""
			}
			recs[i] = r
		}
	}
	g, seeds, _ := s.Config.bracket(recs)
	if g == nil {
		return nil
	}
	ms := g.resolve(seeds, s.Config.GamesPerPair, recs)
	const boxW, boxH, colW, rowH, labelH = 190, 44, 230, 56, 22
	parts := map[rune][]int{} // part -> its rounds in order
	count := map[int]int{}    // round -> matches
	for _, n := range g {
		if count[n.round] == 0 {
			parts[n.part] = append(parts[n.part], n.round)
		}
		count[n.round]++
	}
	size := bracketSize(len(seeds))
	double := len(parts[Losers]) > 0 || len(parts[Final]) > 0
	top := 0
	if double {
		top = labelH
	}
	hw := max(size/2, 1) * rowH
	hl := max(size/4, 1) * rowH
	height := top + hw
	if double {
		height += labelH + hl
	}
	cols := len(parts[Winners]) + len(parts[Final])
	width := max(max(cols, len(parts[Losers])), 1) * colW
	// Where each round's column stands and its section.
	colX, secTop, secH := map[int]int{}, map[int]int{}, map[int]int{}
	for i, r := range parts[Winners] {
		colX[r], secTop[r], secH[r] = i*colW, top, hw
	}
	for i, r := range parts[Final] {
		// The grand final stands level with the winners' final.
		colX[r], secTop[r], secH[r] = (len(parts[Winners])+i)*colW, top, hw
		count[r] = 1
	}
	for i, r := range parts[Losers] {
		colX[r], secTop[r], secH[r] = i*colW, top+hw+labelH, hl
	}
	center := func(n node) int {
		return secTop[n.round] + (2*n.slot+1)*secH[n.round]/(2*count[n.round])
	}
	seedOf := map[int]int{} // bot -> its seed place
	for p, b := range seeds {
		seedOf[b] = p
	}
	name := func(b int) string {
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
	out := &Bracket{Width: width, Height: height, Double: double, FinalX: len(parts[Winners]) * colW, LosersY: top + hw + 14}
	for i, n := range g {
		m := ms[i]
		x, cy := colX[n.round], center(n)
		y := cy - boxH/2
		box := BracketMatch{X: x, Y: y, W: boxW, H: boxH, Skipped: m.Skipped, NoteX: x + 8, NoteY: y + 27}
		for k, side := range []struct {
			bot    int
			points float64
		}{{m.A, m.APoints}, {m.B, m.BPoints}} {
			if m.Skipped {
				break
			}
			score := ""
			if m.Games > 0 {
				score = strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", side.points), "0"), ".")
			}
			box.Sides = append(box.Sides, BracketSide{X: x + 8, Y: y + 18 + k*18, ScoreX: x + boxW - 8,
				Name: clip(name(side.bot), 24), Points: score, Won: side.bot >= 0 && side.bot == m.Winner})
		}
		// A line from each match its winner comes from, in the same part.
		for _, from := range []src{n.a, n.b} {
			if from.from < 0 || from.loser || g[from.from].part != n.part || n.reset {
				continue
			}
			p := g[from.from]
			px, py := colX[p.round]+boxW, center(p)
			box.From = append(box.From, BracketLine{X1: px, Y1: py, XMid: px + (x-px)/2, Y2: cy, X2: x})
		}
		out.Matches = append(out.Matches, box)
	}
	return out
}

// SVG draws the bracket ("" for none). Presentation attributes only, no
// <style>: the drawing shows under a page's Content-Security-Policy as in
// a file.
func (b *Bracket) SVG() string {
	if b == nil {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="bracket" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="the bracket" font-family="sans-serif" font-size="12">`, b.Width, b.Height, b.Width, b.Height)
	if b.Double {
		fmt.Fprintf(&sb, `<text x="0" y="14" fill="#555">Winners' bracket</text><text x="%d" y="14" fill="#555">Grand final</text><text x="0" y="%d" fill="#555">Losers' bracket (out at a second loss)</text>`,
			b.FinalX, b.LosersY)
	}
	for _, m := range b.Matches {
		sb.WriteString(`<g class="m">`)
		stroke := ` stroke="#90a4ae"`
		if m.Skipped {
			stroke = ` stroke="#cfd8dc" stroke-dasharray="4 3"`
		}
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="#fff"%s/>`, m.X, m.Y, m.W, m.H, stroke)
		if m.Skipped {
			fmt.Fprintf(&sb, `<text x="%d" y="%d" fill="#78909c">not needed</text>`, m.NoteX, m.NoteY)
		}
		for _, side := range m.Sides {
			class := ` fill="#222"`
			if side.Won {
				class = ` fill="#222" font-weight="700"`
			}
			fmt.Fprintf(&sb, `<text x="%d" y="%d"%s>%s</text><text x="%d" y="%d" text-anchor="end"%s>%s</text>`,
				side.X, side.Y, class, html.EscapeString(side.Name), side.ScoreX, side.Y, class, html.EscapeString(side.Points))
		}
		sb.WriteString(`</g>`)
		for _, l := range m.From {
			fmt.Fprintf(&sb, `<path d="M%d %d H%d V%d H%d" stroke="#90a4ae" fill="none"/>`, l.X1, l.Y1, l.XMid, l.Y2, l.X2)
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
