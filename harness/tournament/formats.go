package tournament

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/arenabots/arena/harness/ranks"
)

// Stages is the format of two stages: a Swiss qualifier (Rounds rounds)
// whose top Advance bots, by its standings, play a second stage (Then: a round
// robin or a double elimination, seeded by the qualifier), as SSCAIT and
// Battlecode hold their finals.
const Stages = "stages"

// Rating is the format that plays where the ranks are least sure: a Swiss
// start of ceil(log2 n) rounds, then round after round the adjacent bots
// (by their fitted strength) whose rank sets overlap, the least told apart
// first, until every adjacent pair is told apart or Budget games are
// played. It ranks by the strength fitted to every game, as CodinGame and
// the Google AI Challenge ranked their finals.
const Rating = "rating"

// Formats are the formats a tournament may be played in, in the order
// help and pages list them.
func Formats() []string {
	return []string{RoundRobin, Gauntlet, Swiss, Knockout, DoubleElimination, Stages, Rating}
}

// DefaultAdvance is how many of a stages tournament's qualifier go on to
// its second stage when none is asked for: 16, as SSCAIT's bracket, or
// every bot of a smaller field.
func DefaultAdvance(bots int) int { return min(16, bots) }

// SecondStages are the formats a stages tournament's second stage may be.
func SecondStages() []string { return []string{RoundRobin, DoubleElimination} }

// Describe says the format in words, its choices filled in: "round robin",
// "swiss, 11 rounds", "stages: a Swiss qualifier of 11 rounds, then its top
// 16 in a double elimination", "rating, 6600 games at most".
func (c Config) Describe() string {
	switch c.Format {
	case RoundRobin:
		return "round robin"
	case Swiss:
		return fmt.Sprintf("swiss, %d rounds", c.SwissRounds())
	case DoubleElimination:
		return "double elimination"
	case Stages:
		return fmt.Sprintf("stages: a Swiss qualifier of %d rounds, then its top %d in a %s", c.SwissRounds(), c.Advance, strings.ReplaceAll(c.Then, "-", " "))
	case Rating:
		return fmt.Sprintf("rating, %d games at most", c.RatingBudget())
	}
	return c.Format
}

// adaptive says the format pairs its rounds from the results of the rounds
// before, rather than storing its whole schedule at the start.
func (c Config) Adaptive() bool {
	switch c.Format {
	case Swiss, Knockout, DoubleElimination, Stages, Rating:
		return true
	}
	return false
}

// RatingBudget is the games a rating tournament plays at most: Budget, or
// by default twice a Swiss tournament's of the same field.
func (c Config) RatingBudget() int {
	if c.Budget > 0 {
		return c.Budget
	}
	return 2 * SwissRounds(len(c.Bots)) * (len(c.Bots) / 2) * c.GamesPerPair
}

// Planned is how many games an adaptive format plays in all, as far as it
// can be told before the results (a bracket's level matches add
// deciders; a rating tournament may stop before its budget); 0 for a
// format whose whole schedule is stored from the start.
func (c Config) Planned() int {
	n := len(c.Bots)
	switch c.Format {
	case Swiss:
		return c.SwissRounds() * (n / 2) * c.GamesPerPair
	case Knockout:
		return (n - 1) * c.GamesPerPair
	case DoubleElimination:
		return 2 * (n - 1) * c.GamesPerPair
	case Stages:
		k := min(c.Advance, n)
		second := k * (k - 1) * c.GamesPerPair / 2
		if c.Then == DoubleElimination {
			second = 2 * (k - 1) * c.GamesPerPair
		}
		return c.SwissRounds()*(n/2)*c.GamesPerPair + second
	case Rating:
		return c.RatingBudget()
	}
	return 0
}

// unpaired is how many games an adaptive format's rounds not yet paired
// will play, as far as Planned tells: none once every game so far is
// finished and its next round would be empty (a rating tournament that
// told its ranks apart or spent its budget, a bracket decided).
func (c Config) unpaired(recs []Record) int {
	own := 0 // the format's games (a playoff's are not planned)
	for _, r := range recs {
		if r.Playoff == 0 {
			own++
		}
	}
	planned := c.Planned()
	if planned <= own {
		return 0
	}
	for _, r := range recs {
		if r.Status == Pending || r.Status == Running {
			return planned - own
		}
	}
	if len(c.Next(recs)) == 0 {
		return 0 // over
	}
	return planned - own
}

// firstGames are the games a tournament starts with: its whole schedule,
// or an adaptive format's first round.
func (c Config) FirstGames() ([]Game, error) {
	if c.Adaptive() {
		return c.Next(nil), nil
	}
	challenger := -1
	for i, b := range c.Bots {
		if b.Name == c.Challenger {
			challenger = i
		}
	}
	return Schedule(c.Format, len(c.Bots), challenger, c.GamesPerPair, c.Seed, len(c.Openings))
}

// next are the games an adaptive format adds once every game of recs is
// finished (none: it is over). It is a pure function of the configuration
// and the results, so a resumed tournament pairs as the first run did, and
// a coordinator as a local run.
//
// Once the format's own games are over, a place PlayoffPlaces names that
// is still level after every tie-break but the lot gets its playoff, round
// by round (a stages tournament's cut before its second stage is seeded);
// a format whose schedule is stored whole gets only those.
func (c Config) Next(recs []Record) []Game {
	round, pair := 0, 0
	var own []Record // the format's games, without the playoffs
	for _, r := range recs {
		pair = max(pair, r.Pair)
		if r.Playoff == 0 {
			round = max(round, r.Round)
			own = append(own, r)
		}
	}
	nextID, nextPair := len(recs)+1, pair+1
	playoff := func(outs []Outcome, places []int) []Game {
		return c.playoffGames(outs, recs, round, places, nextID, nextPair)
	}
	switch c.Format {
	case RoundRobin:
		if len(own) == 0 {
			return nil // its schedule is stored whole at the start
		}
		return playoff(outcomes(recs), c.PlayoffPlaces())
	case Swiss:
		if round >= c.SwissRounds() {
			return playoff(swissScored(len(c.Bots), recs, recs), c.PlayoffPlaces())
		}
		pairs, _ := swissPairings(swissHistory(len(c.Bots), own))
		return swissRound(round+1, pairs, c.GamesPerPair, c.Seed, len(c.Openings), nextID, nextPair)
	case Knockout, DoubleElimination:
		g, seeds, _ := c.bracket(own)
		return g.next(g.resolve(seeds, c.GamesPerPair, own), c.GamesPerPair, c.Seed, len(c.Openings), nextID, nextPair)
	case Stages:
		q := c.SwissRounds()
		if round < q {
			pairs, _ := swissPairings(swissHistory(len(c.Bots), own))
			return swissRound(round+1, pairs, c.GamesPerPair, c.Seed, len(c.Openings), nextID, nextPair)
		}
		if round == q {
			if g := playoff(swissScored(len(c.Bots), recs, recs), c.cutPlace()); g != nil {
				return g
			}
		}
		if g, seeds, _ := c.bracket(recs); g != nil {
			return g.next(g.resolve(seeds, c.GamesPerPair, own), c.GamesPerPair, c.Seed, len(c.Openings), nextID, nextPair)
		}
		if round > q { // the second stage's round robin is stored whole
			var second []Record
			for _, r := range recs {
				if r.Round > q {
					second = append(second, r)
				}
			}
			return playoff(outcomes(second), c.titlePlaces())
		}
		_, seeds, first := c.secondStage(recs)
		return roundRobinOf(seeds, first, c.GamesPerPair, c.Seed, len(c.Openings), nextID, nextPair)
	case Rating:
		return c.ratingRound(own, round, nextID, nextPair)
	}
	return nil
}

// cutPlace is a stages tournament's cut, when the playoff decides it.
func (c Config) cutPlace() []int {
	if slices.Contains(c.PlayoffPlaces(), c.Advance) {
		return []int{c.Advance}
	}
	return nil
}

// titlePlaces are the places a stages tournament's second stage (a round
// robin) decides by playoff: those among its own bots.
func (c Config) titlePlaces() []int {
	var out []int
	for _, p := range c.PlayoffPlaces() {
		if p < c.Advance {
			out = append(out, p)
		}
	}
	return out
}

// secondStage is a stages tournament's second stage once its qualifier is
// over (seeds nil before): its format, the qualified bots in seed order
// (the qualifier's standings) and its first round.
func (c Config) secondStage(recs []Record) (format string, seeds []int, first int) {
	q := c.SwissRounds()
	var qualifier []Record
	reached := false
	for _, r := range recs {
		if r.Round > q {
			continue
		}
		if r.Status == Pending || r.Status == Running {
			return "", nil, 0
		}
		reached = reached || r.Round == q
		qualifier = append(qualifier, r)
	}
	if !reached {
		return "", nil, 0
	}
	if group, _ := c.levelOn(swissScored(len(c.Bots), qualifier, qualifier), qualifier, q, c.cutPlace()); group != nil {
		return "", nil, 0 // the cut's playoff is still to play
	}
	rows := placesOnly(names(c.Bots), swissScored(len(c.Bots), qualifier, qualifier), c.Scoring, c.TieBreaks, c.Seed)
	for _, r := range rows[:min(c.Advance, len(rows))] {
		seeds = append(seeds, r.Bot)
	}
	return c.Then, seeds, q + 1
}

// roundRobinOf is a round robin of the bots given (their order: the
// schedule's own numbering), its rounds from first, ids and pair numbers
// going on from nextID and nextPair; each pair's seed derives from the
// tournament's and the pair's first game's id, as Schedule's do.
func roundRobinOf(bots []int, first, gamesPerPair int, seed uint64, openings, nextID, nextPair int) []Game {
	games, err := Schedule(RoundRobin, len(bots), -1, gamesPerPair, seed, openings)
	if err != nil {
		return nil // fewer than two bots: no second stage to play
	}
	ids := map[int]int{} // a pair's number in the schedule -> its first game's new id
	for i, g := range games {
		g.ID = nextID + i
		if _, ok := ids[g.Pair]; !ok {
			ids[g.Pair] = g.ID
		}
		g.Seed = gameSeed(seed, ids[g.Pair])
		g.White, g.Black = bots[g.White], bots[g.Black]
		g.Round += first - 1
		g.Pair += nextPair - 1
		games[i] = g
	}
	return games
}

// swissScored are a Swiss qualifier's outcomes: its games played and its
// byes (a win's points, no game) in the rounds recs reach, as all pairs
// them.
func swissScored(n int, recs, all []Record) []Outcome {
	out := outcomes(recs)
	reached := map[int]bool{}
	for _, r := range recs {
		reached[r.Round] = true
	}
	for _, b := range byes(n, all) {
		if reached[b.round] {
			out = append(out, Outcome{White: b.bot, Black: Bye, Winner: b.bot})
		}
	}
	return out
}

// scored are the outcomes the standings count: every game of recs played
// and, in a Swiss tournament or a stages tournament's qualifier, every bye
// of the rounds recs reach, as all the tournament's games pair them.
func scored(c Config, recs, all []Record) []Outcome {
	switch c.Format {
	case Swiss:
		return swissScored(len(c.Bots), recs, all)
	case Stages:
		q := c.SwissRounds()
		inQualifier := func(rs []Record) []Record {
			var out []Record
			for _, r := range rs {
				if r.Round <= q {
					out = append(out, r)
				}
			}
			return out
		}
		out := swissScored(len(c.Bots), inQualifier(recs), inQualifier(all))
		for _, r := range recs {
			if r.Round > q {
				out = append(out, outcomes([]Record{r})...)
			}
		}
		return out
	}
	return outcomes(recs)
}

// standings are the tournament's rows from the games of recs (all: every
// game, whose rounds pair a Swiss tournament's byes), placed as its format
// places them: by points and tie-breaks; a bracket by how far each bot
// went; a stages tournament's qualified bots by their second stage, the
// rest by the qualifier; a rating tournament by fitted strength.
func (c Config) Standings(recs, all []Record) []Row {
	rows := Standings(names(c.Bots), scored(c, recs, all), c.Scoring, c.TieBreaks, c.Seed)
	switch c.Format {
	case Knockout, DoubleElimination:
		g, seeds, lives := c.bracket(recs)
		return bracketPlaces(rows, g.resolve(seeds, c.GamesPerPair, recs), seeds, lives)
	case Stages:
		return c.stagesPlaces(rows, recs, all)
	case Rating:
		return strengthPlaces(rows)
	}
	return rows
}

// stagesPlaces orders a stages tournament's rows: the qualifier's order,
// then, once the second stage is seeded, its bots first in its own order.
func (c Config) stagesPlaces(rows []Row, recs, all []Record) []Row {
	q := c.SwissRounds()
	var qualifier, second []Record
	for _, r := range recs {
		if r.Round <= q {
			qualifier = append(qualifier, r)
		} else {
			second = append(second, r)
		}
	}
	var allQualifier []Record
	for _, r := range all {
		if r.Round <= q {
			allQualifier = append(allQualifier, r)
		}
	}
	at, lot, by := map[int]int{}, map[int]bool{}, map[int]string{}
	for i, r := range placesOnly(names(c.Bots), swissScored(len(c.Bots), qualifier, allQualifier), c.Scoring, c.TieBreaks, c.Seed) {
		at[r.Bot], lot[r.Bot], by[r.Bot] = i, r.ByLot, r.DecidedBy
	}
	sort.SliceStable(rows, func(i, j int) bool { return at[rows[i].Bot] < at[rows[j].Bot] })
	for i := range rows {
		// Places come from the stages, not from the tie-breaks of every
		// game's points: the qualifier's tie-breaks (its playoff, its
		// lot) where it placed them.
		rows[i].Rank, rows[i].DecidedBy, rows[i].ByLot = i+1, by[rows[i].Bot], lot[rows[i].Bot]
	}
	format, seeds, _ := c.secondStage(all)
	switch {
	case seeds == nil:
	case format == DoubleElimination:
		g, seeds, lives := c.bracket(all)
		return bracketPlaces(rows, g.resolve(seeds, c.GamesPerPair, recs), seeds, lives)
	default:
		in := map[int]bool{}
		for _, b := range seeds {
			in[b] = true
		}
		order, lot2, by2 := map[int]int{}, map[int]bool{}, map[int]string{}
		for i, r := range placesOnly(names(c.Bots), outcomes(second), c.Scoring, c.TieBreaks, c.Seed) {
			order[r.Bot], lot2[r.Bot], by2[r.Bot] = i, r.ByLot, r.DecidedBy
		}
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := rows[i].Bot, rows[j].Bot
			if in[a] != in[b] {
				return in[a]
			}
			return in[a] && order[a] < order[b]
		})
		for i := range rows {
			rows[i].Rank, rows[i].Out = i+1, !in[rows[i].Bot]
			// Placed by the second stage's own order, tie-breaks and lot;
			// its last above the next by the qualifier's cut.
			switch {
			case in[rows[i].Bot] && i+1 < len(seeds):
				rows[i].ByLot, rows[i].DecidedBy = lot2[rows[i].Bot], by2[rows[i].Bot]
			case in[rows[i].Bot]:
				cut := seeds[len(seeds)-1] // the qualifier's last to go on
				rows[i].ByLot, rows[i].DecidedBy = lot[cut], by[cut]
			}
		}
	}
	neighbours(rows)
	return rows
}

// strengthPlaces orders rows by the strength fitted to every game (the
// Elo column), ranks one to n; the rank sets say which are not told apart.
func strengthPlaces(rows []Row) []Row {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Elo > rows[j].Elo })
	for i := range rows {
		rows[i].Rank, rows[i].DecidedBy, rows[i].ByLot = i+1, "", false
	}
	neighbours(rows)
	return rows
}

// ratingRound is a rating tournament's next round: a Swiss round while its
// start lasts, then the adjacent pairs not told apart, the least sure
// first (the smallest difference in strength for its standard error),
// each bot in one pair at most, as many as the budget holds.
func (c Config) ratingRound(recs []Record, round, nextID, nextPair int) []Game {
	n := len(c.Bots)
	left := c.RatingBudget() - len(recs)
	if left < c.GamesPerPair {
		return nil
	}
	var pairs [][2]int
	if round < bits.Len(uint(n-1)) {
		pairs, _ = swissPairings(swissHistory(n, recs))
	} else {
		fit := ranks.Estimate(n, rankGames(outcomes(recs)), ranks.Prior)
		sets := fit.Sets(ranks.Level)
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return fit.Strength[order[a]] > fit.Strength[order[b]] })
		type candidate struct {
			a, b int
			z    float64
		}
		var cands []candidate
		for i := 0; i+1 < n; i++ {
			a, b := order[i], order[i+1]
			if sets[a].High < sets[b].Low {
				continue // told apart
			}
			se := math.Sqrt(1/fit.Info[a] + 1/fit.Info[b])
			cands = append(cands, candidate{a, b, (fit.Strength[a] - fit.Strength[b]) / se})
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].z < cands[j].z })
		used := map[int]bool{}
		for _, p := range cands {
			if !used[p.a] && !used[p.b] {
				used[p.a], used[p.b] = true, true
				pairs = append(pairs, [2]int{p.a, p.b})
			}
		}
	}
	pairs = pairs[:min(len(pairs), left/c.GamesPerPair)]
	if len(pairs) == 0 {
		return nil
	}
	return swissRound(round+1, pairs, c.GamesPerPair, c.Seed, len(c.Openings), nextID, nextPair)
}
