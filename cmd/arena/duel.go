package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/duel"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/stats"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
)

// exitUndecided is a duel whose SPRT ran out of pairs.
const exitUndecided = 3

func duelCommand() *cli.Command {
	return &cli.Command{
		Name:      "duel",
		Usage:     "play two bots in side-swapped pairs until an SPRT decides whether B is stronger",
		UsageText: "arena duel --out DIR [--sprt elo0=0,elo1=5,alpha=0.05,beta=0.05] [--pairs N] [options] A B",
		Description: `Plays pairs of games between a baseline A and a candidate B, each pair from one
opening (--openings) or one seed with the sides swapped, through the same
runner as arena tournament: every game is an official match with its evidence,
stored in DIR as it ends, and running the same command again resumes.

After each pair it prints B's wins, draws and losses, the pentanomial counts
[LL, LD, WL+DD, WD, WW] (pairs by B's points), Elo with its 95% interval,
normalized Elo, LOS and the draw ratio, and with --sprt the log-likelihood
ratio of the generalized SPRT (the pentanomial GSPRT of fastchess and fishtest;
model normalized by default, or logistic, or bayesian) within its bounds. It
stops when the SPRT decides or after --pairs pairs.

Exit codes: 0 H1 accepted (B is stronger by elo1) or, without --sprt, every pair
played; 1 H0 accepted; 2 bad usage or an abort; 3 the SPRT did not decide
within --pairs.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "duel directory (required; reuse it to resume)", Required: true},
			&cli.StringFlag{Name: "sprt", Usage: "stop by an SPRT: elo0=0,elo1=5,alpha=0.05,beta=0.05[,model=normalized|logistic|bayesian]"},
			&cli.IntFlag{Name: "pairs", Value: 1000, Usage: "the most pairs played (2 games each)"},
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "games played at once"},
			&cli.Uint64Flag{Name: "seed", Usage: "duel seed: every pair's seed and a random opening order (default: random, stored)"},
			&cli.IntFlag{Name: "max-attempts", Value: 3, Usage: "attempts of a game aborted by the host before it is unplayed (its pair is left out)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print the last status only"},
			signingKeyFlag(),
		}, append(append(matchFlags(), openingFlags()...), evidenceFlags("64m")...)...),
		Action: runDuel,
	}
}

func runDuel(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("name two bots: arena duel --out DIR A B")
	}
	dir := c.String("out")
	var sprt *stats.SPRT
	if s := c.String("sprt"); s != "" {
		t, err := stats.ParseSPRT(s)
		if err != nil {
			return usagef("--sprt: %v", err)
		}
		sprt = &t
	}
	if c.Int("pairs") < 1 || c.Int("concurrency") < 1 || c.Int("max-attempts") < 1 {
		return usagef("--pairs, --concurrency and --max-attempts must be at least 1")
	}
	g, _, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	evidence, err := readEvidence(c)
	if err != nil {
		return err
	}
	named, err := submission.NameBots(c.Args().Slice())
	if err != nil {
		return usagef("%v", err)
	}
	var bots []*submission.Bot
	for i, a := range named {
		b, err := loadBot(c, []string{"A", "B"}[i]+" "+c.Args().Get(i), a, g)
		if err != nil {
			return err
		}
		bots = append(bots, b)
	}
	if bots[0].Name == bots[1].Name {
		return usagef("A and B are both named %q; name them (A=PATH B=PATH)", bots[0].Name)
	}
	to, closer, err := runnerOptions(c, dir, bots, evidence, func(*tournament.Config) error { return nil })
	if err != nil {
		return err
	}
	defer closer()
	w := c.App.Writer
	o := duel.Options{Pairs: c.Int("pairs"), SPRT: sprt, Tournament: to}
	fmt.Fprintf(w, "duel: A %s, B %s\n", bots[0].Name, bots[1].Name)
	if !c.Bool("quiet") {
		o.Progress = func(s duel.Status) { fmt.Fprintln(w, s) }
	}
	st, err := duel.Run(c.Context, o)
	if errors.Is(err, runner.ErrConfigChanged) {
		return usagef("%v\nuse another --out directory for a new duel", err)
	}
	if c.Bool("quiet") || err != nil {
		fmt.Fprintln(w, st)
	}
	switch {
	case errors.Is(err, duel.ErrUndecided):
		return cli.Exit(fmt.Sprintf("%v (%d)", err, c.Int("pairs")), exitUndecided)
	case err != nil && c.Context.Err() != nil:
		return usagef("duel interrupted; run the same command to resume")
	case err != nil:
		return err
	case st.Decision == stats.AcceptH0:
		return failf("H0 accepted: the games favour B - A = %g over %g (%s Elo); B is not shown stronger", sprt.Elo0, sprt.Elo1, sprt.Model)
	case st.Decision == stats.AcceptH1:
		fmt.Fprintf(w, "H1 accepted: the games favour B - A = %g over %g (%s Elo); B is stronger\n", sprt.Elo1, sprt.Elo0, sprt.Model)
	}
	return nil
}
