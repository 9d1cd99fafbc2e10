package services

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/harness/event"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Rerunner runs a disputed turn again (arena rerun) with the server's
// sandbox: the bot of the side that played the turn, loaded from its
// stored submission (or the built-in random bot), in a fresh box.
type Rerunner struct {
	Store   *event.Store
	Game    rules.Game
	Backend sandbox.Backend
	Builder *build.Builder
	Intake  submission.Limits
	// Opponent is the built-in random bot, for its own turns.
	Opponent *submission.Bot
	// Repeat is how many times the turn runs (default 3: a timeout
	// dispute needs the spread).
	Repeat int
}

// Rerun runs turn ply of dispute id's game again, stores what it printed
// (in the database, and as rerun-PLY.txt and .json in DIR/disputes/ID) and
// returns the dispute with it.
func (r *Rerunner) Rerun(ctx context.Context, id int64, ply int) (event.Dispute, error) {
	d, err := r.Store.Dispute(ctx, id)
	if err != nil {
		return d, err
	}
	g, err := r.Store.Game(ctx, d.Game)
	if err != nil {
		return d, err
	}
	path := r.Store.MatchDir(g)
	rep, at, _, err := replay.FindTurn(path, ply)
	if err != nil {
		if rep == nil {
			return d, err
		}
		return d, &event.RefusedError{Msg: err.Error()}
	}
	side := g.White
	if at.Turn.Side == transcript.WinnerBlack {
		side = g.Black
	}
	bot := r.Opponent
	if side.Submission != 0 {
		if bot, err = LoadBot(ctx, r.Store, side.Submission, r.Game, r.Builder, r.Intake, nil); err != nil {
			return d, err
		}
	}
	if bot == nil {
		return d, &event.RefusedError{Msg: "the built-in random bot is not available on this server"}
	}
	var text, public bytes.Buffer
	drift, err := replay.ImageDrift(ctx, r.Backend, rep.Header)
	if err != nil {
		return d, err
	}
	if drift != "" {
		fmt.Fprintln(&text, "warning:", drift)
		fmt.Fprintln(&public, "warning:", drift)
	}
	out, err := replay.RunAgain(ctx, replay.RerunOptions{Path: path, Ply: ply, Bot: bot, Backend: r.Backend, Repeat: max(r.Repeat, 1)})
	var unrerunnable *replay.UnrerunnableError
	if errors.As(err, &unrerunnable) {
		return d, &event.RefusedError{Msg: err.Error()}
	}
	if err != nil {
		return d, err
	}
	out.WriteText(&text)
	out.Public().WriteText(&public)
	dir := filepath.Join(r.Store.Dir, event.DisputesDir, fmt.Sprint(id))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return d, err
	}
	js, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return d, err
	}
	for name, data := range map[string][]byte{fmt.Sprintf("rerun-%d.json", ply): append(js, '\n'), fmt.Sprintf("rerun-%d.txt", ply): text.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return d, err
		}
	}
	if err := r.Store.AddRerun(ctx, id, g.ID, ply, at.Turn.Side, text.String(), public.String()); err != nil {
		return d, err
	}
	return r.Store.Dispute(ctx, id)
}
