package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/internal/words"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check a published final (arena event publish) with the log's key, or a team's proof of one of its games",
		UsageText: "arena verify --key KEY [--since CHECKPOINT] [--partial] [--timeout D] BUNDLE|URL\n   arena verify --key KEY --proof FILE",
		Description: `Checks the final in BUNDLE (a directory arena event publish wrote) or at URL
(a web server serving one) with KEY, the log's public key from the event's
home page: the checkpoint's signature, the log's tree rebuilt from its
entries, every scheduled pairing with exactly its game and no other, every
transcript replayed and re-judged against its game's entry, and the
standings recomputed from the games. --since CHECKPOINT (a checkpoint file
kept from earlier, or a game's proof, which carries the checkpoint it was
proven against; repeatable, each checked) checks that the log extends it:
nothing in it was changed or dropped. --partial checks a final in progress: its pairings may lack
their games, and it says how many have them. Every failure names the log
entry (or the file) and the field; it exits 1 then. With --proof FILE it
checks a team's inclusion proof of one of its games (downloaded from its
page), offline.

A bundle is not trusted to be harmless: only regular files inside BUNDLE
are read (a link out of it, a named pipe or a device is refused), each file
no bigger than its kind may be (a transcript 64 MiB), a checkpoint of more
than 2^32 entries is refused, a URL's redirects are followed only to the
same origin (scheme, host and port), each file may take a minute and the
whole check --timeout. See docs/verify.md.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "the log's public key, as the event's home page shows it (NAME+HASH+KEY; required)"},
			&cli.StringSliceFlag{Name: "since", Usage: "a checkpoint kept from earlier (its file, or a game's .tlog-proof, which carries one): the log must extend it (repeatable: every one is checked)", TakesFile: true},
			&cli.BoolFlag{Name: "partial", Usage: "check a final in progress: its scheduled pairings may lack their games"},
			&cli.DurationFlag{Name: "timeout", Value: verify.DefaultTimeout, Usage: "the most the whole check may take"},
			&cli.StringFlag{Name: "proof", Usage: "a game's inclusion proof (a .tlog-proof file from a team's page): check it alone", TakesFile: true},
		},
		Action: verifyAction,
	}
}

func verifyAction(c *cli.Context) error {
	key := strings.TrimSpace(c.String("key"))
	if key == "" {
		return usagef("verify needs --key: the final log's public key, as the event's home page showed it before the final")
	}
	w := c.App.Writer
	if p := c.String("proof"); p != "" {
		if c.NArg() != 0 {
			return usagef("verify --proof takes no other argument")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		e, n, err := verify.Proof(data, key)
		if err != nil {
			return failf("%s does not hold: %v", p, err)
		}
		if e.Game == nil {
			fmt.Fprintf(w, "%s: entry %d (%s) is in the log\n", p, n, e.Kind)
			return nil
		}
		g := e.Game
		fmt.Fprintf(w, "%s: the final's game %d (%s: winner %s, %s; transcript %.16s…) is entry %d of the log the key signs\n", p, g.ID, g.Dir, g.Winner, g.Reason, g.Transcript, n)
		return nil
	}
	if c.NArg() != 1 {
		return usagef("verify takes one argument: the bundle's directory or URL")
	}
	arg := c.Args().First()
	var src verify.Source = verify.Dir(arg)
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		src = verify.URL(arg)
	}
	if c.Duration("timeout") <= 0 {
		return usagef("verify --timeout %v: the check needs some time", c.Duration("timeout"))
	}
	o := verify.Options{Key: key, Partial: c.Bool("partial"), Timeout: c.Duration("timeout")}
	for _, f := range c.StringSlice("since") {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		o.Since = append(o.Since, data)
	}
	r, err := verify.Bundle(c.Context, src, o)
	var problems verify.Problems
	if errors.As(err, &problems) {
		return failf("%s does not hold: %v", arg, problems)
	}
	var late *verify.TimeoutError
	if errors.As(err, &late) {
		return fmt.Errorf("%s cannot be read as a published final: %w; --timeout gives it longer", arg, err)
	}
	if err != nil {
		return fmt.Errorf("%s cannot be read as a published final: %w", arg, err)
	}
	fmt.Fprintf(w, "%s holds: a log of %s signed by %s; %s, %s, %s replayed and re-judged; the standings are the games'\n",
		arg, words.Plural(int(r.Checkpoint.Size), "entry"), r.Checkpoint.Origin, words.Plural(r.Players, "player"), words.Plural(r.Pairings, "pairing"), words.Plural(r.Games, "game"))
	if o.Partial {
		fmt.Fprintf(w, "partial: %d of %d pairings have their game\n", r.Games, r.Pairings)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  RANK\tTEAM\tBOT\tPOINTS")
	for _, row := range r.Standings {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%g\n", row.Rank, row.Team, row.Name, row.Points)
	}
	return tw.Flush()
}
