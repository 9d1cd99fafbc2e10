// Package export writes played games in the formats chess and checkers
// tools read: PGN for chess, PDN 3.0 for English checkers. A game is taken
// from its transcript only once replay has recomputed it, so that what is
// exported is what the rules engine says was played, never what an edited
// file claims.
//
// It must never export a game whose transcript does not replay, nor write
// a move the rules engine did not play.
package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
)

// Formats.
const (
	PGN = "pgn"
	PDN = "pdn"
)

// formatOf is the format each game exports to.
var formatOf = map[string]string{"chess": PGN, "checkers": PDN}

// move is one move as exported: its notation, who made it, and the time
// that side had left after it (zero: not recorded).
type move struct {
	text string
	side rules.Side
	left time.Duration
	bank bool // a time bank was kept
}

// game is a replayed match, ready to be written.
type game struct {
	header transcript.Header
	result transcript.Result
	moves  []move
	event  string
	round  string
}

// Write exports the match or tournament at path (a match directory, its
// transcript, or a tournament directory: every played game in order) in
// format to w.
func Write(ctx context.Context, w io.Writer, path, format string) error {
	if format != PGN && format != PDN {
		return fmt.Errorf("format: want %s or %s, got %q", PGN, PDN, format)
	}
	if _, err := os.Stat(filepath.Join(path, tournament.DBFile)); err == nil {
		return writeTournament(ctx, w, path, format)
	}
	g, err := load(path, format)
	if err != nil {
		return err
	}
	g.event, g.round = "arena match", "-"
	return g.write(w, format)
}

func writeTournament(ctx context.Context, w io.Writer, dir, format string) error {
	st, err := tournament.Load(ctx, dir)
	if err != nil {
		return err
	}
	if want := formatOf[st.Config.Game]; want != format {
		return fmt.Errorf("%s is a %s tournament: it exports as %s", dir, st.Config.Game, orNone(want))
	}
	event := filepath.Base(filepath.Clean(dir))
	for _, r := range st.Games {
		if r.Status != tournament.Done || r.Dir == "" {
			continue
		}
		g, err := load(filepath.Join(dir, r.Dir), format)
		if err != nil {
			return fmt.Errorf("game %d: %w", r.ID, err)
		}
		g.event, g.round = event, fmt.Sprint(r.Round)
		if err := g.write(w, format); err != nil {
			return err
		}
	}
	return nil
}

func orNone(f string) string {
	if f == "" {
		return "neither PGN nor PDN"
	}
	return strings.ToUpper(f)
}

// load replays the match at path and collects its moves in notation.
func load(path, format string) (*game, error) {
	file, dir := replay.Locate(path)
	lines, err := transcript.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s does not replay: %w", file, err)
	}
	// The header says the game; replay below checks everything it says.
	var h transcript.Header
	if len(lines) == 0 || lines[0].Decode(&h) != nil {
		return nil, fmt.Errorf("%s has no transcript header", file)
	}
	if want := formatOf[h.Game]; want != format {
		return nil, fmt.Errorf("%s is a %s game: it exports as %s", file, h.Game, orNone(want))
	}
	rg, err := rules.Lookup(h.Game)
	if err != nil {
		return nil, err
	}
	notate, ok := rg.(rules.Notator)
	if !ok {
		return nil, fmt.Errorf("%s has no move notation to export", h.Game)
	}
	g := &game{}
	var failed error
	rep := replay.Lines(lines, dir, func(s replay.State) {
		if failed != nil || s.Turn.Played == "" {
			return
		}
		m, err := s.Before.ParseMove([]byte(s.Turn.Played))
		if err != nil {
			failed = fmt.Errorf("ply %d: %w", s.Turn.Ply, err)
			return
		}
		mv := move{text: notate.Notation(s.Before, m), side: s.Before.ToMove()}
		if s.Ask.Clock != (rules.Clock{}) {
			mv.bank = true
			mv.left = max(0, s.Ask.Clock.Mine-time.Duration(s.Turn.WallMs*float64(time.Millisecond)))
		}
		g.moves = append(g.moves, mv)
	})
	if !rep.Consistent {
		return nil, fmt.Errorf("%s does not replay: %s", file, rep.Problem())
	}
	g.header, g.result = rep.Header, rep.Result
	return g, failed
}
