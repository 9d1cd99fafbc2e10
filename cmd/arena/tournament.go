package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
)

// loadBots reads the participants: each argument is a bot (NAME=PATH names
// it), or a single directory argument holds one bot per entry.
func loadBots(c *cli.Context, args []string, g rules.Game) ([]*submission.Bot, error) {
	if len(args) == 1 {
		if fi, err := os.Stat(args[0]); err == nil && fi.IsDir() {
			if args, err = submission.InDirs(args); err != nil {
				return nil, usagef("%v", err)
			}
		}
	}
	named, err := submission.NameBots(args)
	if err != nil {
		return nil, usagef("%v", err)
	}
	var bots []*submission.Bot
	seen := map[string]string{}
	for i, a := range named {
		b, err := loadBot(c, "bot "+args[i], a, g)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[b.Name]; dup {
			return nil, usagef("%s and %s are the same bot; name it once", prev, args[i])
		}
		seen[b.Name] = args[i]
		bots = append(bots, b)
	}
	if len(bots) < 2 {
		return nil, usagef("a tournament needs at least 2 bots, got %d", len(bots))
	}
	return bots, nil
}

func tournamentCommand() *cli.Command {
	return &cli.Command{
		Name:      "tournament",
		Usage:     "play a whole tournament and compute the standings",
		UsageText: "arena tournament --out DIR [options] BOT... | BOTS_DIR",
		Description: `Plays every scheduled game, each an official match (see arena match), several
at once with --concurrency, and stores every result in DIR/tournament.db as it
happens. Run the same command again after an interruption (Ctrl-C, a killed
process, a power loss) to resume: finished games are kept, games in flight are
played again from scratch. A changed configuration is refused, naming what
differs. A game aborted by the host or sandbox is retried, then reported
unplayed (--max-attempts hosts aborted it; a worker that aborts it again
counts once); it is never scored as a loss. A run with games unplayed exits
1; the same command again plays exactly those. A worker whose result is
refused for what it claims is suspended at once (arena workers readmit lets
it in again) and the game goes to another worker, its attempts unspent.

BOTs are executables, directories or submission ZIPs; a single directory
argument holds one bot per entry. A bot's name is its file's or directory's
name; when two paths give the same name (teamA/bot.py, teamB/bot.py), their
directories' names (teamA, teamB); NAME=PATH gives it one. The schedule is a pure function of the bots,
the format and --seed, and is stored before the first game.

Writes DIR/standings.csv, standings.json, crosstable.txt and report.html (with
links to every game's transcript and viewer). 'arena standings DIR' prints the
standings of a finished or running tournament.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "tournament directory (required; reuse it to resume)", Required: true},
			&cli.StringFlag{Name: "format", Value: tournament.RoundRobin, Usage: "round-robin, gauntlet, swiss (a few rounds, each bot against one of about its score, never twice), knockout (a bracket seeded in the order given: 1 against the last...), double-elimination (out at a second loss), stages (a Swiss qualifier whose top --advance play a --then stage) or rating (plays where ranks are least sure, until told apart or --budget)"},
			&cli.IntFlag{Name: "rounds", Usage: "with --format swiss: its rounds; stages: its qualifier's", DefaultText: "ceil(log2 bots) + 2"},
			&cli.IntFlag{Name: "advance", Usage: "with --format stages: how many of the qualifier's top bots play the second stage", DefaultText: "16, or every bot of fewer"},
			&cli.StringFlag{Name: "then", Value: tournament.DoubleElimination, Usage: "with --format stages: the second stage, round-robin or double-elimination"},
			&cli.IntFlag{Name: "budget", Usage: "with --format rating: the games it plays at most", DefaultText: "twice a Swiss tournament's"},
			&cli.StringFlag{Name: "challenger", Usage: "with --format gauntlet: the bot (by name) that plays everyone"},
			&cli.IntFlag{Name: "games-per-pair", Value: 2, Usage: "games each pair plays, colours alternating"},
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "games played at once"},
			&cli.Uint64Flag{Name: "seed", Usage: "tournament seed: the schedule, every game's seed and the random tie-break (default: random, stored)"},
			&cli.StringFlag{Name: "points", Value: "3,1,0", Usage: "points for a win, a draw and a loss"},
			&cli.StringFlag{Name: "tie-breaks", Value: strings.Join(tournament.DefaultTieBreaks(), ","), Usage: "tie-breaks in order: sonneborn-berger, direct-encounter, wins, buchholz, buchholz-cut1, random (a Swiss tournament's default: " + strings.Join(tournament.SwissTieBreaks(), ",") + ")"},
			&cli.StringFlag{Name: "playoff", Usage: "places that bots level after every tie-break but the lot play for (a side-swapped pair, then single deciders), such as 1,8; none: the lot decides", DefaultText: "first place, and a stages tournament's cut"},
			&cli.IntFlag{Name: "max-attempts", Value: 3, Usage: "attempts of a game aborted by the host before it is reported unplayed"},
			&cli.StringFlag{Name: "min-free", Value: "1g", Usage: "free space the tournament directory keeps beyond what the games in flight may write (their evidence budget plus 32 MiB each); below it no game starts until space is freed (0: no check)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress output"},
			metricsFlag(),
			signingKeyFlag(),
		}, append(append(matchFlags(), openingFlags()...), append(evidenceFlags("64m"), distribFlags()...)...)...),
		Action: runTournament,
	}
}

func runTournament(c *cli.Context) error {
	dir := c.String("out")
	if c.NArg() == 0 {
		return usagef("name the bots: arena tournament --out DIR BOT... (or one directory holding them)")
	}
	g, _, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	evidence, err := readEvidence(c)
	if err != nil {
		return err
	}
	bots, err := loadBots(c, c.Args().Slice(), g)
	if err != nil {
		return err
	}
	sc, err := tournament.ParseScoring(c.String("points"))
	if err != nil {
		return usagef("--points: %v", err)
	}
	tbs := []string{}
	if s := strings.TrimSpace(c.String("tie-breaks")); s != "" {
		tbs = strings.Split(s, ",")
	}
	if !c.IsSet("tie-breaks") {
		tbs = tournament.TieBreaksFor(c.String("format"))
	}
	playoff, err := tournament.ParsePlayoff(c.String("playoff"))
	if err != nil {
		return usagef("--playoff: %v", err)
	}
	var minFree int64
	if v := c.String("min-free"); v != "0" {
		if minFree, err = units.RAMInBytes(v); err != nil || minFree < 0 {
			return usagef("--min-free: want a size such as 1g, or 0 for no check, got %q", v)
		}
	}
	if c.Int("concurrency") < 1 || c.Int("max-attempts") < 1 {
		return usagef("--concurrency and --max-attempts must be at least 1")
	}
	o, closer, err := runnerOptions(c, dir, bots, evidence, func(cfg *tournament.Config) error {
		cfg.Format, cfg.Challenger, cfg.GamesPerPair, cfg.Rounds = c.String("format"), c.String("challenger"), c.Int("games-per-pair"), c.Int("rounds")
		cfg.Advance, cfg.Budget = c.Int("advance"), c.Int("budget")
		if cfg.Format == tournament.Stages {
			cfg.Then = c.String("then")
			if !c.IsSet("advance") {
				cfg.Advance = tournament.DefaultAdvance(len(cfg.Bots))
			}
		}
		cfg.Scoring, cfg.TieBreaks, cfg.Playoff = sc, tbs, playoff
		if err := cfg.Validate(); err != nil {
			return usagef("%v", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer closer()
	co, err := coordinator(c, dir)
	if err != nil {
		return err
	}
	var remote *runner.Exchange
	if co != nil {
		defer co.Close()
		remote = co.Sole()
	}
	var prog runner.Progress
	if !c.Bool("quiet") {
		if isTerminal(c.App.Writer) {
			prog = &barProgress{w: c.App.Writer}
		} else {
			prog = &lineProgress{w: c.App.Writer, start: time.Now()}
		}
	}
	o.MinFree, o.Progress, o.Remote, o.WorkerKey = minFree, prog, remote, runner.WorkerKey(dir)
	if addr := c.String("metrics-listen"); addr != "" {
		m, stop, err := runner.ServeMetrics(c.Context, addr, dir, remote, slog.Default())
		if err != nil {
			return err
		}
		defer stop()
		o.Metrics = m
	}
	sum, err := runner.Run(c.Context, o)
	if errors.Is(err, runner.ErrConfigChanged) {
		return usagef("%v\nuse another --out directory for a new tournament", err)
	}
	if err != nil {
		return err
	}
	return printSummary(c, dir, sum)
}

// printSummary prints what a run of a tournament's games came to: the
// standings, the games played and where the report is; an interrupted run
// fails with how to resume it.
func printSummary(c *cli.Context, dir string, sum *tournament.Summary) error {
	w := c.App.Writer
	fmt.Fprintf(w, "\n%s%s", tournament.String(sum.Standings, sum.TieBreaks), tournament.RanksLegend)
	fmt.Fprintf(w, "\n%d of %d games played", sum.Done, sum.Total)
	if sum.Unplayed > 0 {
		fmt.Fprintf(w, ", %d unplayed (aborted by the host or sandbox; not scored)", sum.Unplayed)
	}
	if sum.Wall > 0 && sum.Done > 0 {
		fmt.Fprintf(w, "; this run %v, %.1f games/min", sum.Wall.Round(100*time.Millisecond), float64(sum.Done)/sum.Wall.Minutes())
	}
	if sum.GameTime > 0 {
		fmt.Fprintf(w, "; the bots thought for %.0f%% of the games' time, the rest was the sandbox and the referee", 100*float64(sum.BotTime)/float64(sum.GameTime))
	}
	fmt.Fprintf(w, "\nreport: %s\n", filepath.Join(dir, tournament.ReportHTML))
	if len(sum.Warnings) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "arena: %s (the results stand):\n", words.Plural(len(sum.Warnings), "warning"))
		for _, line := range sum.Warnings {
			fmt.Fprintf(c.App.ErrWriter, "  %s\n", line)
		}
	}
	return summaryExit(sum)
}

// summaryExit is how a tournament's run ends for the shell: 0 every game
// played; 1 interrupted, or games left unplayed (aborted on every host they
// were tried on), which the same command plays again.
func summaryExit(sum *tournament.Summary) error {
	switch {
	case sum.Interrupted || sum.Pending > 0:
		return failf("tournament interrupted with %s to play; run the same command to resume", words.Plural(sum.Pending, "game"))
	case sum.Unplayed > 0:
		return failf("%s of %d unplayed: each was aborted by the host or sandbox on every try (the report says why); once that is mended, run the same command again: it plays exactly those",
			words.Plural(sum.Unplayed, "game"), sum.Total)
	}
	return nil
}

func standingsCommand() *cli.Command {
	return &cli.Command{
		Name:      "standings",
		Usage:     "print the standings of a finished or running tournament",
		UsageText: "arena standings [--json] DIR",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print as JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("standings takes one tournament directory")
			}
			s, err := tournament.Load(c.Context, c.Args().First())
			if err != nil {
				return usagef("%v", err)
			}
			// An event's final: its teams as they are named now.
			if s.Summary.Standings, err = event.WithTeamNames(c.Context, c.Args().First(), s.Summary.Standings); err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Games     map[string]int   `json:"games"`
					Standings []tournament.Row `json:"standings"`
				}{map[string]int{"total": s.Summary.Total, "done": s.Summary.Done, "unplayed": s.Summary.Unplayed, "pending": s.Summary.Pending}, s.Summary.Standings})
			}
			fmt.Fprint(c.App.Writer, tournament.String(s.Summary.Standings, s.Config.TieBreaks), tournament.RanksLegend)
			fmt.Fprintf(c.App.Writer, "\n%d of %d games played, %d unplayed, %d to play\n", s.Summary.Done, s.Summary.Total, s.Summary.Unplayed, s.Summary.Pending)
			return nil
		},
	}
}

func gameLine(r tournament.Record, white, black string) string {
	name := fmt.Sprintf("game %d %s vs %s", r.ID, white, black)
	if r.Playoff > 0 {
		name = fmt.Sprintf("game %d (playoff) %s vs %s", r.ID, white, black)
	}
	switch r.Status {
	case tournament.Unplayed:
		return fmt.Sprintf("%s: unplayed (%s)", name, r.AbortReason)
	}
	res := "draw"
	switch r.Winner {
	case transcript.WinnerWhite:
		res = white + " wins"
	case transcript.WinnerBlack:
		res = black + " wins"
	}
	line := fmt.Sprintf("%s: %s (%s, %s)", name, res, r.Reason, words.Plural(r.Plies, "play ply"))
	if r.Worker != "" {
		line += " on " + r.Worker
	}
	return line
}

// lineProgress prints one line per finished game (not a terminal).
type lineProgress struct {
	w           io.Writer
	start       time.Time
	total, done int
	mu          sync.Mutex
}

func (p *lineProgress) Start(total, done int) {
	p.total, p.done = total, done
	fmt.Fprintf(p.w, "tournament: %s, %d already played\n", words.Plural(total, "game"), done)
}

func (p *lineProgress) GameDone(r tournament.Record, white, black, leader string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	fmt.Fprintf(p.w, "[%d/%d] %s; leader %s\n", p.done, p.total, gameLine(r, white, black), leader)
}

func (p *lineProgress) Finish() {}

// Paired counts the games a round adds past those planned (a playoff, a
// bracket's deciders).
func (p *lineProgress) Paired(games []tournament.Game) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = max(p.total, lastID(games))
}

// lastID is the highest id of games (0: none): the games there are once
// they are stored.
func lastID(games []tournament.Game) int {
	n := 0
	for _, g := range games {
		n = max(n, g.ID)
	}
	return n
}

func (p *lineProgress) Playing(game int, worker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "game %d: %s plays it\n", game, worker)
}

func (p *lineProgress) WaitingForSpace(dir string, free, need int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, spaceLine(dir, free, need))
}

func (p *lineProgress) WaitingForWorkers(queued int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, workersLine(queued))
}

// workersLine says why no game is played.
func workersLine(queued int) string {
	return fmt.Sprintf("waiting for a worker: %s queued, none handed out (a game's deadline runs from its hand-out: nothing expires while it waits)", words.Plural(queued, "game"))
}

// spaceLine says why no game starts.
func spaceLine(dir string, free, need int64) string {
	return fmt.Sprintf("waiting: %s has %s free, and a game starts only with %s free (--min-free plus what the games in flight may write); free some space and the tournament goes on (Ctrl-C stops it; run it again to resume)",
		dir, units.BytesSize(float64(free)), units.BytesSize(float64(need)))
}

// barProgress draws a progress bar with games done, ETA and the leader.
type barProgress struct {
	w       io.Writer
	p       *mpb.Progress
	bar     *mpb.Bar
	leader  string
	playing map[int]string // game -> worker, with workers
	total   int
	mu      sync.Mutex
}

// Playing shows which worker plays which game.
func (p *barProgress) Playing(game int, worker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.playing == nil {
		p.playing = map[int]string{}
	}
	p.playing[game] = worker
}

// playingLine lists the games in play on workers: "w1 #3, w2 #5".
func (p *barProgress) playingLine() string {
	games := make([]int, 0, len(p.playing))
	for g := range p.playing {
		games = append(games, g)
	}
	sort.Ints(games)
	var parts []string
	for _, g := range games {
		parts = append(parts, fmt.Sprintf("%s #%d", p.playing[g], g))
	}
	return strings.Join(parts, ", ")
}

func (p *barProgress) Start(total, done int) {
	p.p, p.total = mpb.New(mpb.WithOutput(p.w), mpb.WithWidth(40)), total
	p.bar = p.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("games "), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Name(" eta "), decor.AverageETA(decor.ET_STYLE_GO),
			decor.Any(func(decor.Statistics) string {
				p.mu.Lock()
				defer p.mu.Unlock()
				out := ""
				if p.leader != "" {
					out = "  leader: " + p.leader
				}
				if len(p.playing) > 0 {
					out += "  playing: " + p.playingLine()
				}
				return out
			})))
	p.bar.SetCurrent(int64(done))
	p.bar.DecoratorAverageAdjust(time.Now())
}

func (p *barProgress) GameDone(r tournament.Record, white, black, leader string) {
	p.mu.Lock()
	p.leader = leader
	delete(p.playing, r.ID)
	p.mu.Unlock()
	fmt.Fprintln(p.p, gameLine(r, white, black))
	p.bar.Increment()
}

// Paired grows the bar by the games a round adds past those planned.
func (p *barProgress) Paired(games []tournament.Game) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := lastID(games); n > p.total {
		p.total = n
		p.bar.SetTotal(int64(n), false)
	}
}

func (p *barProgress) WaitingForSpace(dir string, free, need int64) {
	fmt.Fprintln(p.p, spaceLine(dir, free, need))
}

func (p *barProgress) WaitingForWorkers(queued int) {
	fmt.Fprintln(p.p, workersLine(queued))
}

func (p *barProgress) Finish() {
	if !p.bar.Completed() {
		p.bar.Abort(false)
	}
	p.p.Wait()
}

// openingFlags choose the openings a tournament's (or a duel's) pairs start
// from.
func openingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "openings", Usage: "openings the pairs start from, each played from both sides: a file (chess: FEN or EPD lines, or PGN games; ACM 6x6: positions; checkers: moves in standard notation or PDN FENs) or a deck of the game's (checkers: acf3, the ACF three-move ballots)"},
		&cli.IntFlag{Name: "opening-plies", Usage: "with PGN openings: the position after this many half-moves (0: each game's last)"},
		&cli.StringFlag{Name: "opening-order", Value: rules.Sequential, Usage: "sequential, or random (shuffled by the seed)"},
	}
}

// readOpenings loads --openings for game g under its rule options, ordered
// by seed; none when the flag is not given.
func readOpenings(c *cli.Context, g rules.Game, opts map[string]string, seed uint64) ([]rules.Opening, error) {
	spec := c.String("openings")
	if spec == "" {
		if c.IsSet("opening-plies") || c.IsSet("opening-order") {
			return nil, usagef("--opening-plies and --opening-order are for --openings")
		}
		return nil, nil
	}
	list, err := rules.LoadOpenings(g, spec, c.Int("opening-plies"), c.String("opening-order"), seed, opts)
	if err != nil {
		return nil, usagef("--openings: %v", err)
	}
	return list, nil
}

// runnerOptions are the tournament runner's options for the bots of a
// command that feeds it (arena tournament, arena duel), from its flags: the
// seed given or the one stored in dir, the signing key, the sandbox and the
// match settings, the openings, then shape's part of the configuration
// (checked before anything is built), and the bots built once if handed in
// as source. The closer releases the sandbox.
func runnerOptions(c *cli.Context, dir string, bots []*submission.Bot, evidence transcript.Evidence, shape func(*tournament.Config) error) (runner.Options, func(), error) {
	var given *uint64
	if c.IsSet("seed") {
		s := c.Uint64("seed")
		given = &s
	}
	seed, err := runner.SeedFor(c.Context, dir, given)
	if err != nil {
		return runner.Options{}, nil, err
	}
	key, err := signer(c)
	if err != nil {
		return runner.Options{}, nil, err
	}
	ms, err := readMatchSettings(c)
	if err != nil {
		return runner.Options{}, nil, err
	}
	fail := func(err error) (runner.Options, func(), error) {
		ms.closer()
		return runner.Options{}, nil, err
	}
	cfg := runner.NewConfig(bots, ms.Resolved, ms.backend, c.String("image"))
	cfg.Seed, cfg.Evidence = seed, evidence
	if cfg.Openings, err = readOpenings(c, ms.Game, cfg.Rules, seed); err != nil {
		return fail(err)
	}
	if err := shape(&cfg); err != nil {
		return fail(err)
	}
	b, err := newBuilder(c, ms.backend, ms.Limits, nil)
	if err != nil {
		return fail(err)
	}
	if err := readyBots(c, b, bots); err != nil {
		return fail(err)
	}
	cfg.Bots = runner.Entries(bots)
	return runner.Options{Dir: dir, Config: cfg, Bots: bots, Game: ms.Game, Backend: ms.backend,
		Concurrency: c.Int("concurrency"), MaxAttempts: c.Int("max-attempts"),
		ArenaVersion: arenaVersion(), Signer: key}, ms.closer, nil
}
