package tournament

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Options is one run of a tournament (a first start or a resume).
type Options struct {
	Dir          string
	Config       Config
	Bots         []*submission.Bot // in Config.Bots order
	Game         rules.Game
	Backend      sandbox.Backend
	Concurrency  int
	MaxAttempts  int // attempts of a game aborted by the host before it is unplayed
	ArenaVersion string
	Signer       ed25519.PrivateKey
	Labels       map[string]string
	Progress     Progress
}

// Progress is told how the tournament advances.
type Progress interface {
	Start(total, done int)
	GameDone(r Record, white, black string, leader string)
	Finish()
}

// Summary is what a run ends with.
type Summary struct {
	Total, Done, Unplayed, Pending int
	Standings                      []Row
	Wall                           time.Duration
	GameTime                       time.Duration // the played games' durations, summed
	BotTime                        time.Duration // inside the bots' processes, summed over all games
	Interrupted                    bool
}

// ErrConfigChanged wraps a refusal to resume with another configuration.
var ErrConfigChanged = errors.New("the tournament in this directory was started with another configuration")

// Run plays every game not yet played, then writes the standings and reports.
// Running it again on the same directory resumes: finished games are kept, games
// that were in flight are played again from scratch.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.MaxAttempts < 1 {
		o.MaxAttempts = 3
	}
	if len(o.Bots) != len(o.Config.Bots) {
		return nil, errors.New("tournament: bots and configuration disagree")
	}
	if err := CheckTieBreaks(o.Config.TieBreaks); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "games"), 0o755); err != nil {
		return nil, err
	}
	st, err := OpenStore(o.Dir, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()

	stored, err := st.Config(ctx)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		challenger := -1
		for i, b := range o.Config.Bots {
			if b.Name == o.Config.Challenger {
				challenger = i
			}
		}
		games, err := Schedule(o.Config.Format, len(o.Config.Bots), challenger, o.Config.GamesPerPair, o.Config.Seed)
		if err != nil {
			return nil, err
		}
		if err := st.Init(ctx, o.Config, games); err != nil {
			return nil, err
		}
	} else if d := Diff(*stored, o.Config); len(d) > 0 {
		return nil, fmt.Errorf("%w:\n  %s", ErrConfigChanged, strings.Join(d, "\n  "))
	}
	interrupted, err := st.ResetRunning(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range interrupted {
		// Half a game proves nothing; keep it aside and play it again.
		if r.Dir != "" {
			src := filepath.Join(o.Dir, r.Dir)
			os.Rename(src, src+".interrupted-"+time.Now().UTC().Format("20060102T150405"))
		}
	}

	recs, err := st.Games(ctx)
	if err != nil {
		return nil, err
	}
	done := 0
	for _, r := range recs {
		if r.Status == Done || r.Status == Unplayed {
			done++
		}
	}
	if o.Progress != nil {
		o.Progress.Start(len(recs), done)
	}

	// Reuse each bot's sandbox from one game to its next: creating containers is
	// most of what a short game costs.
	pool := sandbox.NewPool(o.Backend)
	defer pool.Close(context.WithoutCancel(ctx))
	o.Backend = pool

	var mu sync.Mutex // claims and progress
	var wg sync.WaitGroup
	errs := make(chan error, o.Concurrency)
	for w := 0; w < o.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				next, ok, err := st.Claim(ctx, func(r Record) string { return gameDir(r, o.Config.Bots) })
				mu.Unlock()
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					return
				}
				if err := o.play(ctx, st, next, &mu); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if o.Progress != nil {
		o.Progress.Finish()
	}
	for err := range errs {
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
	}
	sum, err := Report(context.WithoutCancel(ctx), o.Dir)
	if err != nil {
		return nil, err
	}
	sum.Wall = time.Since(start)
	sum.Interrupted = ctx.Err() != nil
	return sum, nil
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func gameDir(g Record, bots []BotEntry) string {
	clean := func(s string) string { return strings.Trim(unsafeChars.ReplaceAllString(s, "-"), "-.") }
	return filepath.Join("games", fmt.Sprintf("%04d-%s-vs-%s", g.ID, clean(bots[g.White].Name), clean(bots[g.Black].Name)))
}

// play runs one claimed game and records it.
func (o *Options) play(ctx context.Context, st *Store, g Record, mu *sync.Mutex) error {
	rel := g.Dir
	dir := filepath.Join(o.Dir, rel)
	if _, err := os.Stat(dir); err == nil {
		// An earlier attempt aborted by the host: keep it as evidence.
		os.Rename(dir, fmt.Sprintf("%s.attempt-%d", dir, g.Attempts))
	}
	labels := map[string]string{"org.arenabots.arena.tournament": filepath.Base(o.Dir)}
	for k, v := range o.Labels {
		labels[k] = v
	}
	res, err := match.Run(ctx, match.Config{
		Game: o.Game, Rules: o.Config.Rules, Seed: g.Seed,
		White: o.Bots[g.White], Black: o.Bots[g.Black],
		Backend: o.Backend, Limits: o.Config.Limits, OnFault: match.Policy(o.Config.OnFault),
		Dir: dir, ArenaVersion: o.ArenaVersion, Labels: labels, Signer: o.Signer,
	})
	if err != nil {
		return fmt.Errorf("game %d: %w", g.ID, err)
	}
	wctx := context.WithoutCancel(ctx)
	if res.Reason == transcript.ReasonAborted {
		if ctx.Err() != nil {
			// The operator stopped the tournament: not the game's fault, not an attempt.
			os.RemoveAll(dir)
			return st.Release(wctx, g.ID)
		}
		status, err := st.Abort(wctx, g.ID, res.AbortReason, o.MaxAttempts)
		if err != nil {
			return err
		}
		g.Status, g.AbortReason = status, res.AbortReason
		if status == Unplayed {
			o.report(st, g, mu)
		}
		return nil
	}
	if d, err := view.Build(dir); err == nil {
		if page, err := view.HTML(d); err == nil {
			os.WriteFile(filepath.Join(dir, "match.html"), page, 0o644)
		}
	}
	botMs := botTime(dir)
	if err := st.Finish(wctx, g.ID, res, rel, botMs); err != nil {
		return err
	}
	g.Status, g.Winner, g.Reason, g.Plies = Done, res.Winner, res.Reason, res.Plies
	o.report(st, g, mu)
	return nil
}

func (o *Options) report(st *Store, g Record, mu *sync.Mutex) {
	if o.Progress == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	leader := ""
	if recs, err := st.Games(context.Background()); err == nil {
		rows := Standings(names(o.Config.Bots), outcomes(recs), o.Config.Scoring, o.Config.TieBreaks, o.Config.Seed)
		if len(rows) > 0 {
			leader = fmt.Sprintf("%s %g pts", rows[0].Name, rows[0].Points)
		}
	}
	o.Progress.GameDone(g, o.Config.Bots[g.White].Name, o.Config.Bots[g.Black].Name, leader)
}

// botTime sums the time the bots' own processes ran in a match.
func botTime(dir string) float64 {
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return 0
	}
	total := 0.0
	for _, l := range lines {
		var t transcript.Turn
		if l.Type == transcript.TypeTurn && l.Decode(&t) == nil {
			total += t.WallMs
		}
	}
	return total
}

// outcomes turns played games into scoring input.
func outcomes(recs []Record) []Outcome {
	var out []Outcome
	for _, r := range recs {
		if r.Status != Done {
			continue
		}
		o := Outcome{White: r.White, Black: r.Black, Winner: -1}
		switch r.Winner {
		case transcript.WinnerWhite:
			o.Winner = r.White
		case transcript.WinnerBlack:
			o.Winner = r.Black
		case transcript.WinnerDraw:
		default:
			continue
		}
		out = append(out, o)
	}
	return out
}
