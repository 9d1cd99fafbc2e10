package runner

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Options is one run of a tournament (a first start or a resume).
type Options struct {
	Dir         string
	Config      tournament.Config
	Bots        []*submission.Bot // in Config.Bots order
	Game        rules.Game
	Backend     sandbox.Backend
	Concurrency int
	MaxAttempts int // attempts of a game aborted by the host before it is unplayed
	// MinFree is the free space the tournament directory must keep beyond
	// what the games in flight may write (see waitForSpace); below it no game
	// starts until space is freed. Zero turns the check off.
	MinFree int64
	// SpacePoll is how often a waiting tournament checks the space again
	// (default 5 s).
	SpacePoll    time.Duration
	ArenaVersion string
	Signer       ed25519.PrivateKey
	Labels       map[string]string
	Progress     Progress
	// NoViews leaves out each game's viewer page (ViewHTML): a server that
	// renders it from the transcript when it is asked for needs none, and
	// it is as large as the transcript.
	NoViews bool
	// BlobStore is a directory whose blobs/ the games share (see
	// match.Config.BlobStore); "" keeps each game's blobs its own.
	BlobStore string
	// Remote, when set, spreads the games over workers through this queue
	// instead of playing them here (see playRemote).
	Remote *Exchange
	// JobOffset is added to each game's number in the jobs it is published
	// as: the tournaments sharing a queue (Shared) must give their games
	// numbers no other uses.
	JobOffset int
	// WorkerKey is the key (hex ed25519) a worker was enrolled with: every
	// transcript a worker hands in must be signed with it.
	WorkerKey func(worker string) (string, error)
	// Settled, when set, is told each game that had finished (played or
	// unplayed) when the run starts, then each game as it finishes, one at
	// a time; once it returns true no further game starts (those in play
	// end) and the run ends, the rest of the schedule left pending: a
	// schedule that stops when it has said enough, such as a duel's SPRT.
	// It is not offered with Remote, which publishes every game at once.
	Settled func(r tournament.Record) (enough bool)
	// Metrics, when set, count each game recorded with its turns and each
	// attempt that did not count (see NewMetrics).
	Metrics *metrics.Tournament
	// Watch, when set, is told each game this machine starts to play;
	// the observer it returns (nil: none) follows the game's turns as they
	// are played (a live page). Games played by workers are not watched.
	Watch func(g tournament.Record) match.Observer
}

// leaderEvery is how often the progress line's leader is computed again.
const leaderEvery = 500 * time.Millisecond

// Progress is told how the tournament advances.
type Progress interface {
	Start(total, done int)
	GameDone(r tournament.Record, white, black string, leader string)
	Finish()
}

// Assignments is a Progress that is also told which worker took which game.
type Assignments interface {
	Playing(game int, worker string)
}

// Pairer is implemented by a Progress that is told of each round paired
// as the results decide it (a Swiss round, a bracket's next matches), once
// it is stored and before any of its games is played.
type Pairer interface {
	Paired(games []tournament.Game)
}

// WorkerWaiter is implemented by a Progress that shows why no game is
// played: games are queued and no worker holds one (every waitSaidEvery
// while it lasts).
type WorkerWaiter interface {
	WaitingForWorkers(queued int)
}

// ErrConfigChanged wraps a refusal to resume with another configuration.
var ErrConfigChanged = errors.New("the tournament in this directory was started with another configuration")

// Run plays every game not yet played, then writes the standings and reports.
// Running it again on the same directory resumes: finished games are kept, games
// that were in flight are played again from scratch.
func Run(ctx context.Context, o Options) (summary *tournament.Summary, err error) {
	start := time.Now()
	if o.Settled != nil && o.Remote != nil {
		return nil, errors.New("tournament: a schedule that stops by itself is played on this machine, not by workers")
	}
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.MaxAttempts < 1 {
		o.MaxAttempts = 3
	}
	if len(o.Bots) != len(o.Config.Bots) {
		return nil, errors.New("tournament: bots and configuration disagree")
	}
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "games"), 0o755); err != nil {
		return nil, err
	}
	st, err := tournament.OpenStore(o.Dir, false)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Every result was committed when it was stored, but a database that
		// does not close cleanly is one to look at before trusting it.
		if cerr := st.Close(); cerr != nil && err == nil {
			summary, err = nil, fmt.Errorf("close %s: %w", filepath.Join(o.Dir, tournament.DBFile), cerr)
		}
	}()

	stored, err := st.Config(ctx)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		games, err := o.Config.FirstGames()
		if err != nil {
			return nil, err
		}
		if err := st.Init(ctx, o.Config, games); err != nil {
			return nil, err
		}
	} else if stored.Evidence.Keep == "" {
		// Begun before the evidence policy was stored: it takes today's.
		stored.Evidence = o.Config.Evidence
	}
	if stored != nil {
		if d := tournament.Diff(*stored, o.Config); len(d) > 0 {
			return nil, fmt.Errorf("%w:\n  %s", ErrConfigChanged, strings.Join(d, "\n  "))
		}
	}
	interrupted, err := st.ResetRunning(ctx)
	if err != nil {
		return nil, err
	}
	// Running the same command again plays the games an earlier run left
	// unplayed, with their attempts fresh: the fault that aborted them
	// (a host, a sandbox) may be mended now.
	if n, err := st.ReopenUnplayed(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		slog.Info("tournament: games an earlier run left unplayed are played again", "count", n)
	}
	for _, r := range interrupted {
		// Half a game proves nothing; keep it aside and play it again. It is
		// still evidence of what happened, and the game cannot be played
		// again in its place, so failing to move it stops the run.
		if r.Dir != "" {
			src := filepath.Join(o.Dir, r.Dir)
			if err := keepAside(src, ".interrupted-"+time.Now().UTC().Format("20060102T150405")); err != nil {
				return nil, fmt.Errorf("game %d was interrupted: %w", r.ID, err)
			}
		}
	}

	recs, err := st.Games(ctx)
	if err != nil {
		return nil, err
	}
	done := 0
	var enough bool
	for _, r := range recs {
		if r.Status == tournament.Done || r.Status == tournament.Unplayed {
			done++
			if o.Settled != nil && o.Settled(r) {
				enough = true
			}
		}
	}
	if o.Progress != nil {
		o.Progress.Start(max(len(recs), o.Config.Planned()), done)
	}

	rn := &run{Options: &o, st: st}
	rn.enough.Store(enough)
	return rn.playAll(ctx, start)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// keepAside renames a game directory that must not be played over to
// dir+suffix, or dir+suffix-2, -3, ... when that is taken. A directory that is
// not there is nothing to keep.
func keepAside(dir, suffix string) error {
	_, err := keptAside(dir, suffix)
	return err
}

// keptAside is keepAside, saying where the directory went ("": it was not
// there).
func keptAside(dir, suffix string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	dst := dir + suffix
	for n := 2; ; n++ {
		_, err := os.Lstat(dst)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		dst = fmt.Sprintf("%s%s-%d", dir, suffix, n)
	}
	if err := os.Rename(dir, dst); err != nil {
		return "", fmt.Errorf("keep %s aside: %w", dir, err)
	}
	return dst, nil
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func gameDir(g tournament.Record, bots []tournament.BotEntry) string {
	clean := func(s string) string { return strings.Trim(unsafeChars.ReplaceAllString(s, "-"), "-.") }
	return filepath.Join("games", fmt.Sprintf("%04d-%s-vs-%s", g.ID, clean(bots[g.White].Name), clean(bots[g.Black].Name)))
}

// MatchConfig is the match a claimed game is played as, here or by a worker
// of the tournament named (see playRemote): the one description of a game
// that local play, the job a worker is sent, the check of what it hands
// back and a published final played again (harness/reproduce) all read.
func (o *Options) MatchConfig(g tournament.Record, tournament, dir string) match.Config {
	labels := map[string]string{"org.arenabots.arena.tournament": filepath.Base(o.Dir)}
	maps.Copy(labels, o.Labels)
	// A game from an opening is played under the tournament's rules with
	// the opening's on top: the transcript's rules say where it began.
	set, opening := o.Config.Rules, ""
	if g.Opening > 0 && g.Opening <= len(o.Config.Openings) {
		op := o.Config.Openings[g.Opening-1]
		set, opening = maps.Clone(o.Config.Rules), op.Name
		if set == nil {
			set = map[string]string{}
		}
		maps.Copy(set, op.Rules)
	}
	return match.Config{
		Game: o.Game, Rules: set, Seed: g.Seed,
		White: o.Bots[g.White], Black: o.Bots[g.Black],
		Backend: o.Backend, Limits: o.Config.Limits, OnFault: match.Policy(o.Config.OnFault),
		Dir: dir, ArenaVersion: o.ArenaVersion, Labels: labels, Signer: o.Signer,
		Evidence: o.Config.Evidence, BlobStore: o.BlobStore,
		Job: &transcript.Job{Tournament: tournament, Game: g.ID, Attempt: g.Try(), Pair: g.Pair, Opening: opening},
	}
}

// writeView writes the game's viewer page.
func writeView(dir string) error {
	d, err := view.Build(dir)
	if err != nil {
		return err
	}
	page, err := view.HTML(d)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, tournament.ViewHTML), page, 0o644)
}

// evidence checks that a game's match directory holds what its result rests
// on: a transcript that reads back with an unbroken chain and ends in this
// result, and result.json saying the same. It returns the time the bots' own
// processes ran, summed over the transcript's turns.
func evidence(dir string, res transcript.Result) (times tournament.Times, err error) {
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return times, fmt.Errorf("its transcript does not read back: %w", err)
	}
	var walls []float64
	for _, l := range lines {
		switch l.Type {
		case transcript.TypeTurn:
			var t transcript.Turn
			if err := l.Decode(&t); err != nil {
				return times, fmt.Errorf("its transcript's line %d: %w", l.Seq+1, err)
			}
			times.BotMs += t.WallMs
			walls = append(walls, t.WallMs)
		case transcript.TypeFooter:
			var f transcript.Footer
			if err := l.Decode(&f); err != nil {
				return times, fmt.Errorf("its transcript's footer: %w", err)
			}
			if f.Result.Winner != res.Winner || f.Result.Reason != res.Reason {
				return times, fmt.Errorf("its transcript ends in %s (%s), the match returned %s (%s)", f.Result.Winner, f.Result.Reason, res.Winner, res.Reason)
			}
		}
	}
	if err := resultFileSays(dir, res); err != nil {
		return times, err
	}
	times.TurnMs = stats.Median(walls)
	return times, nil
}

// maxResultFile is the most a match directory's result.json may weigh: it
// names a winner, a reason and the two bots.
const maxResultFile = 1 << 20

// resultFileSays checks that a match directory's result.json names the
// winner and reason res does (the transcript's, or the match's as it
// returned): a result.json that says otherwise was edited.
func resultFileSays(dir string, res transcript.Result) error {
	f, err := os.Open(filepath.Join(dir, transcript.ResultFile))
	if err != nil {
		return fmt.Errorf("its %s: %w", transcript.ResultFile, err)
	}
	defer f.Close() // read only
	data, err := io.ReadAll(io.LimitReader(f, maxResultFile+1))
	if err != nil {
		return fmt.Errorf("its %s: %w", transcript.ResultFile, err)
	}
	if len(data) > maxResultFile {
		return fmt.Errorf("its %s is larger than %d bytes", transcript.ResultFile, maxResultFile)
	}
	var written transcript.Result
	if err := json.Unmarshal(data, &written); err != nil {
		return fmt.Errorf("its %s: %w", transcript.ResultFile, err)
	}
	if written.Winner != res.Winner || written.Reason != res.Reason {
		return fmt.Errorf("its %s says %s (%s), its transcript %s (%s)", transcript.ResultFile, written.Winner, written.Reason, res.Winner, res.Reason)
	}
	return nil
}
