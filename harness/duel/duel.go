// Package duel compares two bots, a baseline A and a candidate B: side-
// swapped pairs of games (each pair from one opening, or one seed) played
// by the tournament runner until a number of pairs or until a sequential
// probability ratio test decides whether B is stronger than A, with Elo,
// its interval, LOS and the pentanomial counts as it goes.
//
// It is a schedule, never a second way of playing: every game is the
// tournament runner's (its sandbox pool, retries, evidence and SQLite, so a
// duel resumes where it stopped). It must never score a game the runner did
// not record, nor count a pair one of whose games was not played.
package duel

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/tournament"
)

// Options are a duel: Run plays Tournament's two bots, A (the first) and B.
type Options struct {
	// Tournament is the runner's options; Run sets the schedule (two bots,
	// 2·Pairs games in side-swapped pairs) and the stop.
	Tournament runner.Options
	// Pairs is the most pairs played.
	Pairs int
	// SPRT, when set, stops the duel as soon as it decides.
	SPRT *stats.SPRT
	// Progress is told the standing after each complete pair.
	Progress func(Status)
}

// Status is where a duel stands, from B's side.
type Status struct {
	Pairs    stats.Penta // complete pairs by B's points
	Games    stats.WDL   // B's games in complete pairs
	Estimate stats.Estimate
	// LLR is the SPRT's log-likelihood ratio and Lower, Upper its bounds
	// (with an SPRT).
	LLR, Lower, Upper float64
	Decision          stats.Decision
	// Unpaired counts pairs left out because one of their games was not
	// played (aborted by the host every time it was tried).
	Unpaired int
}

// ErrUndecided is the end of a duel whose SPRT did not decide within its
// pairs.
var ErrUndecided = errors.New("the SPRT did not decide within the pairs played")

// tally counts games into pairs as the runner settles them.
type tally struct {
	mu      sync.Mutex
	o       *Options
	partial map[int]float64 // pair -> B's points in its first settled game
	lost    map[int]bool    // pairs with an unplayed game
	status  Status
	b       int  // B's index in the schedule
	live    bool // the games finished before this run have been counted
}

// progress tells Options.Progress of pairs completed in this run, once the
// runner has counted the games of earlier ones (it calls Start then).
type progress struct{ t *tally }

func (p progress) Start(total, done int) {
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	p.t.live = true
	if p.t.o.Progress != nil && p.t.status.Pairs.Pairs() > 0 {
		p.t.o.Progress(p.t.status)
	}
}

func (progress) GameDone(tournament.Record, string, string, string) {}
func (progress) Finish()                                            {}

// settled counts one finished game and says whether the duel has said
// enough.
func (t *tally) settled(r tournament.Record) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.status
	points, ok := r.Score(t.b)
	if !ok {
		if r.Status == tournament.Unplayed && !t.lost[r.Pair] {
			t.lost[r.Pair] = true
			s.Unpaired++
			delete(t.partial, r.Pair)
		}
		return s.Decision != stats.Continue
	}
	if t.lost[r.Pair] {
		return s.Decision != stats.Continue
	}
	first, seen := t.partial[r.Pair]
	if !seen {
		t.partial[r.Pair] = points
		return s.Decision != stats.Continue
	}
	delete(t.partial, r.Pair)
	if s.Decision != stats.Continue {
		return true // a pair that ends after the decision is not counted
	}
	s.Pairs.Add(first, points)
	s.Games.Add(first)
	s.Games.Add(points)
	s.Estimate = stats.Pentanomial(s.Pairs, s.Games.D)
	if t.o.SPRT != nil {
		s.LLR = t.o.SPRT.LLR(s.Pairs, s.Games)
		s.Decision = t.o.SPRT.Decide(s.LLR)
	}
	if t.o.Progress != nil && t.live {
		t.o.Progress(*s)
	}
	return s.Decision != stats.Continue
}

// Run plays the duel (or resumes it) and returns where it stands: an error
// wraps ErrUndecided when an SPRT ran out of pairs.
func Run(ctx context.Context, o Options) (Status, error) {
	to := o.Tournament
	if len(to.Bots) != 2 || len(to.Config.Bots) != 2 {
		return Status{}, errors.New("duel: two bots, A and B")
	}
	if o.Pairs < 1 {
		return Status{}, fmt.Errorf("duel: pairs: want 1 or more, got %d", o.Pairs)
	}
	if o.SPRT != nil {
		if err := o.SPRT.Validate(); err != nil {
			return Status{}, err
		}
	}
	to.Config.Format, to.Config.Challenger, to.Config.GamesPerPair = tournament.RoundRobin, "", 2*o.Pairs
	t := &tally{o: &o, partial: map[int]float64{}, lost: map[int]bool{}, b: 1}
	if o.SPRT != nil {
		t.status.Lower, t.status.Upper = o.SPRT.Bounds()
	}
	to.Settled, to.Progress = t.settled, progress{t}
	sum, err := runner.Run(ctx, to)
	t.mu.Lock()
	st := t.status
	t.mu.Unlock()
	if err != nil {
		return st, err
	}
	if sum.Interrupted {
		return st, ctx.Err()
	}
	if o.SPRT != nil && st.Decision == stats.Continue {
		return st, ErrUndecided
	}
	return st, nil
}

// String is a status as the duel prints it: the score, the pentanomial
// counts, the estimate and, with an SPRT, the LLR within its bounds.
func (s Status) String() string {
	out := fmt.Sprintf("B %d-%d-%d (W-D-L) in %d pairs %s: %s", s.Games.W, s.Games.D, s.Games.L, s.Pairs.Pairs(), s.Pairs, s.Estimate)
	if s.Lower != 0 || s.Upper != 0 {
		out += fmt.Sprintf("; LLR %.2f (%.2f, %.2f)", s.LLR, s.Lower, s.Upper)
		if s.Decision != stats.Continue {
			out += ": " + s.Decision.String()
		}
	}
	if s.Unpaired > 0 {
		out += fmt.Sprintf("; %d pairs left out (a game unplayed)", s.Unpaired)
	}
	return out
}
