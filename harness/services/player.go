package services

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/ladder"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Player plays the event's games through the tournament runner, the one
// arena tournament uses: a scrimmage is a tournament of two bots, a pair of
// games with sides swapped, in its own directory (so a stopped server
// resumes it like any tournament).
type Player struct {
	Store    *event.Store
	Settings settings.Resolved
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
	// LogGames appends each ladder game to the event's log as it is
	// recorded (Log.Ladder). A scrimmage's games are never logged: only
	// their two teams and the organizer see them.
	LogGames bool
	Open     func(time.Time) bool
	// LadderShare is the part of its time the player gives the ladder
	// (0 or 1: all it has free); see Ladder.Share.
	LadderShare float64
	// Matchmaking is how ladder pairs are picked (nil:
	// ladder.DefaultOptions); see Ladder.Far.
	Matchmaking *ladder.Options
	// LadderEvidence is what a ladder game keeps of the data files
	// ([ladder] keep_data_files; zero: the match's default).
	LadderEvidence transcript.Evidence
	// Openings, when set, are the positions ladder pairs start from
	// ([ladder] openings): each pair from one, sides swapped, two
	// submissions that meet again from the next.
	Openings []rules.Opening
	// Seed seeds the ladder's choice of rivals.
	Seed uint64
	// Workers, when set, play the games instead of this machine.
	Workers *Workers
	// Watch, when set, follows each game this machine plays (Watch).
	Watch Watch
	// Slots is how many pairs are played at once (0: one), each pair's
	// two games one after the other: as many games at once as arena
	// tournament --concurrency Slots plays, and no pair waits for the
	// slower of its games to start the next one.
	Slots int

	mu sync.Mutex // guards what follows
	// ladderAfter is when the next ladder pair may start.
	ladderAfter time.Time
	rng         *rand.Rand
	// busy are the teams of the ladder pairs in flight: a team plays one
	// rated pair at a time, rated from where its last one left it.
	busy map[int64]bool
	// bots are the submissions loaded (and built) lately, by id and the
	// name they play under: a stored submission never changes, and hashing
	// and reading it again for every pair was most of a pair's own cost.
	bots map[botKey]*submission.Bot

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

// Run plays queued scrimmages, and ladder pairs while none waits, until ctx
// ends: Slots pairs at once, those a stop interrupted first (resumed). A
// pair that cannot be recorded stops the player with its error once the
// pairs in flight have ended.
func (p *Player) Run(ctx context.Context) error {
	p.init()
	if n, err := p.Store.RequeueScrimmages(ctx); err != nil {
		return err
	} else if n > 0 {
		p.Log.Info("scrimmages interrupted by the last stop resume", "count", n)
	}
	resume, err := p.Store.PlayingLadderPairs(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		cancel()
	}
	slots := make(chan struct{}, max(p.Slots, 1))
	ended := make(chan struct{}, 1) // a pair ended: a slot is free
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return first
		case slots <- struct{}{}:
		}
		play, err := p.next(ctx, &resume)
		if err != nil && ctx.Err() == nil {
			fail(err)
		}
		if play == nil {
			<-slots
			select {
			case <-ctx.Done():
			case <-p.wake:
			case <-ended:
			case <-tick.C:
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := play(ctx); err != nil {
				fail(err)
			}
			<-slots
			select {
			case ended <- struct{}{}:
			default:
			}
		}()
	}
}

// next is the next pair to play: a queued scrimmage, an interrupted ladder
// pair, a new ladder pair between teams that play none now; nil when there
// is nothing to play yet.
func (p *Player) next(ctx context.Context, resume *[]event.LadderPair) (func(context.Context) error, error) {
	sc, err := p.Store.ClaimScrimmage(ctx)
	switch {
	case err == nil:
		return func(ctx context.Context) error { return p.scrimmage(ctx, sc) }, nil
	case !errors.Is(err, event.ErrNotFound):
		return nil, fmt.Errorf("claim a scrimmage: %w", err)
	case !p.Ladder:
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var pair event.LadderPair
	if len(*resume) > 0 {
		pair, *resume = (*resume)[0], (*resume)[1:]
	} else {
		if p.Open != nil && !p.Open(time.Now()) || time.Now().Before(p.ladderAfter) {
			return nil, nil
		}
		if _, closed, err := p.Store.Closed(ctx); err != nil || closed {
			return nil, err
		}
		entries, err := p.Store.LadderEntries(ctx)
		if err != nil {
			return nil, err
		}
		for i := range entries {
			entries[i].Busy = p.busy[entries[i].Team]
		}
		if p.rng == nil {
			p.rng = rand.New(rand.NewPCG(p.Seed, 0x1add3))
		}
		pick := ladder.DefaultOptions
		if p.Matchmaking != nil {
			pick = *p.Matchmaking
		}
		a, b, ok := ladder.Pick(entries, pick, p.rng)
		if !ok {
			return nil, nil
		}
		opening := ""
		if n := len(p.Openings); n > 0 {
			// The pair's next opening: two submissions that meet again
			// start from another position, each pair from its own first.
			x, y := min(entries[a].Submission, entries[b].Submission), max(entries[a].Submission, entries[b].Submission)
			opening = p.Openings[(entries[a].Met[entries[b].Submission].Pairs+int((x*7919+y)%int64(n)))%n].Name
		}
		if pair, err = p.Store.StartLadderPair(ctx, entries[a], entries[b], opening); err != nil {
			return nil, err
		}
	}
	if p.busy == nil {
		p.busy = map[int64]bool{}
	}
	p.busy[pair.A.Team], p.busy[pair.B.Team] = true, true
	return func(ctx context.Context) error { return p.ladderPair(ctx, pair) }, nil
}

// scrimmage plays a claimed scrimmage and records how it ended; a stop
// leaves it to be played again at the next start.
func (p *Player) scrimmage(ctx context.Context, sc event.Scrimmage) error {
	state, msg, err := p.play(ctx, sc)
	if ctx.Err() != nil {
		return nil // resumed at the next start
	}
	if err != nil {
		state, msg = event.ScrimmageError, "the host could not play it: "+err.Error()
		p.Log.Error("scrimmage", "id", sc.ID, "err", err)
	}
	if err := p.Store.FinishScrimmage(ctx, sc.ID, state, msg); err != nil {
		return recorded(ctx, err, fmt.Sprintf("record scrimmage %d", sc.ID))
	}
	p.Log.Info("scrimmage", "id", sc.ID, "team", sc.Team, "rival", sc.RivalTeam, "state", state, "message", msg)
	for _, team := range []int64{sc.Team, sc.RivalTeam} {
		if team != 0 && p.Changed != nil {
			p.Changed(team)
		}
	}
	return nil
}

// bot loads a stored submission as the bot of its team (LoadBot).
func (p *Player) bot(ctx context.Context, id int64) (*submission.Bot, error) {
	b, err := LoadBot(ctx, p.Store, id, p.Settings.Game, p.Builder, p.Intake, p.cached)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bots == nil || len(p.bots) >= keepBots {
		p.bots = map[botKey]*submission.Bot{} // a ladder of many teams starts again: rare, and cheap
	}
	p.bots[botKey{id, b.Name}] = b
	return b, nil
}

// botKey names a loaded submission.
type botKey struct {
	id   int64
	name string
}

// keepBots is how many loaded submissions the player keeps.
const keepBots = 64

// cached is a submission loaded before under the name it plays under now.
func (p *Player) cached(id int64, name string) *submission.Bot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bots[botKey{id, name}]
}

// LoadBot loads stored submission id as the bot of its team, named after
// the team, built if it is source (the validation's build is in the build
// cache).
//
// cached, when set, may hand back the bot as loaded before (by id and the
// name it plays under); nil or a nil bot: load it.
func LoadBot(ctx context.Context, s *event.Store, id int64, g rules.Game, b *build.Builder, intake submission.Limits, cached func(id int64, name string) *submission.Bot) (*submission.Bot, error) {
	sub, err := s.Submission(ctx, id)
	if err != nil {
		return nil, err
	}
	team, err := s.Team(ctx, sub.Team)
	if err != nil {
		return nil, err
	}
	if cached != nil {
		if bot := cached(id, team.BotName); bot != nil {
			return bot, nil
		}
	}
	pack, _ := g.(rules.Packager)
	bot, err := submission.Load(s.Path(sub), submission.LoadOptions{Limits: intake, Packager: pack,
		IsSource: b.Langs.Knows, Name: team.BotName})
	if err != nil {
		return nil, fmt.Errorf("submission %d: %w", id, err)
	}
	// Transcripts name the event's submission, never where the server
	// keeps it.
	bot.Source = SubmissionLabel(id)
	bots := []*submission.Bot{bot}
	if err := b.ReadyAll(ctx, bots, nil); err != nil {
		return nil, err
	}
	// A submission the organizer admitted plays even when it does not
	// build: it loses its games with the verdict build-error.
	if bots[0].BuildError != "" && sub.State == event.Passed {
		return nil, fmt.Errorf("submission %d did not build: %s", id, bots[0].BuildError)
	}
	return bots[0], nil
}

// play plays one scrimmage and records its games.
func (p *Player) play(ctx context.Context, sc event.Scrimmage) (state, msg string, err error) {
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
		return event.ScrimmageError, "the built-in random bot is not available on this server", nil
	}
	dir := filepath.Join(p.Store.Dir, event.ScrimmagesDir, fmt.Sprint(sc.ID))
	games, unplayed, err := p.playPair(ctx, event.ScrimmageGame, dir, uint64(sc.ID), event.JobsScrimmage+4*int(sc.ID), [2]*submission.Bot{mine, rival},
		[2]event.Side{{Team: sc.Team, Submission: sc.Submission}, {Team: sc.RivalTeam, Submission: sc.RivalSubmission}}, nil)
	if err != nil {
		return "", "", err
	}
	if unplayed > 0 {
		return event.ScrimmageDone, fmt.Sprintf("%d of %d games played; the others were aborted by the host", len(games), len(games)+unplayed), nil
	}
	return event.ScrimmageDone, "", nil
}

// playPair plays bots[0] against bots[1], a pair of games with sides
// swapped, as a two-bot tournament in dir (resumed when it exists), and
// records the games played as kind, with sides saying whose each bot is.
// On workers its games are jobs job+1 and job+2. Games the host aborted
// every time are counted in unplayed, never recorded.
func (p *Player) playPair(ctx context.Context, kind, dir string, seed uint64, job int, bots [2]*submission.Bot, sides [2]event.Side,
	openings []rules.Opening) (games []event.Game, unplayed int, err error) {
	// A team's bot name may be the built-in random bot's.
	if bots[1].Name == bots[0].Name {
		r := *bots[1]
		r.Name += "-2"
		bots[1] = &r
	}
	list := bots[:]
	cfg := runner.NewConfig(list, p.Settings, p.Backend, p.Image)
	// Each game is rated (or a team's test) on its own: no place to play off.
	cfg.GamesPerPair, cfg.Seed, cfg.Openings, cfg.Playoff = 2, seed, openings, tournament.NoPlayoff
	if kind == event.LadderGame {
		cfg.Evidence = p.LadderEvidence
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, 0, err
	}
	o := runner.Options{Dir: dir, Config: cfg, Bots: list, Game: p.Settings.Game,
		Backend: p.Backend, Concurrency: 1, MaxAttempts: 3, ArenaVersion: p.ArenaVersion, Signer: p.Signer,
		Labels: map[string]string{"org.arenabots.arena.event-games": kind}, NoViews: true,
		BlobStore: filepath.Join(p.Store.Dir, event.EvidenceDir), Watch: p.Watch.watcher(kind, sides[:])}
	p.Workers.apply(&o, job)
	_, err = runner.Run(ctx, o)
	if errors.Is(err, runner.ErrConfigChanged) {
		// The database is the truth: a directory of this number holding
		// another tournament is what a restored backup (its files copied
		// after its database) or a lost row left. It is kept aside, and
		// the pair is played anew.
		aside, serr := p.Store.SetAside(dir)
		if serr != nil {
			return nil, 0, errors.Join(err, serr)
		}
		p.Log.Warn("a directory held another tournament than the event's database records: kept aside, and the games played anew",
			"dir", dir, "asideIn", aside, "why", err)
		_, err = runner.Run(ctx, o)
	}
	if err != nil {
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
	if err := p.Store.HostReplays(ctx, kind, dir, recs); err != nil {
		return nil, 0, err
	}
	for _, rec := range recs {
		if rec.Status != tournament.Done || rec.Dir == "" {
			unplayed++
			continue
		}
		g, err := p.Store.AddGame(ctx, kind, filepath.Join(dir, rec.Dir), sides[rec.White], sides[rec.Black], rec.SlotMs)
		if err != nil {
			return nil, 0, err
		}
		if p.LogGames && kind == event.LadderGame {
			if err := p.Store.LogGame(ctx, g); err != nil {
				return nil, 0, err
			}
		}
		games = append(games, g)
	}
	return games, unplayed, nil
}

// recorded is the error of recording what (a pair's rating, a
// scrimmage's end): none when the player was stopped meanwhile, for its
// transaction was undone and the next start plays it again; else err, which
// stops the player.
func recorded(ctx context.Context, err error, what string) error {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ladderPair plays a ladder pair and rates it; a pair the host could not
// play is logged and left unrated, a stop leaves it to be resumed at the
// next start.
func (p *Player) ladderPair(ctx context.Context, pair event.LadderPair) error {
	defer func() {
		p.mu.Lock()
		delete(p.busy, pair.A.Team)
		delete(p.busy, pair.B.Team)
		p.mu.Unlock()
	}()
	start := time.Now()
	games, err := p.playLadder(ctx, pair)
	if ctx.Err() != nil {
		return nil // resumed at the next start
	}
	p.mu.Lock()
	if after := time.Now().Add(ladderPause(time.Since(start), p.LadderShare)); after.After(p.ladderAfter) {
		p.ladderAfter = after
	}
	p.mu.Unlock()
	if err != nil {
		p.Log.Error("ladder pair", "id", pair.ID, "err", err)
		games = nil
	}
	rated, err := p.Store.FinishLadderPair(ctx, pair, games)
	if err != nil {
		return recorded(ctx, err, fmt.Sprintf("rate ladder pair %d", pair.ID))
	}
	p.Log.Info("ladder pair", "id", pair.ID, "teams", []int64{pair.A.Team, pair.B.Team},
		"submissions", []int64{pair.A.Submission, pair.B.Submission}, "opening", pair.Opening, "games", len(games),
		"rated", rated, "took", time.Since(start).Round(time.Millisecond))
	for _, team := range []int64{pair.A.Team, pair.B.Team} {
		if p.Changed != nil {
			p.Changed(team)
		}
	}
	return nil
}

func (p *Player) playLadder(ctx context.Context, pair event.LadderPair) ([]event.Game, error) {
	a, err := p.bot(ctx, pair.A.Submission)
	if err != nil {
		return nil, err
	}
	b, err := p.bot(ctx, pair.B.Submission)
	if err != nil {
		return nil, err
	}
	var openings []rules.Opening
	if pair.Opening != "" {
		i := slices.IndexFunc(p.Openings, func(o rules.Opening) bool { return o.Name == pair.Opening })
		if i < 0 {
			return nil, fmt.Errorf("ladder pair %d starts from opening %q, which [ladder] openings no longer holds", pair.ID, pair.Opening)
		}
		openings = p.Openings[i : i+1]
	}
	dir := filepath.Join(p.Store.Dir, event.LadderDir, fmt.Sprint(pair.ID))
	games, _, err := p.playPair(ctx, event.LadderGame, dir, p.Seed^uint64(pair.ID), event.JobsLadder+4*int(pair.ID), [2]*submission.Bot{a, b},
		[2]event.Side{pair.A, pair.B}, openings)
	return games, err
}

// ladderPause is how long the ladder waits after a pair that took took, to
// take share of the player's time (0 or 1 and above: no wait).
func ladderPause(took time.Duration, share float64) time.Duration {
	if share <= 0 || share >= 1 {
		return 0
	}
	return time.Duration(float64(took) * (1 - share) / share)
}

// SubmissionLabel is how the event's records (a transcript's header) name a
// stored submission: by its id in the event, never by a path of the
// server's.
func SubmissionLabel(id int64) string { return fmt.Sprintf("submission #%d", id) }
