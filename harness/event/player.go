package event

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// ScrimmagesDir holds one tournament directory per scrimmage.
const ScrimmagesDir = "scrimmages"

// ScrimmageGame is a game of a scrimmage.
const ScrimmageGame = "scrimmage"

// Player plays the event's games through the tournament runner, the one
// arena tournament uses: a scrimmage is a tournament of two bots, a pair of
// games with sides swapped, in its own directory (so a stopped server
// resumes it like any tournament).
type Player struct {
	Store    *Store
	Settings match.Resolved
	Backend  sandbox.Backend
	Image    string
	Builder  *build.Builder
	Intake   submission.Limits
	// Opponent is the built-in random bot; nil refuses challenges of it.
	Opponent     *submission.Bot
	ArenaVersion string
	Signer       ed25519.PrivateKey
	// Changed is told each team whose games changed.
	Changed func(team int64)
	Log     *slog.Logger

	wake chan struct{}
	once sync.Once
}

func (p *Player) init() { p.once.Do(func() { p.wake = make(chan struct{}, 1) }) }

// Wake tells the player a scrimmage was queued.
func (p *Player) Wake() {
	p.init()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run plays queued scrimmages one at a time until ctx ends; those a stop
// interrupted are played on (resumed) first.
func (p *Player) Run(ctx context.Context) error {
	p.init()
	if n, err := p.Store.RequeueScrimmages(ctx); err != nil {
		return err
	} else if n > 0 {
		p.Log.Info("scrimmages interrupted by the last stop resume", "count", n)
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		sc, err := p.Store.ClaimScrimmage(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrNotFound):
			select {
			case <-ctx.Done():
				return nil
			case <-p.wake:
			case <-tick.C:
			}
			continue
		case err != nil:
			return fmt.Errorf("claim a scrimmage: %w", err)
		}
		state, msg, err := p.play(ctx, sc)
		if ctx.Err() != nil {
			return nil // resumed at the next start
		}
		if err != nil {
			state, msg = ScrimmageError, "the host could not play it: "+err.Error()
			p.Log.Error("scrimmage", "id", sc.ID, "err", err)
		}
		if err := p.Store.FinishScrimmage(ctx, sc.ID, state, msg); err != nil {
			return fmt.Errorf("record scrimmage %d: %w", sc.ID, err)
		}
		for _, team := range []int64{sc.Team, sc.RivalTeam} {
			if team != 0 && p.Changed != nil {
				p.Changed(team)
			}
		}
	}
}

var unsafeBotName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// botName is a team's name as a bot name (submission.CheckBotName).
func botName(team string, id int64) string {
	n := strings.Trim(unsafeBotName.ReplaceAllString(team, "-"), "-._")
	if len(n) > 48 {
		n = n[:48]
	}
	if submission.CheckBotName(n) != nil {
		n = fmt.Sprintf("team-%d", id)
	}
	return n
}

// bot loads a stored submission as the bot of its team, built if it is
// source (the validation's build is in the build cache).
func (p *Player) bot(ctx context.Context, id int64) (*submission.Bot, error) {
	sub, err := p.Store.Submission(ctx, id)
	if err != nil {
		return nil, err
	}
	team, err := p.Store.Team(ctx, sub.Team)
	if err != nil {
		return nil, err
	}
	pack, _ := p.Settings.Game.(rules.Packager)
	b, err := submission.LoadWith(p.Store.Path(sub), submission.LoadOptions{Limits: p.Intake, Packager: pack,
		IsSource: p.Builder.Langs.Knows, Name: botName(team.Name, team.ID)})
	if err != nil {
		return nil, fmt.Errorf("submission %d: %w", id, err)
	}
	bots := []*submission.Bot{b}
	if err := p.Builder.ReadyAll(ctx, bots, nil); err != nil {
		return nil, err
	}
	if bots[0].BuildError != "" {
		return nil, fmt.Errorf("submission %d did not build: %s", id, bots[0].BuildError)
	}
	return bots[0], nil
}

// play plays one scrimmage and records its games.
func (p *Player) play(ctx context.Context, sc Scrimmage) (state, msg string, err error) {
	mine, err := p.bot(ctx, sc.Submission)
	if err != nil {
		return "", "", err
	}
	rival := p.Opponent
	if sc.RivalTeam != 0 {
		if rival, err = p.bot(ctx, sc.RivalSubmission); err != nil {
			return "", "", err
		}
	}
	if rival == nil {
		return ScrimmageError, "the built-in random bot is not available on this server", nil
	}
	if rival.Name == mine.Name {
		r := *rival
		r.Name += "-2"
		rival = &r
	}
	bots := []*submission.Bot{mine, rival}
	cfg := tournament.NewConfig(bots, p.Settings, p.Backend, p.Image)
	cfg.GamesPerPair, cfg.Seed = 2, uint64(sc.ID)
	dir := filepath.Join(p.Store.Dir, ScrimmagesDir, fmt.Sprint(sc.ID))
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", "", err
	}
	sum, err := tournament.Run(ctx, tournament.Options{Dir: dir, Config: cfg, Bots: bots, Game: p.Settings.Game,
		Backend: p.Backend, Concurrency: 2, MaxAttempts: 3, ArenaVersion: p.ArenaVersion, Signer: p.Signer,
		Labels: map[string]string{"org.arenabots.arena.scrimmage": fmt.Sprint(sc.ID)}})
	if err != nil {
		return "", "", err
	}
	_ = sum
	st, err := tournament.OpenStore(dir, true)
	if err != nil {
		return "", "", err
	}
	defer st.Close()
	recs, err := st.Games(ctx)
	if err != nil {
		return "", "", err
	}
	sides := []Side{{Team: sc.Team, Submission: sc.Submission}, {Team: sc.RivalTeam, Submission: sc.RivalSubmission}}
	played := 0
	for _, rec := range recs {
		if rec.Status != tournament.Done || rec.Dir == "" {
			continue
		}
		if _, err := p.Store.AddGame(ctx, ScrimmageGame, filepath.Join(dir, rec.Dir), sides[rec.White], sides[rec.Black]); err != nil {
			return "", "", err
		}
		played++
	}
	if played < len(recs) {
		return ScrimmageDone, fmt.Sprintf("%d of %d games played; the others were aborted by the host", played, len(recs)), nil
	}
	return ScrimmageDone, "", nil
}
