package tournament

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/arenabots/arena/internal/words"
)

// PlayoffTieBreak is the DecidedBy of a place the playoff's games decided.
const PlayoffTieBreak = "playoff"

// maxPlayoffRounds is how many playoff rounds a place gets before the
// lot decides it (where the tie-breaks end with the random draw): the
// side-swapped pairs, then single deciders, sides alternating, as many as
// a knockout match plays.
const maxPlayoffRounds = 1 + maxDeciders

// NoPlayoff is the Playoff of a tournament that plays none: places level
// after every tie-break are left to the lot (or to a shared rank).
var NoPlayoff = []int{0}

// PlayoffPlaces are the places the tournament decides by playoff games
// when two bots are level on them after every tie-break before the lot:
// Playoff, or by default first place and a stages tournament's cut (its
// Advance-th place, the last that goes on). Place p is decided between
// the bots p and p+1. A bracket decides its places by its matches, a
// rating tournament by the fitted strengths, a gauntlet measures its
// challenger: none of them plays a playoff.
func (c Config) PlayoffPlaces() []int {
	switch c.Format {
	case RoundRobin, Swiss, Stages:
	default:
		return nil
	}
	if c.Playoff != nil {
		var out []int
		for _, p := range c.Playoff {
			if p > 0 && p < len(c.Bots) {
				out = append(out, p)
			}
		}
		return out
	}
	places := []int{1}
	if c.Format == Stages && c.Advance > 1 && c.Advance < len(c.Bots) {
		places = append(places, c.Advance)
	}
	return places
}

// splitPlayoff parts outcomes into the format's games and the playoff's.
func splitPlayoff(games []Outcome) (format, playoff []Outcome) {
	for _, g := range games {
		if g.Playoff > 0 {
			playoff = append(playoff, g)
		} else {
			format = append(format, g)
		}
	}
	return format, playoff
}

// playoffRound orders a group level on every tie-break before the lot by
// the playoff games its members played among themselves: the points each
// scored in playoff round round, those still level by the next round's,
// and so on; members level after the last round go on to the tie-breaks
// left (the lot, or a shared rank).
func playoffRound(rows []Row, group []int, games, playoff []Outcome, round int, sc Scoring, rest []string, seed uint64, names []string) ([]int, []int) {
	if len(group) == 1 {
		return group, []int{0}
	}
	in := map[int]bool{}
	for _, b := range group {
		in[b] = true
	}
	last := 0
	for _, g := range playoff {
		if in[g.White] && in[g.Black] {
			last = max(last, g.Playoff)
		}
	}
	if round > last {
		return breakTies(rows, group, games, nil, sc, rest, seed, names)
	}
	pts := map[int]float64{}
	for _, g := range playoff {
		if g.Playoff == round && in[g.White] && in[g.Black] {
			sc.add(pts, g)
		}
	}
	return orderBy(rows, group, pts, PlayoffTieBreak, func(level []int) ([]int, []int) {
		return playoffRound(rows, level, games, playoff, round+1, sc, rest, seed, names)
	})
}

// playoffGames are the next playoff round of a phase whose games are over
// (the format's last round, or a stages tournament's qualifier): outs are
// the phase's outcomes, its playoff games among them, played round is the
// round the playoff follows, places the places it decides. The first
// place (in places' order) whose two bots are level after every tie-break
// but the lot gets the round: every two bots of its level group play a
// side-swapped pair in its first round, a single game in each round
// after, sides alternating; none once maxPlayoffRounds are played (the
// lot, or a shared rank, decides).
func (c Config) playoffGames(outs []Outcome, recs []Record, round int, places []int, nextID, nextPair int) []Game {
	group, next := c.levelOn(outs, recs, round, places)
	if group == nil {
		return nil
	}
	var pairs [][2]int
	for i, a := range group {
		for _, b := range group[i+1:] {
			pairs = append(pairs, [2]int{min(a, b), max(a, b)})
		}
	}
	legs := 1
	if next == 1 {
		legs = 2
	}
	games := swissRound(round, pairs, legs, c.Seed, len(c.Openings), nextID, nextPair)
	for i := range games {
		if next > 1 && next%2 == 1 {
			games[i].White, games[i].Black = games[i].Black, games[i].White
		}
		games[i].Playoff = next
	}
	return games
}

// levelOn is the group of bots level on the first of places after every
// tie-break but the lot (from outs), and the playoff round it would play
// next (recs: the tournament's games, whose playoff rounds of this phase
// count); nil when every place is decided or its playoff has played its
// every round.
func (c Config) levelOn(outs []Outcome, recs []Record, round int, places []int) (group []int, next int) {
	if len(places) == 0 {
		return nil, 0
	}
	tbs := slices.DeleteFunc(slices.Clone(c.TieBreaks), func(t string) bool { return t == RandomDraw })
	rows := placesOnly(names(c.Bots), outs, c.Scoring, tbs, c.Seed)
	for _, p := range places {
		if p < 1 || p >= len(rows) || rows[p-1].Rank != rows[p].Rank {
			continue
		}
		in := map[int]bool{}
		group = nil
		for _, r := range rows {
			if r.Rank == rows[p].Rank {
				group = append(group, r.Bot)
				in[r.Bot] = true
			}
		}
		played := 0
		for _, r := range recs {
			if r.Playoff > 0 && r.Round == round && in[r.White] && in[r.Black] {
				played = max(played, r.Playoff)
			}
		}
		if played >= maxPlayoffRounds {
			continue
		}
		sort.Ints(group)
		return group, played + 1
	}
	return nil, 0
}

// ParsePlayoff reads the places a tournament decides by playoff: ""
// for the default (PlayoffPlaces), "none" for NoPlayoff, or places such as
// "1,16".
func ParsePlayoff(s string) ([]int, error) {
	switch s = strings.TrimSpace(s); s {
	case "":
		return nil, nil
	case "none":
		return NoPlayoff, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			return nil, fmt.Errorf("want places such as 1,16 (a place is decided between its bot and the next), or none; got %q", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatPlayoff says the places a tournament plays off in words, as
// ParsePlayoff reads them back ("" for the default).
func FormatPlayoff(places []int) string {
	if places == nil {
		return ""
	}
	if slices.Equal(places, NoPlayoff) {
		return "none"
	}
	out := make([]string, len(places))
	for i, p := range places {
		out[i] = strconv.Itoa(p)
	}
	return strings.Join(out, ",")
}

// PlacesWords says places as a sentence does: "first place", "first
// place and place 8".
func PlacesWords(places []int) string {
	var out []string
	for _, p := range places {
		if p == 1 {
			out = append(out, "first place")
		} else {
			out = append(out, "place "+strconv.Itoa(p))
		}
	}
	return words.And(out)
}

// PlayoffWords says what a playoff on places decides, to follow the
// tie-breaks in a sentence about who ("bots", "teams"); "" when it
// decides none.
func PlayoffWords(places []int, who string) string {
	if len(places) == 0 {
		return ""
	}
	return "; " + who + " still level on " + PlacesWords(places) + " before the draw play for it (playoff: a side-swapped pair, then single deciders)"
}
