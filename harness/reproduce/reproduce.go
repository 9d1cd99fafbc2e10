// Package reproduce plays a published final's games again from its
// submissions: each game the log holds, in the sandbox, from its logged
// programs, seed, rules and limits, exactly as the final's runner described
// it (runner.Options.MatchConfig), then compared with its published
// transcript turn by turn, every difference named.
//
// It works on a bundle arena verify has checked (verify.Result): the log's
// configuration, players and pairings are what it plays. It must never
// play a program whose SHA-256 is not the one the log names for its
// player, nor count a game as reproduced that it did not play.
package reproduce

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Options say where and with what the games are played again.
type Options struct {
	// Backend plays the games (the log's limits apply).
	Backend sandbox.Backend
	// Bots are the submissions, loaded and built: each player of the log
	// is the one whose program has the player's SHA-256.
	Bots []*submission.Bot
	// Dir is where each game is played again, in its published directory
	// under it.
	Dir string
	// Concurrency is how many games play at once (0: one).
	Concurrency int
	// Played, when set, is told of each game once it has been played
	// again and compared, in the order they end.
	Played func(Game)
}

// Game is one logged game played again.
type Game struct {
	ID    int `json:"id"`
	Round int `json:"round"`
	// Playoff is the round of the playoff it was (0: none), after Round.
	Playoff   int    `json:"playoff,omitempty"`
	White     string `json:"white"`
	Black     string `json:"black"`
	Dir       string `json:"dir"`
	Turns     int    `json:"turns"` // the published transcript's
	NotPlayed string `json:"notPlayed,omitempty"`
	// Differences are where the game played again departs from the
	// published one, in order: the first turn that differs (and how many
	// after it differ too), the turns' count, the result.
	Differences []string `json:"differences,omitempty"`
}

// Same says the game played again is the published one, turn by turn.
func (g Game) Same() bool { return g.NotPlayed == "" && len(g.Differences) == 0 }

// Report is every logged game played again, in the log's order, and the
// players whose program no submission is.
type Report struct {
	Games   []Game   `json:"games"`
	Missing []string `json:"missing,omitempty"`
}

// Same counts the games played again the same, those that differ and
// those not played.
func (r *Report) Same() (same, differ, notPlayed int) {
	for _, g := range r.Games {
		switch {
		case g.NotPlayed != "":
			notPlayed++
		case g.Same():
			same++
		default:
			differ++
		}
	}
	return same, differ, notPlayed
}

// Final plays again every game of the final src holds, which verify.Bundle
// found whole as r, and compares each with its published transcript.
func Final(ctx context.Context, src verify.Source, r *verify.Result, o Options) (*Report, error) {
	if r == nil || r.Config == nil {
		return nil, fmt.Errorf("the bundle holds no final's configuration to play again")
	}
	cfg := *r.Config
	g, err := rules.Lookup(cfg.Game)
	if err != nil {
		return nil, fmt.Errorf("the log's game: %w", err)
	}
	rep := &Report{}
	bots := make([]*submission.Bot, len(cfg.Bots))
	byProgram := map[string]*submission.Bot{}
	for _, b := range o.Bots {
		byProgram[b.SHA256] = b
	}
	for i, p := range cfg.Bots {
		if b := byProgram[p.SHA256]; b != nil {
			bots[i] = b
			continue
		}
		rep.Missing = append(rep.Missing, missing(p, upload(r.Uploads, i), o.Bots))
	}
	// Each bot's box is reused from one game to its next, as the final's
	// runner reuses them.
	pool := sandbox.NewPool(o.Backend)
	ro := runner.Options{Config: cfg, Bots: bots, Game: g, Backend: pool, Dir: o.Dir}
	for _, rec := range r.Records {
		if rec.Status != tournament.Done {
			continue // a final in progress: its pairing has no game yet
		}
		rep.Games = append(rep.Games, Game{ID: rec.ID, Round: rec.Round, Playoff: rec.Playoff, White: cfg.Bots[rec.White].Name, Black: cfg.Bots[rec.Black].Name, Dir: rec.Dir})
	}
	byID := map[int]tournament.Record{}
	for _, rec := range r.Records {
		byID[rec.ID] = rec
	}
	var wg sync.WaitGroup
	next := make(chan int)
	var mu sync.Mutex
	var failed error
	for range max(o.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				game := &rep.Games[i]
				rec := byID[game.ID]
				if err := playAgain(ctx, src, ro, rec, bots, game); err != nil {
					// Never counted the same: it was not played again.
					game.NotPlayed, game.Differences = "it could not be played again: "+err.Error(), nil
					mu.Lock()
					failed = firstErr(failed, fmt.Errorf("game %d: %w", game.ID, err))
					mu.Unlock()
				}
				if o.Played != nil {
					mu.Lock()
					o.Played(*game)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range rep.Games {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := pool.Close(context.WithoutCancel(ctx)); err != nil {
		failed = firstErr(failed, fmt.Errorf("destroy the idle sandboxes: %w", err))
	}
	if failed != nil {
		return rep, failed
	}
	return rep, ctx.Err()
}

func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func upload(uploads []string, i int) string {
	if i < len(uploads) {
		return uploads[i]
	}
	return ""
}

// missing says why no submission plays player p: none is its program, or
// one is its upload but builds to another program.
func missing(p tournament.BotEntry, upload string, bots []*submission.Bot) string {
	for _, b := range bots {
		if upload != "" && b.SubmissionSHA256 == upload {
			return fmt.Sprintf("%s: %s is its upload (%.12s), but its program is %.12s, not the one the log says was played (%.12s): the build is not the same", who(p), b.Source, upload, b.SHA256, p.SHA256)
		}
	}
	return fmt.Sprintf("%s: no submission here is its program (%.12s) or its upload (%.12s)", who(p), p.SHA256, upload)
}

func who(p tournament.BotEntry) string {
	if p.Team != "" {
		return fmt.Sprintf("%s (%s)", p.Team, p.Name)
	}
	return p.Name
}

// playAgain plays rec again and compares it with its published transcript.
func playAgain(ctx context.Context, src verify.Source, ro runner.Options, rec tournament.Record, bots []*submission.Bot, g *Game) error {
	if bots[rec.White] == nil || bots[rec.Black] == nil {
		g.NotPlayed = "a player's program is not among the submissions"
		return nil
	}
	dir := filepath.Join(ro.Dir, filepath.FromSlash(rec.Dir))
	cfg := ro.MatchConfig(rec, "", dir)
	if _, err := match.Run(ctx, cfg); err != nil {
		return err
	}
	published, err := src.Open(ctx, rec.Dir+"/"+transcript.FileName, verify.MaxTranscript)
	if err != nil {
		return fmt.Errorf("its published transcript: %w", err)
	}
	defer published.Close() // read only
	again, err := os.Open(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return fmt.Errorf("the game played again: %w", err)
	}
	defer again.Close() // read only
	g.Differences, g.Turns, err = compare(published, again)
	return err
}

// compare names where the game played again departs from the published
// one: its players and seed, its first turn that differs (each turn's
// Reproduced part, field by field), its turns' count and its result. It
// reads the two side by side, a turn of each at a time.
func compare(published, again io.Reader) (diffs []string, turns int, err error) {
	pub, got := newGame(published), newGame(again)
	var first string
	at, after, common := 0, 0, 0 // at: the index of the first turn that differs
	for {
		a, okA := pub.next()
		b, okB := got.next()
		if !okA || !okB {
			break
		}
		common++
		switch field, x, y := turnDiff(a, b); {
		case field == "":
		case first == "":
			first, at = fmt.Sprintf("ply %d (%s): %s: published %s, played again %s", a.Ply, a.Side, field, x, y), common-1
		default:
			// What follows a turn that differs follows from it: counted,
			// not named.
			after++
		}
	}
	for _, g := range []*game{pub, got} {
		for _, ok := g.next(); ok; _, ok = g.next() {
		}
	}
	if pub.err != nil {
		return nil, 0, fmt.Errorf("the published transcript: %w", pub.err)
	}
	if got.err != nil {
		return nil, 0, fmt.Errorf("the game played again: %w", got.err)
	}
	ph, gh := pub.header, got.header
	if ph.Seed != gh.Seed || ph.White.SHA256 != gh.White.SHA256 || ph.Black.SHA256 != gh.Black.SHA256 {
		diffs = append(diffs, fmt.Sprintf("its header: published seed %d, %.12s vs %.12s; played again seed %d, %.12s vs %.12s",
			ph.Seed, ph.White.SHA256, ph.Black.SHA256, gh.Seed, gh.White.SHA256, gh.Black.SHA256))
	}
	if first != "" {
		diffs = append(diffs, first)
	}
	if after > 0 {
		diffs = append(diffs, fmt.Sprintf("%d of the %d turns after it differ too", after, common-at-1))
	}
	if pub.turns != got.turns {
		diffs = append(diffs, fmt.Sprintf("its turns: published %d, played again %d", pub.turns, got.turns))
	}
	pr, gr := pub.result, got.result
	if pr.Winner != gr.Winner || pr.Reason != gr.Reason || pr.Plies != gr.Plies {
		diffs = append(diffs, fmt.Sprintf("its result: published %s (%s) after %d plies, played again %s (%s) after %d", pr.Winner, pr.Reason, pr.Plies, gr.Winner, gr.Reason, gr.Plies))
	}
	return diffs, pub.turns, nil
}

// game reads a transcript a line at a time: its header, its turns one by
// one, its result.
type game struct {
	sc     *transcript.Scanner
	header transcript.Header
	result transcript.Result
	turns  int
	err    error
}

func newGame(r io.Reader) *game { return &game{sc: transcript.NewScanner(r, 0)} }

// next is the next turn; false past the last or on an error (err).
func (g *game) next() (transcript.Turn, bool) {
	for g.err == nil && g.sc.Scan() {
		l := g.sc.Line()
		switch l.Type {
		case transcript.TypeHeader:
			if err := l.Decode(&g.header); err != nil {
				g.err = fmt.Errorf("its header: %w", err)
			}
		case transcript.TypeTurn:
			var t transcript.Turn
			if err := l.Decode(&t); err != nil {
				g.err = fmt.Errorf("line %d: %w", g.sc.Lines(), err)
				break
			}
			g.turns++
			return t, true
		case transcript.TypeFooter:
			var f transcript.Footer
			if err := l.Decode(&f); err != nil {
				g.err = fmt.Errorf("its footer: %w", err)
			}
			g.result = f.Result
		}
	}
	if g.err == nil {
		g.err = g.sc.Err()
	}
	return transcript.Turn{}, false
}

// turnDiff names the first field (by its JSON name) where two turns'
// Reproduced parts differ, with both values.
func turnDiff(a, b transcript.Turn) (field, published, again string) {
	va, vb := reflect.ValueOf(a.Reproduced()), reflect.ValueOf(b.Reproduced())
	t := va.Type()
	for i := range t.NumField() {
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(x, y) {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		return name, show(x), show(y)
	}
	return "", "", ""
}

// show is a value as JSON, cut to a line.
func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const most = 80
	if s := string(data); len(s) > most {
		return s[:most] + "…"
	}
	return string(data)
}
