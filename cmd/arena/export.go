package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/export"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a match or a tournament's games as PGN (chess) or PDN (checkers)",
		UsageText: "arena export --format pgn|pdn [--out FILE] MATCH|TOURNAMENT",
		Description: `Writes each game in the format chess and checkers tools read. Every game is
replayed first: a transcript that does not replay is refused, and only moves
the rules engine played are written.

PGN (chess): the seven tags, SetUp and FEN when the game began from an opening,
Termination, TimeControl (the game's time bank), the moves in SAN with the time
the mover had left after each ({[%clk h:mm:ss]}), and arena's ArenaPair and
ArenaOpening tags for a tournament's games.

PDN 3.0 (English checkers, GameType 21): Black is the first player (arena's
White); a game from a three-move ballot starts with the ballot's moves; a
capture of several jumps is one move (15x24x31).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Usage: "pgn or pdn", Required: true},
			&cli.StringFlag{Name: "out", Usage: "the file to write (default: standard output)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one match or tournament directory: arena export --format pgn DIR")
			}
			w := c.App.Writer
			var f *os.File
			if out := c.String("out"); out != "" {
				var err error
				if f, err = os.Create(out); err != nil {
					return usagef("--out: %v", err)
				}
				w = f
			}
			buf := bufio.NewWriter(w)
			err := export.Write(c.Context, buf, c.Args().First(), c.String("format"))
			if err == nil {
				err = buf.Flush()
			}
			if f != nil {
				if cerr := f.Close(); err == nil && cerr != nil {
					err = fmt.Errorf("write %s: %w", c.String("out"), cerr)
				}
			}
			if err != nil {
				if f != nil {
					os.Remove(c.String("out")) // half a file is no export; the error says why
				}
				return usagef("%v", err)
			}
			return nil
		},
	}
}
