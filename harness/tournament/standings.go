package tournament

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/ranks"
	"github.com/arenabots/arena/harness/stats"
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
	// Buchholz is the points of every opponent met (a game each); cut-1
	// leaves out the lowest of them (Swiss).
	Buchholz     = "buchholz"
	BuchholzCut1 = "buchholz-cut1"
)

// SwissTieBreaks is the order a Swiss tournament breaks ties in.
func SwissTieBreaks() []string {
	return []string{BuchholzCut1, Buchholz, SonnebornBerger, RandomDraw}
}

// DefaultTieBreaks is the order of the ACM rules.
func DefaultTieBreaks() []string {
	return []string{SonnebornBerger, DirectEncounter, MostWins, RandomDraw}
}

// TieBreaksFor is a format's tie-breaks when none are asked for: a Swiss
// tournament's (and a stages tournament's, whose qualifier is one) break
// ties by whom each bot met, the others by the ACM rules.
func TieBreaksFor(format string) []string {
	if format == Swiss || format == Stages {
		return SwissTieBreaks()
	}
	return DefaultTieBreaks()
}

// TieBreakColumns are the tie-breaks a standings table shows a column of,
// for a tournament breaking ties by tieBreaks: those that are a number of
// each row's (Sonneborn-Berger, Buchholz, Buchholz cut 1), in the order
// they break ties; Sonneborn-Berger when none is.
func TieBreakColumns(tieBreaks []string) []string {
	var out []string
	for _, t := range tieBreaks {
		switch t {
		case SonnebornBerger, Buchholz, BuchholzCut1:
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return []string{SonnebornBerger}
	}
	return out
}

// TieBreakLabel is a tie-break's column heading.
func TieBreakLabel(name string) string {
	switch name {
	case SonnebornBerger:
		return "SB"
	case Buchholz:
		return "BH"
	case BuchholzCut1:
		return "BH-1"
	}
	return name
}

// TieBreakWords says tie-breaks in the order they apply, as a sentence's
// end: "Buchholz cut 1, then Buchholz, then Sonneborn-Berger, then a
// seeded random draw".
func TieBreakWords(tieBreaks []string) string {
	var out []string
	for _, t := range tieBreaks {
		switch t {
		case SonnebornBerger:
			out = append(out, "Sonneborn-Berger (SB: the points of the opponents beaten, half those of the ones drawn)")
		case Buchholz:
			out = append(out, "Buchholz (BH: the points of every opponent met)")
		case BuchholzCut1:
			out = append(out, "Buchholz cut 1 (BH-1: the same less the lowest)")
		case DirectEncounter:
			out = append(out, "their games against each other")
		case MostWins:
			out = append(out, "the most wins")
		case RandomDraw:
			out = append(out, "a seeded random draw")
		}
	}
	return strings.Join(out, ", then ")
}

// TieBreak is the row's value of a tie-break that is a number
// (TieBreakColumns); 0 for any other.
func (r Row) TieBreak(name string) float64 {
	switch name {
	case SonnebornBerger:
		return r.SB
	case Buchholz:
		return r.Buchholz
	case BuchholzCut1:
		return r.BuchholzCut1
	}
	return 0
}

// CheckTieBreaks refuses unknown names.
func CheckTieBreaks(tb []string) error {
	for _, t := range tb {
		switch t {
		case SonnebornBerger, DirectEncounter, MostWins, RandomDraw, Buchholz, BuchholzCut1:
		default:
			return fmt.Errorf("unknown tie-break %q (known: %s, %s, %s, %s, %s, %s)", t, SonnebornBerger, DirectEncounter, MostWins, RandomDraw, Buchholz, BuchholzCut1)
		}
	}
	return nil
}

// Outcome is a finished game for scoring: Winner is White, Black or -1 (draw).
type Outcome struct {
	White, Black int
	Winner       int // the bot index that won, or -1 for a draw
	// Playoff is the game's playoff round (Game.Playoff; 0: none): it
	// counts in no points, only in ordering the bots it was played among.
	Playoff int
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
	// Buchholz and BuchholzCut1 (Swiss tie-breaks): the points of every
	// opponent met, a game each, and the same less the lowest of them.
	Buchholz     float64 `json:"buchholz"`
	BuchholzCut1 float64 `json:"buchholzCut1"`
	// Byes are the Swiss rounds the bot sat out (each scored as a win).
	Byes int `json:"byes,omitempty"`
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
	// ByLot says the seeded random draw placed this bot against a
	// neighbour: the two are level on points and on every tie-break before
	// the draw.
	ByLot bool `json:"byLot,omitempty"`
	// Out says the bot plays no more games: knocked out of a bracket, or
	// not among a stages tournament's bots that went on.
	Out bool `json:"out,omitempty"`
	// RankSet is the ranks this bot's strength may hold, at 95% confidence,
	// from every game (package ranks: Bradley-Terry, simultaneous intervals
	// of its differences with every other bot).
	RankSet ranks.Set `json:"rankSet"`
	// Separated says this bot's set lies wholly above the next one's: the
	// games tell the two apart. Adjacent bots not separated may be in either
	// order.
	Separated bool `json:"separatedFromNext,omitempty"`
}

// Standings ranks the bots by points, then the tie-breaks in order.
func Standings(names []string, games []Outcome, sc Scoring, tieBreaks []string, seed uint64) []Row {
	return standingsOf(names, games, sc, tieBreaks, seed, true)
}

// placesOnly is Standings' order and ranks without the strengths' fit
// (no Elo, no sets of ranks): what seeds a stage or places a bracket
// reads, at a fraction of the cost for a large field.
func placesOnly(names []string, games []Outcome, sc Scoring, tieBreaks []string, seed uint64) []Row {
	return standingsOf(names, games, sc, tieBreaks, seed, false)
}

func standingsOf(names []string, games []Outcome, sc Scoring, tieBreaks []string, seed uint64, fitted bool) []Row {
	n := len(names)
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{Bot: i, Name: names[i]}
	}
	games, playoff := splitPlayoff(games)
	for _, g := range games {
		if g.Black == Bye {
			// A Swiss round sat out: a win's points, no game.
			rows[g.White].Points += sc.Win
			rows[g.White].Byes++
			continue
		}
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
	lowest := make([]float64, n)
	for i := range lowest {
		lowest[i] = math.Inf(1)
	}
	for _, g := range games {
		if g.Black == Bye {
			continue
		}
		for _, p := range [][2]int{{g.White, g.Black}, {g.Black, g.White}} {
			rows[p[0]].Buchholz += rows[p[1]].Points
			lowest[p[0]] = min(lowest[p[0]], rows[p[1]].Points)
		}
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
	for i := range rows {
		rows[i].BuchholzCut1 = rows[i].Buchholz
		if !math.IsInf(lowest[i], 1) {
			rows[i].BuchholzCut1 -= lowest[i]
		}
	}
	if fitted {
		fit := ranks.Estimate(n, rankGames(games), ranks.Prior)
		elo, margin := eloOf(fit)
		sets := fit.Sets(ranks.Level)
		for i := range rows {
			rows[i].RankSet = sets[i]
			rows[i].Elo, rows[i].EloMargin = elo[i], margin[i]
		}
	}
	for i := range rows {
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
		members, ranks := breakTies(rows, g, games, playoff, sc, tieBreaks, seed, names)
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
	for i := range out {
		// A tie-break separates a bot from the next one only when the two
		// are level on points.
		if i+1 == n || out[i+1].Points != out[i].Points {
			out[i].DecidedBy = ""
		}
	}
	neighbours(out)
	return out
}

// neighbours sets what each row says of the next one: the likelihood it
// is the stronger (LOS) and whether their sets of ranks are apart.
func neighbours(out []Row) {
	for i := range out {
		out[i].LOS, out[i].Separated = nil, false
		if i+1 == len(out) {
			break
		}
		a, b := out[i], out[i+1]
		// The margins are 95% half-widths: their standard errors combine.
		se := math.Hypot(a.EloMargin, b.EloMargin) / 1.959963984540054
		if a.Games > 0 && b.Games > 0 && !math.IsInf(se, 0) && se > 0 {
			los := stats.LOS(a.Elo-b.Elo, se)
			out[i].LOS = &los
		}
		out[i].Separated = a.RankSet.High < b.RankSet.Low
	}
}

// breakTies orders one group level on points. It returns the members in order
// and each one's 0-based rank within the group (equal ranks stay tied).
func breakTies(rows []Row, group []int, games, playoff []Outcome, sc Scoring, tbs []string, seed uint64, names []string) ([]int, []int) {
	if len(group) == 1 {
		return group, []int{0}
	}
	if len(playoff) > 0 && (len(tbs) == 0 || tbs[0] == RandomDraw) {
		return playoffRound(rows, group, games, playoff, 1, sc, tbs, seed, names)
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
	case Buchholz:
		for _, b := range group {
			key[b] = rows[b].Buchholz
		}
	case BuchholzCut1:
		for _, b := range group {
			key[b] = rows[b].BuchholzCut1
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
			sc.add(pts, g)
		}
		all := true
		for i, a := range group {
			for _, b := range group[i+1:] {
				all = all && met[[2]int{min(a, b), max(a, b)}]
			}
		}
		if !all {
			return breakTies(rows, group, games, playoff, sc, rest, seed, names)
		}
		for _, b := range group {
			key[b] = pts[b]
			v := pts[b]
			rows[b].Direct = &v
		}
	}
	return orderBy(rows, group, key, tb, func(level []int) ([]int, []int) {
		return breakTies(rows, level, games, playoff, sc, rest, seed, names)
	})
}

// add counts a game's points to both its sides in pts.
func (sc Scoring) add(pts map[int]float64, g Outcome) {
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

// orderBy orders a group by key, highest first, each run of members
// level on it ordered by next; when key separated any, the rows it placed
// say tb decided them (and the lot, when tb is the random draw). It
// returns the members in order and each one's 0-based rank within the
// group (equal ranks stay tied).
func orderBy(rows []Row, group []int, key map[int]float64, tb string, next func(level []int) ([]int, []int)) ([]int, []int) {
	sorted := append([]int{}, group...)
	sort.SliceStable(sorted, func(a, b int) bool { return key[sorted[a]] > key[sorted[b]] })
	var members, ranks []int
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && key[sorted[j]] == key[sorted[i]] {
			j++
		}
		sub, subRanks := next(sorted[i:j])
		if j-i < len(sorted) {
			// This tie-break separated something: say so on the rows it placed.
			for _, b := range sub {
				if rows[b].DecidedBy == "" {
					rows[b].DecidedBy = tb
				}
				// The draw orders the whole group: each member's place
				// against its neighbours in it is the lot's, once it has
				// played (before any game, no place is decided).
				rows[b].ByLot = rows[b].ByLot || tb == RandomDraw && rows[b].Games > 0
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
	return eloOf(ranks.Estimate(n, rankGames(games), prior))
}

// eloOf is a fitted model's strengths as Elo ratings with their margins.
func eloOf(f *ranks.Fit) (ratings, margin []float64) {
	n := len(f.Strength)
	ratings, margin = make([]float64, n), make([]float64, n)
	scale := 400 / math.Ln10
	for i := range n {
		ratings[i] = 1500 + scale*f.Strength[i]
		if f.Info[i] > 0 {
			margin[i] = 1.96 * scale / math.Sqrt(f.Info[i])
		} else {
			margin[i] = math.Inf(1)
		}
	}
	return ratings, margin
}

// rankGames are games as the ranks model reads them.
func rankGames(games []Outcome) []ranks.Game {
	out := make([]ranks.Game, len(games))
	for i, g := range games {
		out[i] = ranks.Game{A: g.White, B: g.Black, ScoreA: 0.5}
		switch g.Winner {
		case g.White:
			out[i].ScoreA = 1
		case g.Black:
			out[i].ScoreA = 0
		}
	}
	return out
}

// RanksLegend says what String's 95% RANKS column means.
const RanksLegend = "95% RANKS: the places each bot's strength may hold given every game (Bradley-Terry, 95% confidence); ~: not told apart from the next bot\n"

// FormatRanks prints a row's 95% set of ranks ("3-6", or "3" when it is
// sure), marked "~" when the row is not separated from the next one.
func FormatRanks(r Row, last bool) string {
	s := strconv.Itoa(r.RankSet.Low)
	if r.RankSet.High != r.RankSet.Low {
		s += "-" + strconv.Itoa(r.RankSet.High)
	}
	if !r.Separated && !last {
		s += " ~"
	}
	return s
}

// FormatElo prints a rating and its margin.
func FormatElo(r Row) string {
	if math.IsInf(r.EloMargin, 0) || math.IsNaN(r.EloMargin) {
		return fmt.Sprintf("%.0f", r.Elo)
	}
	return fmt.Sprintf("%.0f ± %.0f", r.Elo, r.EloMargin)
}

// String renders the standings as a table, with a column for each of the
// tournament's tie-breaks that is a number (TieBreakColumns); the bot
// column is as wide as the longest name.
func String(rows []Row, tieBreaks []string) string {
	columns := TieBreakColumns(tieBreaks)
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
	fmt.Fprintf(&b, "%-*s %5s %4s %4s %4s %7s", name, "BOT", "GAMES", "W", "D", "L", "POINTS")
	for _, c := range columns {
		fmt.Fprintf(&b, " %7s", TieBreakLabel(c))
	}
	fmt.Fprintf(&b, " %-11s %6s %5s %9s %s\n", "ELO", "LOS", "DRAW", "1ST/2ND", "95% RANKS")
	for i, r := range rows {
		los := "-"
		if r.LOS != nil {
			los = fmt.Sprintf("%.1f%%", 100**r.LOS)
		}
		fmt.Fprintf(&b, "%-4d ", r.Rank)
		teamColumn(r.Team)
		fmt.Fprintf(&b, "%-*s %5d %4d %4d %4d %7g", name, r.Name, r.Games, r.Wins, r.Draws, r.Losses, r.Points)
		for _, c := range columns {
			fmt.Fprintf(&b, " %7g", r.TieBreak(c))
		}
		fmt.Fprintf(&b, " %-11s %6s %4.0f%% %9s", FormatElo(r), los, 100*r.DrawRatio, fmt.Sprintf("%d/%d", r.AsWhite, r.AsBlack))
		if r.DecidedBy != "" {
			fmt.Fprintf(&b, " %-9s  (tie broken by %s)", FormatRanks(r, i == len(rows)-1), r.DecidedBy)
		} else {
			fmt.Fprintf(&b, " %s", FormatRanks(r, i == len(rows)-1))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
