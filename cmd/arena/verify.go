package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/reproduce"
	"github.com/arenabots/arena/harness/verify"
	"github.com/arenabots/arena/harness/witness"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check a published final (arena event publish) with the log's key, or a team's proof of one of its games",
		UsageText: "arena verify --key KEY [--since CHECKPOINT] [--witness KEY --quorum N] [--partial] [--timeout D] [--replay SUBMISSIONS] BUNDLE|URL\n   arena verify --key KEY --proof FILE",
		Description: `Checks the final in BUNDLE (a directory arena event publish wrote) or at URL
(a web server serving one) with KEY, the log's public key from the event's
home page: the checkpoint's signature, the log's tree rebuilt from its
entries, every scheduled pairing with exactly its game and no other, every
transcript replayed and re-judged against its game's entry, and the
standings recomputed from the games. --since CHECKPOINT (a checkpoint file
kept from earlier, or a game's proof, which carries the checkpoint it was
proven against; repeatable, each checked) checks that the log extends it:
nothing in it was changed or dropped. --witness KEY (repeatable) and
--quorum N check that at least N of those witnesses (arena witness) cosigned
the checkpoint: each saw it extend every checkpoint it cosigned before, so a
log shown to some as one history and to others as another has no quorum.
--partial checks a final in progress: its pairings may lack
their games, and it says how many have them. Every failure names the log
entry (or the file) and the field; it exits 1 then. With --proof FILE it
checks a team's inclusion proof of one of its games (downloaded from its
page), offline.

A bundle is not trusted to be harmless: only regular files inside BUNDLE
are read (a link out of it, a named pipe or a device is refused), each file
no bigger than its kind may be (a transcript 64 MiB), a checkpoint of more
than 2^32 entries is refused, a URL's redirects are followed only to the
same origin (scheme, host and port), each file may take a minute and the
whole check --timeout.

--replay SUBMISSIONS plays every game of the final again, once the bundle
holds: SUBMISSIONS is a directory of the final's submissions (one per entry:
an executable, a directory or a ZIP, as the organizer publishes them after
the event, or a team's own with its rival's), each built as arena tournament
builds it; a player is the submission whose program has the SHA-256 the log
names (a submission that is a player's upload but builds to another program
is named). Each game is played in the sandbox (--sandbox, --image) from its
logged seed, rules and limits, into --replay-out, and compared with its
published transcript turn by turn: every turn's state, answer, verdict and
move, the turns' count and the result (not the times, which differ from one
run to the next). It exits 1 when a game differs or a player's program is
missing. See docs/verify.md.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "the log's public key, as the event's home page shows it (NAME+HASH+KEY; required)"},
			&cli.StringSliceFlag{Name: "since", Usage: "a checkpoint kept from earlier (its file, or a game's .tlog-proof, which carries one): the log must extend it (repeatable: every one is checked)", TakesFile: true},
			&cli.BoolFlag{Name: "partial", Usage: "check a final in progress: its scheduled pairings may lack their games"},
			&cli.DurationFlag{Name: "timeout", Value: verify.DefaultTimeout, Usage: "the most the whole check may take"},
			&cli.StringFlag{Name: "proof", Usage: "a game's inclusion proof (a .tlog-proof file from a team's page): check it alone", TakesFile: true},
			&cli.StringSliceFlag{Name: "witness", Usage: "a witness's key (arena witness prints it): the checkpoint must carry its cosignature (repeatable; see --quorum)"},
			&cli.IntFlag{Name: "quorum", Usage: "how many of the --witness keys must have cosigned the checkpoint (default: all of them)"},
			&cli.StringFlag{Name: "replay", Usage: "a directory of the final's submissions: play every game again from them and compare it with its transcript", TakesFile: true},
			&cli.StringFlag{Name: "replay-out", Usage: "where the games are played again (default: a new directory under the system's temporary one)", TakesFile: true},
			&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "how many games --replay plays at once"},
			&cli.StringFlag{Name: "sandbox", Value: "docker", Usage: "where --replay runs the bots: " + backendsSaid()},
			imageFlag(),
			runtimeFlag("the engine's, usually runc"),
		}, buildFlags()...),
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
	o := verify.Options{Key: key, Partial: c.Bool("partial"), Timeout: c.Duration("timeout"), Witnesses: c.StringSlice("witness"), Quorum: c.Int("quorum")}
	for _, k := range o.Witnesses {
		if _, err := witness.NewVerifier(k); err != nil {
			return usagef("--witness: %v", err)
		}
	}
	if o.Quorum < 0 || o.Quorum > len(o.Witnesses) {
		return usagef("--quorum %d: want at most the %d --witness keys given", o.Quorum, len(o.Witnesses))
	}
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
	if r.Others > 0 {
		fmt.Fprintf(w, "and %s of the ladder, replayed and re-judged (they count for no standing)\n", words.Plural(r.Others, "game"))
	}
	if o.Partial {
		fmt.Fprintf(w, "partial: %d of %d pairings have their game\n", r.Games, r.Pairings)
	}
	if len(o.Witnesses) > 0 {
		fmt.Fprintf(w, "its checkpoint is cosigned by %d of the %d witnesses asked for: %s\n", len(r.Cosigned), len(o.Witnesses), strings.Join(r.Cosigned, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  RANK\tTEAM\tBOT\tPOINTS")
	for _, row := range r.Standings {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%g\n", row.Rank, row.Team, row.Name, row.Points)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range r.LeftOut {
		fmt.Fprintf(w, "  left out: %s (%s)\n", l.Team, l.Why)
	}
	if n := len(r.Unread); n > 0 {
		shown := r.Unread[:min(n, 10)]
		more := ""
		if n > len(shown) {
			more = ", …"
		}
		fmt.Fprintf(w, "the bundle also holds %s the log does not name, not checked and evidence of nothing: %s%s\n", words.Plural(n, "file"), strings.Join(shown, ", "), more)
	}
	if dir := c.String("replay"); dir != "" {
		return replayFinal(c, src, r, dir)
	}
	return nil
}

// replayFinal plays the final r holds again from the submissions in dir
// (harness/reproduce) and says, game by game, whether each is the
// published one.
func replayFinal(c *cli.Context, src verify.Source, r *verify.Result, dir string) error {
	if r.Config == nil {
		return failf("--replay: the bundle holds no final to play again")
	}
	g, err := rules.Lookup(r.Config.Game)
	if err != nil {
		return failf("--replay: the log's game: %v", err)
	}
	if c.Int("concurrency") < 1 {
		return usagef("--concurrency: want 1 or more, got %d", c.Int("concurrency"))
	}
	bots, err := loadBots(c, []string{dir}, g)
	if err != nil {
		return err
	}
	backend, closer, err := openBackend(c, sandboxConfig(c), true)
	if err != nil {
		return err
	}
	defer closer()
	b, err := newBuilder(c, backend, r.Config.Limits, nil)
	if err != nil {
		return err
	}
	if err := readyBots(c, b, bots); err != nil {
		return err
	}
	out := c.String("replay-out")
	if out == "" {
		if out, err = os.MkdirTemp("", "arena-replay-"); err != nil {
			return err
		}
	}
	w := c.App.Writer
	fmt.Fprintf(w, "playing the final's games again from %s in %s (%d at once):\n", words.Plural(len(bots), "submission"), out, c.Int("concurrency"))
	rep, err := reproduce.Final(c.Context, src, r, reproduce.Options{Backend: backend, Bots: bots, Dir: out, Concurrency: c.Int("concurrency"),
		Played: func(g reproduce.Game) {
			round := fmt.Sprintf("round %d", g.Round)
			if g.Playoff > 0 {
				round = fmt.Sprintf("playoff %d after round %d", g.Playoff, g.Round)
			}
			line := fmt.Sprintf("  game %d (%s, %s vs %s): ", g.ID, round, g.White, g.Black)
			switch {
			case g.NotPlayed != "":
				line += "not played: " + g.NotPlayed
			case g.Same():
				line += fmt.Sprintf("the same, %s", words.Plural(g.Turns, "turn"))
			default:
				line += "differs: " + strings.Join(g.Differences, "; ")
			}
			fmt.Fprintln(w, line)
		}})
	if rep != nil {
		for _, m := range rep.Missing {
			fmt.Fprintf(w, "  missing: %s\n", m)
		}
	}
	if err != nil {
		return err
	}
	same, differ, notPlayed := rep.Same()
	fmt.Fprintf(w, "the final's %s: %d played again the same, %d differ, %d not played\n", words.Plural(len(rep.Games), "game"), same, differ, notPlayed)
	if differ > 0 || notPlayed > 0 || len(rep.Missing) > 0 {
		return failf("the final as played again from %s is not the published one", dir)
	}
	return nil
}
