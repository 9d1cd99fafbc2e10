package main

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
)

func defaultKeyPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "arena", "signing.key")
}

func signingKeyFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "signing-key", Value: defaultKeyPath(), EnvVars: []string{"ARENA_SIGNING_KEY"}, TakesFile: true,
		Usage: "ed25519 key that signs transcripts (created on first use); \"none\" to not sign"}
}

// signer loads the signing key named by --signing-key, or nil for "none".
func signer(c *cli.Context) (ed25519.PrivateKey, error) {
	p := c.String("signing-key")
	if p == "none" || p == "" {
		return nil, nil
	}
	k, err := transcript.LoadOrCreateKey(p)
	if err != nil {
		return nil, fmt.Errorf("--signing-key: %w", err)
	}
	return k, nil
}

func keyCommand() *cli.Command {
	return &cli.Command{
		Name:  "key",
		Usage: "show the key that signs transcripts",
		Description: `Prints the public half of the signing key and its short id. Publish it before
the event: 'arena replay --key ID' then proves a transcript was signed by you
and not changed since.`,
		Flags: []cli.Flag{signingKeyFlag()},
		Action: func(c *cli.Context) error {
			k, err := signer(c)
			if err != nil {
				return err
			}
			if k == nil {
				return usagef("--signing-key none: there is no key to show")
			}
			pub := transcript.PublicKeyHex(k)
			fmt.Fprintf(c.App.Writer, "key id     %s\npublic key %s\nfile       %s\n", transcript.KeyID(pub), pub, c.String("signing-key"))
			return nil
		},
	}
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "re-judge a match from its transcript and verify it was not changed",
		UsageText: "arena replay [--key ID] [--json] TRANSCRIPT|MATCH_DIR",
		Description: `Re-judges the whole match with the rules engine alone (no bot runs):
recomputes every state.json that was handed out, every verdict, every move
played and the result, and checks the hash chain, the footer's signature and
the data-file blobs. Prints "consistent" with a summary, or the first
divergence: the ply, the field, the recorded and the recomputed value.

Exit 0 consistent, 1 divergent or tampered, 2 unreadable.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "require the footer to be signed by this key id (see arena key)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("replay takes one transcript or match directory")
			}
			rep, err := replay.File(c.Args().First())
			if err != nil {
				return usagef("%v", err)
			}
			if k := c.String("key"); k != "" && rep.Problem() == "" && rep.SignedBy != k {
				signed := rep.SignedBy
				if signed == "" {
					signed = "nobody"
				}
				rep.Consistent, rep.Tampered = false, fmt.Sprintf("signature: signed by %s, --key wants %s", signed, k)
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				enc.Encode(rep)
				if !rep.Consistent {
					return silent(exitFailed)
				}
				return nil
			}
			if !rep.Consistent {
				return failf("divergent: %s", rep.Problem())
			}
			r := rep.Result
			outcome := r.Winner + " wins by " + r.Reason
			switch r.Winner {
			case transcript.WinnerDraw:
				outcome = "draw by " + r.Reason
			case transcript.WinnerNone:
				outcome = "aborted: " + r.AbortReason
			}
			signed := "unsigned"
			if rep.SignedBy != "" {
				signed = "signed by " + rep.SignedBy
			}
			fmt.Fprintf(c.App.Writer, "consistent: %s, %s vs %s, seed %d; %s re-judged, %s; %s verified; hash chain intact, %s\n",
				r.Game, r.White.Name, r.Black.Name, r.Seed, words.Plural(rep.Turns, "turn"), outcome, words.Plural(rep.Blobs, "data-file blob"), signed)
			return nil
		},
	}
}

func rerunCommand() *cli.Command {
	return &cli.Command{
		Name:      "rerun",
		Usage:     "run a disputed turn again, exactly as it was given",
		UsageText: "arena rerun TRANSCRIPT|MATCH_DIR --ply N --bot PATH [--side white|black] [--repeat K]",
		Description: `Rebuilds the bot's game directory exactly as it was when the turn began (the
recorded state.json and the data file it had kept, from blobs/), starts a
fresh sandbox with the recorded image and limits, runs the bot, and prints
what it does now beside what the transcript recorded: move, exit code,
verdict, time. --repeat K runs it K times and shows the spread of times, for
timeout disputes.

A line game's bot (chess, tiles, ...) lives for the whole game: a fresh bot is
sent every line the transcript says it was sent, in order, and asked every
earlier question again (answers that differ from the record are counted; it
is sent the recorded lines all the same), then asked the disputed question
with the recorded time limit.

--bot must be the very executable that played (its sha256 is checked against
the transcript). The transcript must replay consistently (see arena replay).

Exit 0 when every run reproduces the recorded move and verdict, 1 when one
does not (or the transcript does not replay), 2 for bad usage, unreadable
input or an infrastructure error.`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "ply", Usage: "the turn to run again (1-based, setup included; see the transcript)", Required: true},
			&cli.StringFlag{Name: "side", Usage: "white or black: refuse if the ply was the other side's"},
			&cli.StringFlag{Name: "bot", Usage: "the bot that played that turn (executable, directory or ZIP; NAME=PATH names it)", Required: true, TakesFile: true},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run the turn this many times"},
			&cli.StringFlag{Name: "sandbox", Usage: backendsSaid() + " (default: the one recorded)"},
			&cli.StringFlag{Name: "image", Usage: "runtime image (default: the one recorded)"},
			runtimeFlag("the one recorded"),
			&cli.BoolFlag{Name: "json", Usage: "print the comparison as JSON"},
		}, buildFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("rerun takes one transcript or match directory")
			}
			if c.Int("repeat") < 1 || c.Int("repeat") > 1000 {
				return usagef("--repeat must be 1 to 1000")
			}
			rep, _, _, err := replay.FindTurn(c.Args().First(), c.Int("ply"))
			if err != nil {
				if rep == nil {
					return usagef("%v", err)
				}
				return failf("%v", err)
			}
			h := rep.Header
			g, err := rules.Lookup(h.Game)
			if err != nil {
				return usagef("%v", err)
			}
			arg, err := submission.ParseBotArg(c.String("bot"))
			if err != nil {
				return usagef("--bot: %v", err)
			}
			bot, err := loadBot(c, "--bot", arg, g)
			if err != nil {
				return err
			}
			backend, closer, err := openBackend(c, replay.Sandbox(h, sandboxConfig(c)), false)
			if err != nil {
				return err
			}
			defer closer()
			// A bot handed in as source is built as it was for the match (the
			// build cache holds it): its artifact's hash must be the one
			// recorded, so a changed source is refused.
			b, err := newBuilder(c, backend, h.Limits, nil)
			if err != nil {
				return err
			}
			bots := []*submission.Bot{bot}
			if err := readyBots(c, b, bots); err != nil {
				return err
			}
			if bot = bots[0]; bot.BuildError != "" {
				return failf("%s does not build now: %s", bot.Name, bot.BuildError)
			}
			drift, err := replay.ImageDrift(c.Context, backend, h)
			if err != nil {
				return err
			}
			if drift != "" {
				fmt.Fprintln(c.App.ErrWriter, "arena: warning:", drift)
			}
			out, err := replay.RunAgain(c.Context, replay.RerunOptions{
				Path: c.Args().First(), Ply: c.Int("ply"), Side: c.String("side"),
				Bot: bot, Backend: backend, Repeat: c.Int("repeat"),
			})
			if err != nil {
				return err
			}
			same := out.Reproduced()
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
				if same < len(out.Attempts) {
					return silent(exitFailed)
				}
				return nil
			}
			out.WriteText(c.App.Writer)
			switch {
			case same == len(out.Attempts):
				return nil
			case len(out.Attempts) == 1:
				return failf("not reproduced: the run differs from the record")
			default:
				return failf("not reproduced: %d of %d runs differ from the record", len(out.Attempts)-same, len(out.Attempts))
			}
		},
	}
}

func viewCommand() *cli.Command {
	return &cli.Command{
		Name:      "view",
		Usage:     "write a match as one self-contained HTML page",
		UsageText: "arena view TRANSCRIPT|MATCH_DIR [-o PAGE.html|-]",
		Description: `Writes one HTML file (no network access, no other files) that shows the match
ply by ply: the board, blocked tiles, the fog as each player saw it, shields,
abilities, each turn's verdict, time and exit code, and the result. Step with
the buttons or the arrow keys (Home/End for the ends), jump to any ply, and
switch between the true board and White's or Black's view (t, w, b).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "where to write the page (default: MATCH_DIR's name with .html, in the current directory: a match's own folder is evidence and is never written to; - for stdout)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("view takes one transcript or match directory")
			}
			d, err := view.Build(c.Args().First())
			if err != nil {
				return usagef("%v", err)
			}
			page, err := view.HTML(d)
			if err != nil {
				return err
			}
			out := c.String("output")
			if out == "-" {
				_, err := c.App.Writer.Write(page)
				return err
			}
			if out == "" {
				out = view.DefaultOutput(c.Args().First())
			}
			if err := os.WriteFile(out, page, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "wrote %s (%d steps)\n", out, len(d.Steps))
			if !d.Consistent {
				fmt.Fprintf(c.App.ErrWriter, "arena: warning: the transcript does not replay consistently: %s\n", d.Problem)
			}
			return nil
		},
	}
}
