package tournament

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/arenabots/arena/harness/transcript"
)

// The final of an event of 300 teams: a round robin, each pair twice with
// sides swapped.
const (
	finalBots  = 300
	finalGames = finalBots * (finalBots - 1) // 89,700
	finalSeed  = 2026
)

// finalOf is the schedule of that final and a result for every game: each
// bot has a latent strength (Elo points, normally spread), a game is a draw
// one time in six and otherwise won by either side as the Elo model
// expects, so that the standings are not a uniform field of ties.
func finalOf(b *testing.B) ([]string, []Game, []Outcome) {
	b.Helper()
	games, err := Schedule(RoundRobin, finalBots, -1, 2, finalSeed, 0)
	if err != nil {
		b.Fatal(err)
	}
	if len(games) != finalGames {
		b.Fatalf("%d games scheduled, want %d", len(games), finalGames)
	}
	rng := rand.New(rand.NewPCG(finalSeed, 1))
	names := make([]string, finalBots)
	strength := make([]float64, finalBots)
	for i := range names {
		names[i] = fmt.Sprintf("team-%03d", i)
		strength[i] = 200 * rng.NormFloat64()
	}
	outcomes := make([]Outcome, len(games))
	draws := 0
	for i, g := range games {
		o := Outcome{White: g.White, Black: g.Black, Winner: -1}
		switch p := rng.Float64(); {
		case p < 1.0/6:
			draws++
		case p < 1.0/6+5.0/6*ExpectedScore(strength[g.White]-strength[g.Black]):
			o.Winner = g.White
		default:
			o.Winner = g.Black
		}
		outcomes[i] = o
	}
	if draws == 0 || draws == len(games) {
		b.Fatalf("%d draws of %d games", draws, len(games))
	}
	return names, games, outcomes
}

// checkFinal fails unless rows rank every bot of the final once, with every
// game counted.
func checkFinal(b *testing.B, rows []Row) {
	b.Helper()
	if len(rows) != finalBots {
		b.Fatalf("%d rows, want %d", len(rows), finalBots)
	}
	seen := map[int]bool{}
	for i, r := range rows {
		if r.Games != 2*(finalBots-1) || r.Wins+r.Draws+r.Losses != r.Games || seen[r.Bot] || math.IsNaN(r.Elo) {
			b.Fatalf("row %d: %+v", i, r)
		}
		seen[r.Bot] = true
		if i > 0 && r.Points > rows[i-1].Points {
			b.Fatalf("row %d (%g points) ranked below row %d (%g points)", i, r.Points, i-1, rows[i-1].Points)
		}
	}
}

// BenchmarkStandingsOf300TeamFinal is the standings of a 300-team final
// (89,700 games: every pair twice, sides swapped). compute is Standings on
// the outcomes alone; load is Load on the tournament directory, its SQLite
// store holding every game finished, which is what a server does to show the
// live standings of such a final. The target is under 1 s per computation
// for each.
func BenchmarkStandingsOf300TeamFinal(b *testing.B) {
	names, games, outcomes := finalOf(b)

	b.Run("compute", func(b *testing.B) {
		for b.Loop() {
			checkFinal(b, Standings(names, outcomes, DefaultScoring(), DefaultTieBreaks(), finalSeed))
		}
	})

	b.Run("load", func(b *testing.B) {
		ctx := context.Background()
		dir := b.TempDir()
		cfg := Config{Format: RoundRobin, GamesPerPair: 2, Seed: finalSeed, Game: "codeclash", OnFault: "forfeit",
			Sandbox: "local", Scoring: DefaultScoring(), TieBreaks: DefaultTieBreaks()}
		for _, n := range names {
			cfg.Bots = append(cfg.Bots, BotEntry{Name: n, SHA256: fmt.Sprintf("%064x", len(cfg.Bots)), Source: n})
		}
		st, err := OpenStore(dir, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Init(ctx, cfg, games); err != nil {
			b.Fatal(err)
		}
		// Every game finished as the runner records it: its winner, reason,
		// plies and times.
		for i, g := range games {
			winner := transcript.WinnerDraw
			switch outcomes[i].Winner {
			case g.White:
				winner = transcript.WinnerWhite
			case g.Black:
				winner = transcript.WinnerBlack
			}
			res := transcript.Result{Winner: winner, Reason: "points", Plies: 40, Turns: 42, DurationMs: 120}
			rec := Record{Game: g}
			if err := st.Finish(ctx, g.ID, res, fmt.Sprintf("game-%d", rec.ID), Times{BotMs: 80, TurnMs: 2}, ""); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		want := Standings(names, outcomes, cfg.Scoring, cfg.TieBreaks, cfg.Seed)
		for b.Loop() {
			s, err := Load(ctx, dir)
			if err != nil {
				b.Fatal(err)
			}
			if s.Summary.Total != finalGames || s.Summary.Done != finalGames {
				b.Fatalf("%d games, %d done, want %d done", s.Summary.Total, s.Summary.Done, finalGames)
			}
			checkFinal(b, s.Summary.Standings)
			if s.Summary.Standings[0].Name != want[0].Name || s.Summary.Standings[finalBots-1].Name != want[finalBots-1].Name {
				b.Fatalf("the stored final ranks %s first and %s last, the outcomes %s and %s", s.Summary.Standings[0].Name,
					s.Summary.Standings[finalBots-1].Name, want[0].Name, want[finalBots-1].Name)
			}
		}
	})
}
