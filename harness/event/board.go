package event

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/tournament"
)

// Board is the final's scoreboard as someone may see it.
type Board struct {
	Standings []BoardRow `json:"standings"`
	// Games counts the final's games: total, done, unplayed, pending (as
	// of the freeze, for a frozen board: done counts the games shown).
	Games map[string]int `json:"games"`
	// FrozenAt is when the board shown was frozen (zero if it is live).
	FrozenAt time.Time `json:"frozenAt,omitzero"`
	// FreezesAt is the freeze the organizer set, shown to the organizer
	// only (zero if none).
	FreezesAt time.Time `json:"freezesAt,omitzero"`
	Run       FinalRun  `json:"run"`
	// TieBreaks are the tie-breaks that place teams level on points, in
	// the order they apply (a row's decidedBy names the one that did).
	TieBreaks []string `json:"tieBreaks"`
	// Stage says where the final stands, in words: its format, the round
	// under way of how many, where the cut falls ("" before it started).
	Stage string `json:"stage,omitempty"`
	// Cut is how many of a stages final's qualifier go on (0: no cut).
	Cut int `json:"cut,omitempty"`
	// Upcoming are the matches paired and not yet over, each team's next
	// (none on a frozen board: a pairing can tell a result).
	Upcoming []BoardPairing `json:"upcoming,omitempty"`
	// Rounds are a Swiss final's (a stages final's qualifier's, a rating
	// final's) rounds with their pairings, as far as they are shown (a frozen board: the rounds whose every game had
	// finished by the freeze).
	Rounds []BoardRound `json:"rounds,omitempty"`
	// PlayoffPlaces are the places teams level after every tie-break
	// but the lot play for, and Playoffs the playoff rounds played so far
	// (as far as the board shows their games).
	PlayoffPlaces []int        `json:"playoffPlaces,omitempty"`
	Playoffs      []BoardRound `json:"playoffs,omitempty"`
	// Bracket is a bracket final's (a stages final's second stage's)
	// bracket, laid out for drawing, as far as the board shows its games
	// (nil for a final with no bracket).
	Bracket *tournament.Bracket `json:"-"`
}

// BoardRound is a round of a Swiss final: its pairings and who sat out.
type BoardRound struct {
	Round int `json:"round"`
	// Playoff is a playoff round's number (1: the side-swapped pairs, 2
	// and on: deciders), played after Round; 0 for the format's own.
	Playoff  int            `json:"playoff,omitempty"`
	Pairings []BoardPairing `json:"pairings"`
	Bye      string         `json:"bye,omitempty"`
}

// BoardPairing is two teams' games in a round: each one's points from
// them (a win 1, a draw ½), and how many are still to finish.
type BoardPairing struct {
	// Round is an upcoming match's round (0 within a BoardRound), and
	// Playoff its playoff round (0: the format's own).
	Round       int     `json:"round,omitempty"`
	Playoff     int     `json:"playoff,omitempty"`
	White       string  `json:"white"`
	Black       string  `json:"black"`
	WhitePoints float64 `json:"whitePoints"`
	BlackPoints float64 `json:"blackPoints"`
	Left        int     `json:"left,omitempty"`
}

// boardRounds are a Swiss final's rounds from its games; shown says which
// games' results may show (nil: all), and a round shows only when all of
// its finished games may.
func boardRounds(state *tournament.State, names TeamNames, shown func(tournament.Record) bool) []BoardRound {
	// The rounds a format pairs: a Swiss final's, a stages final's
	// qualifier's (its second stage is a round robin, or drawn as a
	// bracket), a rating final's.
	format, qualifier := state.Config.Format, 0
	switch format {
	case tournament.Swiss, tournament.Rating:
	case tournament.Stages:
		qualifier = state.Config.SwissRounds()
	default:
		return nil
	}
	team := teamOfBot(state, names)
	byRound := map[int][]tournament.Record{}
	last := 0
	for _, r := range state.Games {
		if qualifier > 0 && r.Round > qualifier || r.Playoff > 0 {
			continue
		}
		byRound[r.Round] = append(byRound[r.Round], r)
		last = max(last, r.Round)
	}
	var out []BoardRound
	for round := 1; round <= last; round++ {
		br, hidden := boardRound(byRound[round], team, shown)
		if hidden {
			break
		}
		br.Round = round
		in := map[int]bool{}
		for _, r := range byRound[round] {
			in[r.White], in[r.Black] = true, true
		}
		for b := range state.Config.Bots {
			// A Swiss round's one bot left out sits it out, scored; a
			// rating round pairs only the teams it is unsure of.
			if !in[b] && len(byRound[round]) > 0 && format != tournament.Rating {
				br.Bye = team(b)
			}
		}
		out = append(out, br)
	}
	return out
}

// boardRound is a round's games as pairings (hidden: a finished game the
// board may not show yet).
func boardRound(games []tournament.Record, team func(int) string, shown func(tournament.Record) bool) (br BoardRound, hidden bool) {
	at := map[[2]int]int{}
	for _, r := range games {
		key := [2]int{min(r.White, r.Black), max(r.White, r.Black)}
		i, ok := at[key]
		if !ok {
			i = len(br.Pairings)
			at[key] = i
			br.Pairings = append(br.Pairings, BoardPairing{White: team(r.White), Black: team(r.Black)})
		}
		p := &br.Pairings[i]
		points, done := r.Score(r.White)
		switch {
		case !done:
			p.Left++
		case shown != nil && !shown(r):
			hidden = true
		case team(r.White) == p.White:
			p.WhitePoints += points
			p.BlackPoints += 1 - points
		default:
			p.BlackPoints += points
			p.WhitePoints += 1 - points
		}
	}
	return br, hidden
}

// playoffRounds are the final's playoff rounds (of any format), in the
// order they were played: their games that shown lets the board show
// (nil: all).
func playoffRounds(state *tournament.State, names TeamNames, shown func(tournament.Record) bool) []BoardRound {
	team := teamOfBot(state, names)
	type key struct{ round, playoff int }
	var order []key
	by := map[key][]tournament.Record{}
	for _, r := range state.Games {
		if r.Playoff == 0 || shown != nil && !shown(r) {
			continue // a frozen board shows no pairing it could not show played
		}
		k := key{r.Round, r.Playoff}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	var out []BoardRound
	for _, k := range order {
		br, hidden := boardRound(by[k], team, shown)
		if hidden {
			break
		}
		br.Round, br.Playoff = k.round, k.playoff
		out = append(out, br)
	}
	return out
}

// stage says where a final of cfg stands after the games shown (nil: all):
// "swiss, 11 rounds: round 4 of 11", "stages: the qualifier's round 3 of 8;
// its top 16 go on to a double elimination", and the cut.
func stage(cfg tournament.Config, recs []tournament.Record, shown func(tournament.Record) bool) (string, int) {
	round, last := 0, tournament.Record{}
	for _, r := range recs {
		if shown == nil || shown(r) {
			round = max(round, r.Round)
			if r.ID > last.ID {
				last = r
			}
		}
	}
	if round == 0 {
		return cfg.Describe() + ": not under way yet", 0
	}
	if last.Playoff > 0 {
		cut := 0
		if cfg.Format == tournament.Stages && last.Round <= cfg.SwissRounds() {
			cut = cfg.Advance
		}
		return fmt.Sprintf("%s: playoff games after round %d, for a place teams were level on after every tie-break", cfg.Describe(), last.Round), cut
	}
	switch cfg.Format {
	case tournament.Swiss:
		return fmt.Sprintf("%s: round %d of %d", cfg.Describe(), round, cfg.SwissRounds()), 0
	case tournament.Stages:
		q, then := cfg.SwissRounds(), strings.ReplaceAll(cfg.Then, "-", " ")
		if round <= q {
			return fmt.Sprintf("stages: the qualifier's round %d of %d; its top %d go on to a %s", round, q, cfg.Advance, then), cfg.Advance
		}
		return fmt.Sprintf("stages: the second stage, a %s of the qualifier's top %d", then, cfg.Advance), 0
	case tournament.Knockout, tournament.DoubleElimination:
		return fmt.Sprintf("%s: round %d of the bracket", cfg.Describe(), round), 0
	case tournament.Rating:
		return fmt.Sprintf("%s: round %d, played where the ranks are least sure", cfg.Describe(), round), 0
	}
	return cfg.Describe(), 0
}

// teamOfBot names the team of a bot of the final by the bot's index.
func teamOfBot(state *tournament.State, names TeamNames) func(bot int) string {
	return func(bot int) string {
		name := state.Config.Bots[bot].Name
		return cmp.Or(names.ByBot[name], name)
	}
}

// upcoming are the final's matches paired and not over: its games pending
// or playing, by pair, each with what is left of it.
func upcoming(state *tournament.State, names TeamNames) []BoardPairing {
	team := teamOfBot(state, names)
	at := map[int]int{}
	var out []BoardPairing
	for _, r := range state.Games {
		if r.Status != tournament.Pending && r.Status != tournament.Running {
			continue
		}
		i, ok := at[r.Pair]
		if !ok {
			i = len(out)
			at[r.Pair] = i
			out = append(out, BoardPairing{Round: r.Round, Playoff: r.Playoff, White: team(r.White), Black: team(r.Black)})
		}
		out[i].Left++
	}
	return out
}

// BoardRow is a row of the final's standings with its team's name: Name
// is the name its bot played under.
type BoardRow struct {
	tournament.Row        // its ByLot: the place was drawn against a neighbour
	Team           string `json:"team"`
}

// boardRows are rows with their teams' names.
func boardRows(rows []tournament.Row, names TeamNames) []BoardRow {
	out := make([]BoardRow, 0, len(rows))
	for _, r := range rows {
		team := names.ByBot[r.Name]
		if team == "" {
			team = r.Name
		}
		out = append(out, BoardRow{Row: r, Team: team})
	}
	return out
}

// WithTeamNames is rows of the tournament in dir with each bot's team as
// the event names it now, when dir is an event's final (DIR/final): a team
// renamed since the final started reads under its new name, as on the
// event's pages. Rows of any other tournament come back as they are.
func WithTeamNames(ctx context.Context, dir string, rows []tournament.Row) (out []tournament.Row, err error) {
	dir = filepath.Clean(dir)
	eventDir := filepath.Dir(dir)
	if filepath.Base(dir) != FinalDir {
		return rows, nil
	}
	if _, err := os.Stat(filepath.Join(eventDir, ConfigFile)); err != nil {
		return rows, nil
	}
	st, err := Open(eventDir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	names, err := st.Names(ctx)
	if err != nil {
		return nil, err
	}
	out = slices.Clone(rows)
	for i, r := range out {
		if team := names.ByBot[r.Name]; team != "" {
			out[i].Team = team
		}
	}
	return out, nil
}

// FinalBoards is the final's scoreboard as anyone and as the organizer see
// it, both from one load of DIR/final (nil, nil before the final started).
// The organizer sees it live; anyone else, while the scoreboard is frozen,
// sees it computed from the games that had finished by the freeze. The two
// may share their standings and counts: neither is to be changed.
func (s *Store) FinalBoards(ctx context.Context) (anyone, organizer *Board, err error) {
	state, err := tournament.Load(ctx, filepath.Join(s.Dir, FinalDir))
	if errors.Is(err, tournament.ErrNotStarted) {
		// Begun, its first game not yet under way: the run, and nothing
		// played.
		run, ok, err := s.FinalRun(ctx)
		if err != nil || !ok {
			return nil, nil, err
		}
		b := Board{Standings: []BoardRow{}, Games: map[string]int{}, Run: run, TieBreaks: []string{}}
		org := b
		return &b, &org, nil
	}
	if err != nil {
		return nil, nil, err
	}
	names, err := s.Names(ctx)
	if err != nil {
		return nil, nil, err
	}
	live := Board{Standings: boardRows(state.Summary.Standings, names), Games: state.StandingsFile().Games, Rounds: boardRounds(state, names, nil),
		Bracket: state.BracketOf(nil), TieBreaks: state.Config.TieBreaks, Upcoming: upcoming(state, names),
		PlayoffPlaces: state.Config.PlayoffPlaces(), Playoffs: playoffRounds(state, names, nil)}
	live.Stage, live.Cut = stage(state.Config, state.Games, nil)
	if live.Run, _, err = s.FinalRun(ctx); err != nil {
		return nil, nil, err
	}
	at, frozen, err := s.Frozen(ctx)
	if err != nil {
		return nil, nil, err
	}
	org := live
	if !frozen {
		return &live, &org, nil
	}
	org.FreezesAt = at
	if time.Now().Before(at) {
		return &live, &org, nil
	}
	finished, err := s.finalFinished(ctx)
	if err != nil {
		return nil, nil, err
	}
	shown := 0
	fb := live
	byFreeze := func(r tournament.Record) bool {
		fin, ok := finished[filepath.Join(FinalDir, r.Dir)]
		return ok && !fin.After(at)
	}
	fb.Standings = boardRows(state.StandingsOf(func(r tournament.Record) bool {
		if byFreeze(r) {
			shown++
			return true
		}
		return false
	}), names)
	fb.Rounds, fb.Playoffs = boardRounds(state, names, byFreeze), playoffRounds(state, names, byFreeze)
	fb.Bracket = state.BracketOf(byFreeze)
	fb.Stage, fb.Upcoming = "", nil
	fb.Stage, fb.Cut = stage(state.Config, state.Games, byFreeze)
	fb.FrozenAt = at
	fb.Games = map[string]int{"total": state.Summary.Total, "done": shown}
	// Nothing after the freeze shows: not whether the final ended, or
	// failed, or how many games the host could not play.
	fb.Run = FinalRun{Shape: live.Run.Shape, Concurrency: live.Run.Concurrency, Started: live.Run.Started}
	if fb.Run.Started.After(at) {
		fb.Run.Started = time.Time{}
	}
	return &fb, &org, nil
}
