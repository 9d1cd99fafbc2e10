package tournament

import (
	"github.com/arenabots/arena/harness/stats"

	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// Scoring is the points a game is worth.
type Scoring struct {
	Win  float64 `json:"win"`
	Draw float64 `json:"draw"`
	Loss float64 `json:"loss"`
}

// DefaultScoring is 3 / 1 / 0.
func DefaultScoring() Scoring { return Scoring{Win: 3, Draw: 1, Loss: 0} }

// Tie-breaks, applied in order to players level on points.
const (
	SonnebornBerger = "sonneborn-berger" // points of beaten opponents + half those of drawn ones
	DirectEncounter = "direct-encounter" // points among the tied players, if they all met
	MostWins        = "wins"
	RandomDraw      = "random" // a seeded random draw
)

// DefaultTieBreaks is the order of the ACM rules.
func DefaultTieBreaks() []string {
	return []string{SonnebornBerger, DirectEncounter, MostWins, RandomDraw}
}

// CheckTieBreaks refuses unknown names.
func CheckTieBreaks(tb []string) error {
	for _, t := range tb {
		switch t {
		case SonnebornBerger, DirectEncounter, MostWins, RandomDraw:
		default:
			return fmt.Errorf("unknown tie-break %q (known: %s, %s, %s, %s)", t, SonnebornBerger, DirectEncounter, MostWins, RandomDraw)
		}
	}
	return nil
}

// Outcome is a finished game for scoring: Winner is White, Black or -1 (draw).
type Outcome struct {
	White, Black int
	Winner       int // the bot index that won, or -1 for a draw
}

// Row is one line of the standings.
type Row struct {
	Rank int    `json:"rank"`
	Bot  int    `json:"-"`
	Name string `json:"name"`
	// Team is the team the bot plays for, when the tournament names one
	// (BotEntry.Team).
	Team   string  `json:"team,omitempty"`
	Games  int     `json:"games"`
	Wins   int     `json:"wins"`
	Draws  int     `json:"draws"`
	Losses int     `json:"losses"`
	Points float64 `json:"points"`
	SB     float64 `json:"sonnebornBerger"`
	// Direct is the points among a tied group whose members all met, when the
	// direct-encounter tie-break was applied to this bot.
	Direct    *float64 `json:"directEncounter,omitempty"`
	Random    *float64 `json:"randomDraw,omitempty"`
	Elo       float64  `json:"elo"`
	EloMargin float64  `json:"eloMargin"` // 95% confidence half-width
	// LOS is the likelihood that this bot is stronger than the next one in
	// the standings, from their Elo and its margins (none for the last).
	LOS *float64 `json:"losOverNext,omitempty"`
	// DrawRatio is the share of its games drawn.
	DrawRatio float64 `json:"drawRatio"`
	// AsWhite and AsBlack count its games as the first and as the second
	// player.
	AsWhite int `json:"asWhite"`
	AsBlack int `json:"asBlack"`
	// DecidedBy names the tie-break that separated this bot from the next one
	// level on points, if any.
	DecidedBy string `json:"decidedBy,omitempty"`
}

// Standings ranks the bots by points, then the tie-breaks in order.
func Standings(names []string, games []Outcome, sc Scoring, tieBreaks []string, seed uint64) []Row {
	n := len(names)
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{Bot: i, Name: names[i]}
	}
	for _, g := range games {
		rows[g.White].AsWhite++
		rows[g.Black].AsBlack++
		for _, me := range []int{g.White, g.Black} {
			r := &rows[me]
			r.Games++
			switch g.Winner {
			case -1:
				r.Draws++
				r.Points += sc.Draw
			case me:
				r.Wins++
				r.Points += sc.Win
			default:
				r.Losses++
				r.Points += sc.Loss
			}
		}
	}
	for _, g := range games {
		switch g.Winner {
		case -1:
			rows[g.White].SB += rows[g.Black].Points / 2
			rows[g.Black].SB += rows[g.White].Points / 2
		case g.White:
			rows[g.White].SB += rows[g.Black].Points
		case g.Black:
			rows[g.Black].SB += rows[g.White].Points
		}
	}
	elo, margin := Elo(n, games, 1)
	for i := range rows {
		rows[i].Elo, rows[i].EloMargin = elo[i], margin[i]
		if rows[i].Games > 0 {
			rows[i].DrawRatio = float64(rows[i].Draws) / float64(rows[i].Games)
		}
	}

	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rows[order[a]].Points > rows[order[b]].Points })
	// Split each group level on points by the tie-breaks in turn.
	var groups [][]int
	for i := 0; i < n; {
		j := i
		for j < n && rows[order[j]].Points == rows[order[i]].Points {
			j++
		}
		groups = append(groups, order[i:j])
		i = j
	}
	var final []int
	var rank []int
	for _, g := range groups {
		members, ranks := breakTies(rows, g, games, sc, tieBreaks, seed, names)
		base := len(final)
		final = append(final, members...)
		for _, r := range ranks {
			rank = append(rank, base+r+1)
		}
	}
	out := make([]Row, n)
	for i, b := range final {
		out[i] = rows[b]
		out[i].Rank = rank[i]
	}
	// The margins are 95% half-widths: their standard errors combine.
	for i := 0; i+1 < n; i++ {
		a, b := out[i], out[i+1]
		se := math.Hypot(a.EloMargin, b.EloMargin) / 1.959963984540054
		if a.Games > 0 && b.Games > 0 && !math.IsInf(se, 0) && se > 0 {
			los := stats.LOS(a.Elo-b.Elo, se)
			out[i].LOS = &los
		}
	}
	return out
}

// breakTies orders one group level on points. It returns the members in order
// and each one's 0-based rank within the group (equal ranks stay tied).
func breakTies(rows []Row, group []int, games []Outcome, sc Scoring, tbs []string, seed uint64, names []string) ([]int, []int) {
	if len(group) == 1 {
		return group, []int{0}
	}
	if len(tbs) == 0 {
		ranks := make([]int, len(group))
		return group, ranks
	}
	tb, rest := tbs[0], tbs[1:]
	key := map[int]float64{}
	switch tb {
	case SonnebornBerger:
		for _, b := range group {
			key[b] = rows[b].SB
		}
	case MostWins:
		for _, b := range group {
			key[b] = float64(rows[b].Wins)
		}
	case RandomDraw:
		for _, b := range group {
			key[b] = randomKey(seed, names[b])
			v := key[b]
			rows[b].Random = &v
		}
	case DirectEncounter:
		in := map[int]bool{}
		for _, b := range group {
			in[b] = true
		}
		met := map[[2]int]bool{}
		pts := map[int]float64{}
		for _, g := range games {
			if !in[g.White] || !in[g.Black] {
				continue
			}
			met[[2]int{min(g.White, g.Black), max(g.White, g.Black)}] = true
			switch g.Winner {
			case -1:
				pts[g.White] += sc.Draw
				pts[g.Black] += sc.Draw
			case g.White:
				pts[g.White] += sc.Win
				pts[g.Black] += sc.Loss
			default:
				pts[g.Black] += sc.Win
				pts[g.White] += sc.Loss
			}
		}
		all := true
		for i, a := range group {
			for _, b := range group[i+1:] {
				all = all && met[[2]int{min(a, b), max(a, b)}]
			}
		}
		if !all {
			return breakTies(rows, group, games, sc, rest, seed, names)
		}
		for _, b := range group {
			key[b] = pts[b]
			v := pts[b]
			rows[b].Direct = &v
		}
	}
	sorted := append([]int{}, group...)
	sort.SliceStable(sorted, func(a, b int) bool { return key[sorted[a]] > key[sorted[b]] })
	var members, ranks []int
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && key[sorted[j]] == key[sorted[i]] {
			j++
		}
		sub, subRanks := breakTies(rows, sorted[i:j], games, sc, rest, seed, names)
		if j-i < len(sorted) {
			// This tie-break separated something: say so on the rows it placed.
			for _, b := range sub {
				if rows[b].DecidedBy == "" {
					rows[b].DecidedBy = tb
				}
			}
		}
		for _, r := range subRanks {
			ranks = append(ranks, i+r)
		}
		members = append(members, sub...)
		i = j
	}
	return members, ranks
}

// randomKey is the seeded random draw for a bot: the same for the same seed and
// name, whatever the order of the bots.
func randomKey(seed uint64, name string) float64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	s := sha256.Sum256(append(b[:], name...))
	return float64(binary.LittleEndian.Uint64(s[:8])>>11) / (1 << 53)
}

// ExpectedScore is the Elo model's expected score of a player rated d points
// above its opponent.
func ExpectedScore(d float64) float64 { return 1 / (1 + math.Pow(10, -d/400)) }

// Elo estimates ratings (mean 1500) by maximum likelihood under the Elo model,
// draws counting half a win, with prior virtual draws against an average
// opponent so that a perfect score stays finite. margin is the 95% confidence
// half-width from the Fisher information of each rating against the field.
func Elo(n int, games []Outcome, prior float64) (ratings, margin []float64) {
	score := make([][]float64, n)
	count := make([][]float64, n)
	for i := range score {
		score[i], count[i] = make([]float64, n), make([]float64, n)
	}
	for _, g := range games {
		w, b := g.White, g.Black
		count[w][b]++
		count[b][w]++
		switch g.Winner {
		case -1:
			score[w][b] += 0.5
			score[b][w] += 0.5
		case w:
			score[w][b]++
		default:
			score[b][w]++
		}
	}
	gamma := make([]float64, n)
	for i := range gamma {
		gamma[i] = 1
	}
	// Minorization-maximization for Bradley-Terry (Hunter 2004); the prior is
	// `prior` draws against a player of strength 1.
	for iter := 0; iter < 10000; iter++ {
		maxStep := 0.0
		next := make([]float64, n)
		for i := 0; i < n; i++ {
			num, den := prior*0.5, prior/(gamma[i]+1)
			for j := 0; j < n; j++ {
				if count[i][j] > 0 {
					num += score[i][j]
					den += count[i][j] / (gamma[i] + gamma[j])
				}
			}
			if den == 0 || num == 0 {
				next[i] = gamma[i]
				if num == 0 && den > 0 {
					next[i] = 1e-9
				}
				continue
			}
			next[i] = num / den
		}
		// Anchor the geometric mean at 1 (rating 1500).
		logMean := 0.0
		for _, g := range next {
			logMean += math.Log(g)
		}
		logMean /= float64(n)
		for i := range next {
			next[i] /= math.Exp(logMean)
			maxStep = max(maxStep, math.Abs(math.Log(next[i])-math.Log(gamma[i])))
		}
		gamma = next
		if maxStep < 1e-10 {
			break
		}
	}
	ratings, margin = make([]float64, n), make([]float64, n)
	scale := 400 / math.Ln10
	for i := range gamma {
		ratings[i] = 1500 + scale*math.Log(gamma[i])
		info := prior * gamma[i] / (gamma[i] + 1) * (1 / (gamma[i] + 1))
		for j := 0; j < n; j++ {
			if count[i][j] > 0 {
				p := gamma[i] / (gamma[i] + gamma[j])
				info += count[i][j] * p * (1 - p)
			}
		}
		if info > 0 {
			margin[i] = 1.96 * scale / math.Sqrt(info)
		} else {
			margin[i] = math.Inf(1)
		}
	}
	return ratings, margin
}

// FormatElo prints a rating and its margin.
func FormatElo(r Row) string {
	if math.IsInf(r.EloMargin, 0) || math.IsNaN(r.EloMargin) {
		return fmt.Sprintf("%.0f", r.Elo)
	}
	return fmt.Sprintf("%.0f ± %.0f", r.Elo, r.EloMargin)
}

// String renders the standings as a table; the bot column is as wide as the
// longest name.
func String(rows []Row) string {
	name, team := 24, 0
	for _, r := range rows {
		name = max(name, utf8.RuneCountInString(r.Name))
		if r.Team != "" {
			team = max(team, utf8.RuneCountInString(r.Team), len("TEAM"))
		}
	}
	var b strings.Builder
	teamColumn := func(t string) {
		if team > 0 {
			fmt.Fprintf(&b, "%-*s ", team, t)
		}
	}
	fmt.Fprintf(&b, "%-4s ", "RANK")
	teamColumn("TEAM")
	fmt.Fprintf(&b, "%-*s %5s %4s %4s %4s %7s %7s %-11s %6s %5s %9s\n", name, "BOT", "GAMES", "W", "D", "L", "POINTS", "SB", "ELO", "LOS", "DRAW", "1ST/2ND")
	for _, r := range rows {
		los := "-"
		if r.LOS != nil {
			los = fmt.Sprintf("%.1f%%", 100**r.LOS)
		}
		fmt.Fprintf(&b, "%-4d ", r.Rank)
		teamColumn(r.Team)
		fmt.Fprintf(&b, "%-*s %5d %4d %4d %4d %7g %7g %-11s %6s %4.0f%% %9s", name, r.Name, r.Games, r.Wins, r.Draws, r.Losses, r.Points, r.SB, FormatElo(r),
			los, 100*r.DrawRatio, fmt.Sprintf("%d/%d", r.AsWhite, r.AsBlack))
		if r.DecidedBy != "" {
			fmt.Fprintf(&b, "  (tie broken by %s)", r.DecidedBy)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
