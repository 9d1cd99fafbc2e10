package main

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/transcript"
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
			fmt.Fprintf(c.App.Writer, "consistent: %s, %s vs %s, seed %d; %d turns re-judged, %s; %d data-file blobs verified; hash chain intact, %s\n",
				r.Game, r.White.Name, r.Black.Name, r.Seed, rep.Turns, outcome, rep.Blobs, signed)
			return nil
		},
	}
}
