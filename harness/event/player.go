package event

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/ladder"
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
	// Ladder, when set, plays rated ladder pairs whenever no scrimmage
	// waits and Open says the event is open.
	Ladder bool
	Open   func(time.Time) bool
	// Seed seeds the ladder's choice of rivals.
	Seed uint64
	rng  *rand.Rand

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
			played, err := p.ladderStep(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			if played {
				continue
			}
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

// bot loads a stored submission as the bot of its team (LoadBot).
func (p *Player) bot(ctx context.Context, id int64) (*submission.Bot, error) {
	return p.Store.LoadBot(ctx, id, p.Settings.Game, p.Builder, p.Intake)
}

// LoadBot loads stored submission id as the bot of its team, named after
// the team, built if it is source (the validation's build is in the build
// cache).
func (s *Store) LoadBot(ctx context.Context, id int64, g rules.Game, b *build.Builder, intake submission.Limits) (*submission.Bot, error) {
	sub, err := s.Submission(ctx, id)
	if err != nil {
		return nil, err
	}
	team, err := s.Team(ctx, sub.Team)
	if err != nil {
		return nil, err
	}
	pack, _ := g.(rules.Packager)
	bot, err := submission.LoadWith(s.Path(sub), submission.LoadOptions{Limits: intake, Packager: pack,
		IsSource: b.Langs.Knows, Name: botName(team.Name, team.ID)})
	if err != nil {
		return nil, fmt.Errorf("submission %d: %w", id, err)
	}
	bots := []*submission.Bot{bot}
	if err := b.ReadyAll(ctx, bots, nil); err != nil {
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
	dir := filepath.Join(p.Store.Dir, ScrimmagesDir, fmt.Sprint(sc.ID))
	games, unplayed, err := p.playPair(ctx, ScrimmageGame, dir, uint64(sc.ID), [2]*submission.Bot{mine, rival},
		[2]Side{{Team: sc.Team, Submission: sc.Submission}, {Team: sc.RivalTeam, Submission: sc.RivalSubmission}})
	if err != nil {
		return "", "", err
	}
	if unplayed > 0 {
		return ScrimmageDone, fmt.Sprintf("%d of %d games played; the others were aborted by the host", len(games), len(games)+unplayed), nil
	}
	return ScrimmageDone, "", nil
}

// playPair plays bots[0] against bots[1], a pair of games with sides
// swapped, as a two-bot tournament in dir (resumed when it exists), and
// records the games played as kind, with sides saying whose each bot is.
// Games the host aborted every time are counted in unplayed, never
// recorded.
func (p *Player) playPair(ctx context.Context, kind, dir string, seed uint64, bots [2]*submission.Bot, sides [2]Side) (games []Game, unplayed int, err error) {
	if bots[1].Name == bots[0].Name {
		r := *bots[1]
		r.Name += "-2"
		bots[1] = &r
	}
	list := bots[:]
	cfg := tournament.NewConfig(list, p.Settings, p.Backend, p.Image)
	cfg.GamesPerPair, cfg.Seed = 2, seed
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, 0, err
	}
	if _, err := tournament.Run(ctx, tournament.Options{Dir: dir, Config: cfg, Bots: list, Game: p.Settings.Game,
		Backend: p.Backend, Concurrency: 2, MaxAttempts: 3, ArenaVersion: p.ArenaVersion, Signer: p.Signer,
		Labels: map[string]string{"org.arenabots.arena.event-games": kind}}); err != nil {
		return nil, 0, err
	}
	st, err := tournament.OpenStore(dir, true)
	if err != nil {
		return nil, 0, err
	}
	defer st.Close()
	recs, err := st.Games(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, rec := range recs {
		if rec.Status != tournament.Done || rec.Dir == "" {
			unplayed++
			continue
		}
		g, err := p.Store.AddGame(ctx, kind, filepath.Join(dir, rec.Dir), sides[rec.White], sides[rec.Black])
		if err != nil {
			return nil, 0, err
		}
		games = append(games, g)
	}
	return games, unplayed, nil
}

// ladderStep plays one ladder pair, an interrupted one first, and says
// whether it played; a pair the host could not play is logged and left
// unrated.
func (p *Player) ladderStep(ctx context.Context) (bool, error) {
	if !p.Ladder {
		return false, nil
	}
	pairs, err := p.Store.PlayingLadderPairs(ctx)
	if err != nil {
		return false, err
	}
	var pair LadderPair
	if len(pairs) > 0 {
		pair = pairs[0]
	} else {
		if p.Open != nil && !p.Open(time.Now()) {
			return false, nil
		}
		if _, closed, err := p.Store.Closed(ctx); err != nil || closed {
			return false, err
		}
		entries, err := p.Store.LadderEntries(ctx)
		if err != nil {
			return false, err
		}
		if p.rng == nil {
			p.rng = rand.New(rand.NewPCG(p.Seed, 0x1add3))
		}
		a, b, ok := ladder.Pick(entries, ladder.DefaultOptions, p.rng)
		if !ok {
			return false, nil
		}
		if pair, err = p.Store.StartLadderPair(ctx, entries[a], entries[b]); err != nil {
			return false, err
		}
	}
	games, err := p.playLadder(ctx, pair)
	if ctx.Err() != nil {
		return false, nil // resumed at the next start
	}
	if err != nil {
		p.Log.Error("ladder pair", "id", pair.ID, "err", err)
		games = nil
	}
	if err := p.Store.FinishLadderPair(ctx, pair, games); err != nil {
		return false, fmt.Errorf("rate ladder pair %d: %w", pair.ID, err)
	}
	for _, team := range []int64{pair.A.Team, pair.B.Team} {
		if p.Changed != nil {
			p.Changed(team)
		}
	}
	return true, nil
}

func (p *Player) playLadder(ctx context.Context, pair LadderPair) ([]Game, error) {
	a, err := p.bot(ctx, pair.A.Submission)
	if err != nil {
		return nil, err
	}
	b, err := p.bot(ctx, pair.B.Submission)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.Store.Dir, LadderDir, fmt.Sprint(pair.ID))
	games, _, err := p.playPair(ctx, LadderGame, dir, p.Seed^uint64(pair.ID), [2]*submission.Bot{a, b}, [2]Side{pair.A, pair.B})
	return games, err
}
