package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// A worker's result is re-judged before it counts: its transcript replays,
// is signed by the worker's key and is the game that was handed out. That
// proves the worker's harness wrote it, not that the programs handed out
// made its moves: a worker could play other programs under the same names
// and hashes. So the coordinator plays a sample of every worker's games
// again itself, from the same hand-out (the programs, seed, rules and
// limits: the one match description, matchConfig), and compares the two
// games turn by turn (transcript.Compare). Each worker's first results are
// always checked, then a fraction the organizer sets (Checks); which ones
// is drawn after the result is in, so a worker cannot tell which of its
// games will be checked. A game whose moves differ where the coordinator's
// own play, twice, agrees is a lie: the worker is suspended, the game
// played again, and every game of the worker counted unchecked is played
// again too. A game that does not reproduce on the coordinator itself (a
// bot that is not deterministic), or that differs only where a host's
// speed or memory decides (a timeout), proves nothing of the worker: the
// worker's result counts, and the organizer is told.

// Checks say how often the coordinator checks a worker's result by playing
// its game again.
type Checks struct {
	// Fraction of each worker's results checked after its first
	// FirstChecked, drawn at random: 0 none, 1 every one.
	Fraction float64
	// Pick, when set, decides instead whether a worker's nth result (1 for
	// its first) is checked.
	Pick func(worker string, nth int) bool
}

// FirstChecked is how many of each worker's first results (since the
// coordinator started) are always checked.
const FirstChecked = 3

// DefaultCheckFraction is the fraction of results checked after a
// worker's first ones.
const DefaultCheckFraction = 0.1

// Validate refuses a fraction that is not one.
func (c Checks) Validate() error {
	if c.Fraction < 0 || c.Fraction > 1 || c.Fraction != c.Fraction {
		return tournament.ConfigErrorf("the fraction of results checked: want 0 to 1, got %v", c.Fraction)
	}
	return nil
}

// sample counts a worker's result judged sound and says whether the
// coordinator checks it.
func (x *Exchange) sample(worker string) bool {
	x.mu.Lock()
	if x.results == nil {
		x.results = map[string]int{}
	}
	x.results[worker]++
	nth := x.results[worker]
	x.mu.Unlock()
	if x.Checks.Pick != nil {
		return x.Checks.Pick(worker, nth)
	}
	return nth <= FirstChecked || rand.Float64() < x.Checks.Fraction
}

// What a check found (checkOutcome.verdict).
const (
	checkAgrees = iota // the same game: the result counts, checked
	checkUnsure        // proves nothing of the worker: the result counts, unchecked
	checkLie           // the worker's game is not the hand-out's: refused
)

// checkOutcome is what the coordinator's own play of a worker's game found.
type checkOutcome struct {
	game    int // the job's number
	verdict int
	why     string
}

// checkDir is where the coordinator plays its nth check of a worker's game
// in dir.
func checkDir(dir string, n int) string { return fmt.Sprintf("%s.check-%d", dir, n) }

// checkGame plays the game of cfg (as it was handed out) on this machine,
// and compares it with the worker's in dir; a difference is played a
// second time, to tell a worker's lie from a bot that does not reproduce.
// The coordinator's plays are kept beside dir when they differ, as the
// evidence of what it found, and removed when they agree.
func (rn *run) checkGame(ctx context.Context, cfg match.Config, dir string) checkOutcome {
	worker, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return checkOutcome{verdict: checkUnsure, why: "its transcript does not read back: " + err.Error()}
	}
	play := func(n int) ([]transcript.Line, error) {
		d := checkDir(dir, n)
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
		c := cfg
		c.Dir, c.Backend, c.Signer, c.Observer, c.BlobStore = d, rn.Backend, rn.Signer, nil, ""
		res, err := match.Run(ctx, c)
		if err != nil {
			return nil, err
		}
		if res.Reason == transcript.ReasonAborted {
			return nil, fmt.Errorf("aborted on this machine: %s", res.AbortReason)
		}
		return transcript.ReadFile(filepath.Join(d, transcript.FileName))
	}
	unsure := func(why string) checkOutcome {
		return checkOutcome{verdict: checkUnsure, why: why}
	}
	mine, err := play(1)
	if err != nil {
		return unsure("the coordinator could not play it: " + err.Error())
	}
	d, err := transcript.Compare(worker, mine)
	if err != nil {
		return unsure(err.Error())
	}
	if d == nil {
		if err := os.RemoveAll(checkDir(dir, 1)); err != nil {
			rn.warn(fmt.Sprintf("remove the check of %s", filepath.Base(dir)), err)
		}
		return checkOutcome{verdict: checkAgrees}
	}
	if d.Resource {
		return unsure("it differs from the coordinator's play only where a host's speed or memory decides: " + d.String())
	}
	again, err := play(2)
	if err != nil {
		return unsure("the coordinator could not play it again: " + err.Error())
	}
	if d2, err := transcript.Compare(mine, again); err != nil {
		return unsure(err.Error())
	} else if d2 != nil {
		return unsure(fmt.Sprintf("the game does not reproduce on the coordinator itself (a bot that is not deterministic?): its two plays differ: %s", d2))
	}
	return checkOutcome{verdict: checkLie, why: fmt.Sprintf("its moves are not those of the programs it was sent: %s, where the coordinator's own play of the same hand-out, twice, agrees", d)}
}

// keepChecks moves the coordinator's plays of a game (checkDir) beside
// where the game's refused result was kept aside (aside).
func keepChecks(dir, aside string) error {
	var errs []error
	for n := 1; n <= 2; n++ {
		if err := os.Rename(checkDir(dir, n), checkDir(aside, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
