package tournament

import (
	"fmt"
	"sort"

	"github.com/arenabots/arena/harness/stats"
)

// PairRow is what two bots' side-swapped pairs of games came to, from the
// first one's side (A: the earlier in the configuration's order).
type PairRow struct {
	A string `json:"a"`
	B string `json:"b"`
	// Pentanomial counts A's complete pairs by its points: 0, ½, 1, 1½, 2.
	Pentanomial stats.Penta `json:"pentanomial"`
	// Incomplete counts pairs with a game not played (yet, or ever).
	Incomplete int `json:"incomplete"`
	// Singles counts the games played alone, not in a side-swapped pair:
	// a bracket's deciders after a level match (or every game, at one
	// game a pair).
	Singles int `json:"singles,omitempty"`
	// AWhite and BWhite count the played games each had as the first
	// player.
	AWhite int `json:"aWhite"`
	BWhite int `json:"bWhite"`
}

// pairRows groups the games by the two bots that played them and counts
// their pairs.
func pairRows(bots []BotEntry, recs []Record) []PairRow {
	type key struct{ a, b int }
	rows := map[key]*PairRow{}
	byPair := map[int][]Record{}
	for _, r := range recs {
		a, b := min(r.White, r.Black), max(r.White, r.Black)
		k := key{a, b}
		if rows[k] == nil {
			rows[k] = &PairRow{A: bots[a].Name, B: bots[b].Name}
		}
		if r.Status == Done {
			if r.White == a {
				rows[k].AWhite++
			} else {
				rows[k].BWhite++
			}
		}
		byPair[r.Pair] = append(byPair[r.Pair], r)
	}
	for _, games := range byPair {
		g := games[0]
		row := rows[key{min(g.White, g.Black), max(g.White, g.Black)}]
		a := min(g.White, g.Black)
		var points []float64
		for _, g := range games {
			if x, ok := g.Score(a); ok {
				points = append(points, x)
			}
		}
		switch {
		case len(points) != len(games):
			row.Incomplete++
		case len(games) == 1:
			row.Singles++
		case len(games) == 2:
			row.Pentanomial.Add(points[0], points[1])
		default:
			row.Incomplete++ // no pair has more
		}
	}
	var out []PairRow
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].A != out[j].A {
			return out[i].A < out[j].A
		}
		return out[i].B < out[j].B
	})
	return out
}

// SidesBalanced says whether no bot had the first move more often than its
// opponent, pair of bots by pair of bots (one game's difference at most,
// an odd number of games between them), with the first pair of bots that
// was not when it is false.
func SidesBalanced(pairs []PairRow) (bool, string) {
	for _, p := range pairs {
		if d := p.AWhite - p.BWhite; d > 1 || d < -1 {
			return false, fmt.Sprintf("%s had the first move in %d games against %s, %s in %d", p.A, p.AWhite, p.B, p.B, p.BWhite)
		}
	}
	return true, ""
}
