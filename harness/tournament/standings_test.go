package tournament

import (
	"context"
	"errors"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/transcript"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arenabots/arena/sandbox"
)

const (
	A, B, C, D = 0, 1, 2, 3
	draw       = -1
)

var names4 = []string{"alpha", "bravo", "charlie", "delta"}

func ranking(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Name
	}
	return out
}

func TestScoringAndSonnebornBergerDecides(t *testing.T) {
	t.Parallel()
	// A beats C and D, loses to B; B beats A and D, loses to C; C draws D.
	games := []Outcome{
		{A, C, A, 0}, {A, D, A, 0}, {B, A, B, 0}, {B, D, B, 0}, {C, B, C, 0}, {C, D, draw, 0},
	}
	rows := Standings(names4, games, DefaultScoring(), DefaultTieBreaks(), 1)
	// Points: A 6, B 6, C 4, D 1. SB: A = 4 (C) + 1 (D) = 5; B = 6 (A) + 1 (D) = 7.
	if got := ranking(rows); !reflect.DeepEqual(got, []string{"bravo", "alpha", "charlie", "delta"}) {
		t.Fatalf("ranking %v", got)
	}
	want := map[string][2]float64{"alpha": {6, 5}, "bravo": {6, 7}, "charlie": {4, 6.5}, "delta": {1, 2}}
	for _, r := range rows {
		if w := want[r.Name]; r.Points != w[0] || r.SB != w[1] {
			t.Errorf("%s: points %g SB %g, want %g %g", r.Name, r.Points, r.SB, w[0], w[1])
		}
	}
	if rows[0].DecidedBy != SonnebornBerger || rows[0].Rank != 1 || rows[1].Rank != 2 {
		t.Fatalf("%+v", rows[:2])
	}
	if rows[0].Wins != 2 || rows[0].Losses != 1 || rows[3].Draws != 1 || rows[3].Games != 3 {
		t.Fatalf("counts %+v", rows)
	}
}

func TestDirectEncounterDecidesWhenSonnebornBergerIsLevel(t *testing.T) {
	t.Parallel()
	// A beats B and C, draws D; B draws C, beats D; D beats C.
	games := []Outcome{
		{A, B, A, 0}, {A, C, A, 0}, {A, D, draw, 0}, {B, C, draw, 0}, {B, D, B, 0}, {C, D, D, 0},
	}
	rows := Standings(names4, games, DefaultScoring(), DefaultTieBreaks(), 1)
	// Points: A 7, B 4, D 4, C 1. SB: B = 4 (D) + 1/2 (C) = 4.5; D = 1 (C) + 7/2 (A) = 4.5.
	// B beat D, so B is second.
	if got := ranking(rows); !reflect.DeepEqual(got, []string{"alpha", "bravo", "delta", "charlie"}) {
		t.Fatalf("ranking %v", got)
	}
	if rows[1].SB != 4.5 || rows[2].SB != 4.5 || rows[1].DecidedBy != DirectEncounter || *rows[1].Direct != 3 || *rows[2].Direct != 0 {
		t.Fatalf("%+v\n%+v", rows[1], rows[2])
	}
}

func TestDirectEncounterNeedsEveryTiedPlayerToHaveMet(t *testing.T) {
	t.Parallel()
	// A gauntlet: X plays A and B three times each; A and B never meet.
	names := []string{"x", "a", "b"}
	games := []Outcome{
		{0, 1, draw, 0}, {1, 0, draw, 0}, {0, 1, draw, 0}, // a: three draws = 3 points, no win
		{0, 2, 2, 0}, {2, 0, 0, 0}, {0, 2, 0, 0}, // b: one win, two losses = 3 points
	}
	rows := Standings(names, games, DefaultScoring(), []string{DirectEncounter, MostWins, RandomDraw}, 1)
	if got := ranking(rows); !reflect.DeepEqual(got, []string{"x", "b", "a"}) {
		t.Fatalf("ranking %v", got)
	}
	if rows[1].Direct != nil || rows[1].DecidedBy != MostWins {
		t.Fatalf("%+v", rows[1])
	}
}

func TestRandomDrawIsSeededAndSharedRanksWithoutIt(t *testing.T) {
	t.Parallel()
	names := []string{"p", "q"}
	games := []Outcome{{0, 1, draw, 0}, {1, 0, draw, 0}}
	first := map[string]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		rows := Standings(names, games, DefaultScoring(), DefaultTieBreaks(), seed)
		again := Standings(names, games, DefaultScoring(), DefaultTieBreaks(), seed)
		if !reflect.DeepEqual(ranking(rows), ranking(again)) {
			t.Fatalf("seed %d: the draw is not repeatable", seed)
		}
		if rows[0].DecidedBy != RandomDraw || rows[0].Rank != 1 || rows[1].Rank != 2 {
			t.Fatalf("%+v", rows)
		}
		first[rows[0].Name] = true
	}
	if len(first) != 2 {
		t.Fatalf("20 seeds always drew the same winner")
	}
	rows := Standings(names, games, DefaultScoring(), []string{SonnebornBerger}, 0)
	if rows[0].Rank != 1 || rows[1].Rank != 1 {
		t.Fatalf("without a deciding tie-break both should share rank 1: %+v", rows)
	}
}

func TestCustomScoring(t *testing.T) {
	t.Parallel()
	rows := Standings([]string{"a", "b"}, []Outcome{{0, 1, 0, 0}, {1, 0, draw, 0}}, Scoring{Win: 2, Draw: 1, Loss: 0}, nil, 0)
	if rows[0].Name != "a" || rows[0].Points != 3 || rows[1].Points != 1 {
		t.Fatalf("%+v", rows)
	}
}

func TestEloAgainstPublishedFigures(t *testing.T) {
	t.Parallel()
	// The Elo model's expected scores (e.g. the FIDE/Elo logistic table):
	// +100 -> 0.640, +200 -> 0.760, +400 -> 0.909.
	for d, want := range map[float64]float64{0: 0.5, 100: 0.640, 200: 0.760, 400: 0.909, -200: 0.240} {
		if got := ExpectedScore(d); math.Abs(got-want) > 0.0005 {
			t.Errorf("E(%v) = %.4f, want %.3f", d, got, want)
		}
	}
	// A 75% score is a 400*log10(3) = 190.85 point difference. With 40 games
	// (30 wins, 10 losses) the standard error of the difference is
	// 1/sqrt(40 * 0.75 * 0.25) natural units = 63.4 Elo, so the 95% margin is
	// 1.96 * 63.4 = 124.3.
	var games []Outcome
	for i := 0; i < 30; i++ {
		games = append(games, Outcome{0, 1, 0, 0})
	}
	for i := 0; i < 10; i++ {
		games = append(games, Outcome{1, 0, 1, 0})
	}
	r, m := Elo(2, games, 0)
	if d := r[0] - r[1]; math.Abs(d-190.85) > 0.05 {
		t.Fatalf("difference %.2f, want 190.85", d)
	}
	if math.Abs((r[0]+r[1])/2-1500) > 1e-6 || math.Abs(m[0]-124.3) > 0.2 {
		t.Fatalf("ratings %v margins %v", r, m)
	}
	// Draws count half: 10 wins, 20 draws, 10 losses is an even score.
	games = nil
	for i := 0; i < 10; i++ {
		games = append(games, Outcome{0, 1, 0, 0}, Outcome{0, 1, 1, 0})
	}
	for i := 0; i < 20; i++ {
		games = append(games, Outcome{0, 1, draw, 0})
	}
	if r, _ := Elo(2, games, 0); math.Abs(r[0]-r[1]) > 1e-6 {
		t.Fatalf("even score, ratings %v", r)
	}
	// A perfect score stays finite with the prior.
	if r, m := Elo(2, []Outcome{{0, 1, 0, 0}, {1, 0, 0, 0}}, 1); math.IsInf(r[0], 0) || math.IsNaN(r[0]) || r[0] <= r[1] || math.IsInf(m[0], 0) {
		t.Fatalf("perfect score: %v %v", r, m)
	}
}

// With openings, both games of a pair start from the same one, every game
// of a round from the same one, and each bot meets every opening as often,
// from both sides.
func TestOpeningsArePlayedInPairsByEveryBotAlike(t *testing.T) {
	t.Parallel()
	const n, openings = 5, 3
	games, err := Schedule(RoundRobin, n, -1, 6, 9, openings)
	if err != nil {
		t.Fatal(err)
	}
	perBot := map[[2]int]int{} // (bot, opening) -> games
	perRound := map[int]int{}
	byPair := map[int][]Game{}
	for _, g := range games {
		if g.Opening < 1 || g.Opening > openings {
			t.Fatalf("%+v", g)
		}
		if o, ok := perRound[g.Round]; ok && o != g.Opening {
			t.Fatalf("round %d starts from openings %d and %d", g.Round, o, g.Opening)
		}
		perRound[g.Round] = g.Opening
		perBot[[2]int{g.White, g.Opening}]++
		perBot[[2]int{g.Black, g.Opening}]++
		byPair[g.Pair] = append(byPair[g.Pair], g)
	}
	for p, two := range byPair {
		if len(two) != 2 || two[0].Opening != two[1].Opening || two[0].Seed != two[1].Seed || two[0].White != two[1].Black {
			t.Fatalf("pair %d: %+v", p, two)
		}
	}
	for b := 0; b < n; b++ {
		for o := 1; o <= openings; o++ {
			if perBot[[2]int{b, o}] != perBot[[2]int{0, 1}] {
				t.Fatalf("bot %d plays opening %d %d times, bot 0 opening 1 %d times", b, o, perBot[[2]int{b, o}], perBot[[2]int{0, 1}])
			}
		}
	}
	// An odd number of games per pair: the last is a pair of its own.
	odd, _ := Schedule(RoundRobin, 2, -1, 3, 9, 0)
	if odd[0].Pair != odd[1].Pair || odd[2].Pair == odd[1].Pair || odd[2].Seed == odd[0].Seed {
		t.Fatalf("%+v", odd)
	}
}

func TestScheduleIsDeterministicAndFair(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 4, 5, 8} {
		games, err := Schedule(RoundRobin, n, 0, 2, 42, 0)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Schedule(RoundRobin, n, 0, 2, 42, 0)
		other, _ := Schedule(RoundRobin, n, 0, 2, 43, 0)
		if !reflect.DeepEqual(games, again) {
			t.Fatalf("n=%d: the same seed gave another schedule", n)
		}
		if games[0].Seed == other[0].Seed {
			t.Fatalf("n=%d: game seeds ignore the tournament seed", n)
		}
		if len(games) != n*(n-1) {
			t.Fatalf("n=%d: %d games, want %d", n, len(games), n*(n-1))
		}
		ordered := map[[2]int]int{}
		white := make([]int, n)
		perRound := map[int]map[int]bool{}
		seeds := map[uint64]bool{}
		for i, g := range games {
			if g.ID != i+1 || g.White == g.Black {
				t.Fatalf("n=%d: game %+v", n, g)
			}
			ordered[[2]int{g.White, g.Black}]++
			white[g.White]++
			if perRound[g.Round] == nil {
				perRound[g.Round] = map[int]bool{}
			}
			for _, b := range []int{g.White, g.Black} {
				if perRound[g.Round][b] {
					t.Fatalf("n=%d: bot %d plays twice in round %d", n, b, g.Round)
				}
				perRound[g.Round][b] = true
			}
			seeds[g.Seed] = true
		}
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a != b && ordered[[2]int{a, b}] != 1 {
					t.Fatalf("n=%d: %d has White against %d %d times, want once", n, a, b, ordered[[2]int{a, b}])
				}
			}
			if white[a] != n-1 {
				t.Fatalf("n=%d: bot %d has White %d times", n, a, white[a])
			}
		}
		// Each pair's two games share a seed, sides swapped; no two pairs
		// share one.
		byPair := map[int][]Game{}
		for _, g := range games {
			byPair[g.Pair] = append(byPair[g.Pair], g)
		}
		if len(seeds) != len(games)/2 || len(byPair) != len(games)/2 {
			t.Fatalf("n=%d: %d seeds, %d pairs for %d games", n, len(seeds), len(byPair), len(games))
		}
		for p, two := range byPair {
			if len(two) != 2 || two[0].Seed != two[1].Seed || two[0].White != two[1].Black || two[0].Black != two[1].White || two[0].Opening != 0 {
				t.Fatalf("n=%d: pair %d: %+v", n, p, two)
			}
		}
	}
	g, err := Schedule(Gauntlet, 4, 2, 2, 1, 0)
	if err != nil || len(g) != 6 {
		t.Fatalf("gauntlet: %v %v", g, err)
	}
	for _, x := range g {
		if x.White != 2 && x.Black != 2 {
			t.Fatalf("gauntlet game without the challenger: %+v", x)
		}
	}
	for _, bad := range []func() error{
		func() error { _, err := Schedule(RoundRobin, 1, 0, 2, 1, 0); return err },
		func() error { _, err := Schedule(Gauntlet, 3, 5, 2, 1, 0); return err },
		func() error { _, err := Schedule("swiss", 3, 0, 2, 1, 0); return err },
		func() error { _, err := Schedule(RoundRobin, 3, 0, 0, 1, 0); return err },
	} {
		if bad() == nil {
			t.Error("a bad schedule request was accepted")
		}
	}
}

// A reader may look at a directory before its runner has stored anything:
// no database, a database being created, one whose schema exists but holds
// no configuration. Each is "not started", never a failure.
func TestLoadSaysNotStartedUntilTheConfigurationIsStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Load(ctx, dir); !errors.Is(err, ErrNotStarted) {
		t.Errorf("no database: %v, want ErrNotStarted", err)
	}
	if err := os.WriteFile(filepath.Join(dir, DBFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, dir); !errors.Is(err, ErrNotStarted) {
		t.Errorf("an empty database file: %v, want ErrNotStarted", err)
	}
	st, err := OpenStore(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Load(ctx, dir); !errors.Is(err, ErrNotStarted) {
		t.Errorf("a schema without a configuration: %v, want ErrNotStarted", err)
	}
	if err := st.Init(ctx, Config{Format: RoundRobin, Game: "codeclash", GamesPerPair: 1, Scoring: DefaultScoring(), TieBreaks: DefaultTieBreaks(),
		Bots: []BotEntry{{Name: "a"}, {Name: "b"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(ctx, dir); err != nil || s.Config.Game != "codeclash" {
		t.Errorf("a stored configuration: %+v, %v, want it loaded", s, err)
	}
}

// Each bot's games as first and second player, its draw ratio and its LOS
// over the next bot; each two bots' pairs by the first one's points; and
// whether sides were balanced.
func TestPairsSidesAndLOS(t *testing.T) {
	bots := []BotEntry{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	games, err := Schedule(RoundRobin, 3, -1, 4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for _, g := range games {
		r := Record{Game: g, Status: Done}
		// a beats everyone; b and c draw as b's White, b wins as Black.
		switch {
		case g.White == 0 || g.Black == 0:
			r.Winner = map[bool]string{true: transcript.WinnerWhite, false: transcript.WinnerBlack}[g.White == 0]
		case g.White == 1:
			r.Winner = transcript.WinnerDraw
		default:
			r.Winner = transcript.WinnerBlack
		}
		recs = append(recs, r)
	}
	recs[len(recs)-1].Status, recs[len(recs)-1].Winner = Unplayed, ""
	rows := Standings([]string{"a", "b", "c"}, outcomes(recs), DefaultScoring(), DefaultTieBreaks(), 1)
	if rows[0].Name != "a" || rows[0].AsWhite+rows[0].AsBlack != rows[0].Games || rows[2].LOS != nil {
		t.Fatalf("%+v", rows)
	}
	for _, r := range rows[:2] {
		if r.LOS == nil || *r.LOS < 0.5 || *r.LOS > 1 {
			t.Fatalf("%s: LOS %v", r.Name, r.LOS)
		}
	}
	if b := rows[1]; b.Name != "b" || b.DrawRatio <= 0 || b.DrawRatio >= 1 {
		t.Fatalf("%+v", b)
	}
	pairs := pairRows(bots, recs)
	if len(pairs) != 3 {
		t.Fatalf("%+v", pairs)
	}
	for _, p := range pairs {
		// The last game was not played: its pair is incomplete.
		last := recs[len(recs)-1]
		incomplete := 0
		if p.A == bots[min(last.White, last.Black)].Name && p.B == bots[max(last.White, last.Black)].Name {
			incomplete = 1
		}
		switch p.A {
		case "a":
			if p.Pentanomial != (stats.Penta{0, 0, 0, 0, 2 - incomplete}) || p.Incomplete != incomplete {
				t.Errorf("%+v", p)
			}
		case "b":
			if p.Pentanomial != (stats.Penta{0, 0, 0, 2 - incomplete, 0}) || p.AWhite != 2 || p.BWhite != 2-incomplete {
				t.Errorf("b and c: %+v", p)
			}
		}
	}
	if ok, why := SidesBalanced(pairs); !ok {
		t.Errorf("unbalanced: %s", why)
	}
	pairs[0].AWhite += 2
	if ok, why := SidesBalanced(pairs); ok || !strings.Contains(why, "had the first move") {
		t.Errorf("%v %q", ok, why)
	}
	if s := String(rows, nil); !strings.Contains(s, "1ST/2ND") || !strings.Contains(s, "%") {
		t.Errorf("%s", s)
	}
}

// A try the host stalled is counted apart from other aborts: the event's
// page says how often the host was too busy.
func TestAbortsOfABusyHostAreCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := OpenStore(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Init(ctx, Config{Format: RoundRobin, Game: "codeclash", GamesPerPair: 1, Scoring: DefaultScoring(), TieBreaks: DefaultTieBreaks(),
		Bots: []BotEntry{{Name: "a"}, {Name: "b"}}}, []Game{{ID: 1, White: 0, Black: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, reason := range []string{"sandbox: turn: the engine went away", "sandbox: turn: " + sandbox.ErrHostStalled.Error() + ": it kept the bot waiting", "sandbox: ask: " + sandbox.ErrHostStalled.Error()} {
		if _, err := st.Abort(ctx, 1, reason, 5, ""); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := st.Games(ctx)
	if err != nil || len(recs) != 1 || recs[0].HostBusy != 2 || recs[0].Attempts != 3 {
		t.Fatalf("%+v %v", recs, err)
	}
}

// A tournament that names its bots' teams (an event's final) prints each
// team beside its bot: C++ Wizards and C# Wizards are told apart, though
// their bots are C-Wizards and C-Wizards-2.
func TestStandingsNameTheTeams(t *testing.T) {
	t.Parallel()
	rows := []Row{{Rank: 1, Name: "C-Wizards-2", Team: "C# Wizards", Games: 2, Wins: 2, Points: 2}, {Rank: 2, Name: "C-Wizards", Team: "C++ Wizards", Games: 2, Losses: 2}}
	lines := strings.Split(String(rows, nil), "\n")
	if !strings.HasPrefix(lines[0], "RANK TEAM") || !strings.Contains(lines[0], " BOT ") {
		t.Fatalf("the header: %q", lines[0])
	}
	for i, want := range [][2]string{{"C# Wizards", "C-Wizards-2"}, {"C++ Wizards", "C-Wizards "}} {
		if !strings.Contains(lines[i+1], want[0]) || !strings.Contains(lines[i+1], want[1]) || strings.Index(lines[i+1], want[0]) > strings.Index(lines[i+1], want[1]) {
			t.Errorf("row %d: %q, want the team %q then its bot %q", i+1, lines[i+1], want[0], want[1])
		}
	}
	rows[0].Team, rows[1].Team = "", ""
	if s := String(rows, nil); strings.Contains(s, "TEAM") {
		t.Errorf("a tournament of bots alone prints a team column:\n%s", s)
	}
}

// A place is drawn by lot only where the draw told it apart from a
// neighbour: the two level on everything are, the bots alone on their
// points above and below them are not.
func TestOnlyThePlacesTheLotDecidedAreDrawn(t *testing.T) {
	t.Parallel()
	names := []string{"a", "b", "c", "d"}
	games := []Outcome{{0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0}, {1, 3, 1, 0}, {2, 3, 2, 0}, {1, 2, -1, 0}}
	rows := Standings(names, games, DefaultScoring(), DefaultTieBreaks(), 7)
	got := map[string]bool{}
	for _, r := range rows {
		got[r.Name] = r.ByLot
	}
	if want := map[string]bool{"a": false, "b": true, "c": true, "d": false}; !reflect.DeepEqual(got, want) {
		t.Errorf("drawn by lot: %v, want %v\n%+v", got, want, rows)
	}
	if rows[0].Name != "a" || rows[3].Name != "d" || rows[0].DecidedBy != "" || rows[3].DecidedBy != "" {
		t.Errorf("the bots alone on their points are placed by a tie-break: %+v", rows)
	}
	for _, r := range Standings(names, nil, DefaultScoring(), DefaultTieBreaks(), 7) {
		if r.ByLot {
			t.Errorf("before any game, %s's place is drawn", r.Name)
		}
	}
}
