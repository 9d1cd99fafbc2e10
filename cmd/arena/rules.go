package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games" // registers every game
	"github.com/arenabots/arena/sandbox"
)

func gameFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "game", Value: "codeclash", Usage: "game: " + strings.Join(rules.Names(), ", ")}
}

func ruleFlag() *cli.StringSliceFlag {
	return &cli.StringSliceFlag{Name: "rule", Usage: "set a rule option, name=value, or name=@FILE to read the value from FILE (repeatable; see arena rules explain)"}
}

// ruleOptions reads --rule, each name=@FILE read from its file.
func ruleOptions(c *cli.Context) (map[string]string, error) {
	opts, err := rules.ParseRuleFlags(c.StringSlice("rule"))
	if err != nil {
		return nil, usagef("--rule: %v", err)
	}
	for k, v := range opts {
		if path, ok := strings.CutPrefix(v, "@"); ok {
			data, err := readInput(path)
			if err != nil {
				return nil, usagef("--rule %s: %v", k, err)
			}
			opts[k] = string(data)
		}
	}
	return opts, nil
}

// gameAndOptions reads --game and --rule, checked as a match would check
// them (settings.Settings).
func gameAndOptions(c *cli.Context) (rules.Game, map[string]string, error) {
	opts, err := ruleOptions(c)
	if err != nil {
		return nil, nil, err
	}
	r, err := settings.Settings{Game: c.String("game"), Rules: opts, Limits: sandbox.DefaultLimits()}.Resolve()
	var bad *settings.SettingError
	if errors.As(err, &bad) {
		return nil, nil, usagef("--%s: %v", bad.Setting, bad.Err)
	}
	if err != nil {
		return nil, nil, err
	}
	return r.Game, r.Rules, nil
}

// readInput reads a file ("-" for stdin) of at most 16 MiB.
func readInput(path string) ([]byte, error) {
	const max = 16 << 20
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("%v", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, usagef("read %s: %v", path, err)
	}
	if len(data) > max {
		return nil, usagef("%s is larger than %d bytes", path, max)
	}
	return data, nil
}

func rulesCommand() *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "explain a game's rules, list legal moves, check a move",
		Subcommands: []*cli.Command{
			{
				Name:      "explain",
				Usage:     "print the rulings and rule options of a game",
				UsageText: "arena rules explain [--game GAME]",
				Flags:     []cli.Flag{gameFlag()},
				Action:    rulesExplain,
			},
			{
				Name:      "legal",
				Usage:     "list every legal move in a state as a bot received it",
				UsageText: "arena rules legal [--game GAME] [--rule name=value] STATE",
				Description: `Reads a state as it was written to a player (- reads stdin) and prints every
legal move of that player as JSON, in the game's own move format. A state
read on its own does not hold everything a referee knows; what the game
assumes for the rest is in 'arena rules explain --game GAME'.
Exit 2, naming the field, when the state cannot be read.`,
				Flags:  []cli.Flag{gameFlag(), ruleFlag()},
				Action: rulesLegal,
			},
			{
				Name:      "perft",
				Usage:     "count the positions a game's move generator reaches from the start",
				UsageText: "arena rules perft --game GAME --depth N [--rule name=value]",
				Description: `Prints the number of positions reachable in 1 to N moves from the starting
position (or --rule fen=... for chess), to compare with published tables. For
checkers a whole capture sequence counts as one move, as the tables do; use
--rule menCaptureBackward=false for standard English checkers.`,
				Flags:  []cli.Flag{gameFlag(), ruleFlag(), &cli.IntFlag{Name: "depth", Value: 4, Usage: "deepest level"}},
				Action: rulesPerft,
			},
			{
				Name:      "check",
				Usage:     "judge a move.json against a state.json",
				UsageText: "arena rules check [--game GAME] [--rule name=value] STATE.json MOVE.json",
				Description: `Judges MOVE.json as the referee would against the position in STATE.json
(read as 'arena rules legal' reads it). Prints "legal: MOVE" and exits 0, or
prints the verdict (illegal-move or invalid-output) and the reason and exits 1.
Exit 2 when the state cannot be read.`,
				Flags:  []cli.Flag{gameFlag(), ruleFlag()},
				Action: rulesCheck,
			},
		},
	}
}

// rulesExplain prints the rulings and rule options of a game.
func rulesExplain(c *cli.Context) error {
	g, _, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	w := c.App.Writer
	fmt.Fprint(w, g.Explain())
	fmt.Fprintf(w, "\nRULE OPTIONS (arena match --rule name=value)\n")
	for _, o := range g.Options() {
		fmt.Fprintf(w, "  %-20s default %-6s %s: %s\n", o.Name, o.Default, o.Values, o.Doc)
	}
	return nil
}

// rulesLegal prints every legal move of the player a state was written to,
// as JSON.
func rulesLegal(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("rules legal takes one STATE.json (got %d arguments)", c.NArg())
	}
	g, opts, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	data, err := readInput(c.Args().First())
	if err != nil {
		return err
	}
	st, err := g.FromView(opts, data)
	if err != nil {
		return usagef("%s: %v", c.Args().First(), err)
	}
	l, ok := st.(rules.Lister)
	if !ok {
		return usagef("%s cannot list moves as JSON", g.Name())
	}
	out, err := l.LegalJSON()
	if err != nil {
		return err
	}
	_, err = c.App.Writer.Write(out)
	return err
}

// rulesPerft prints how many positions the game's move generator reaches
// in 1 to --depth moves from the start.
func rulesPerft(c *cli.Context) error {
	g, opts, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	if d := c.Int("depth"); d < 1 || d > 12 {
		return usagef("--depth must be 1 to 12")
	}
	st, err := g.New(opts, 0)
	if err != nil {
		return usagef("%v", err)
	}
	p, ok := st.(rules.Perfter)
	if !ok {
		return usagef("%s has no perft", g.Name())
	}
	for d := 1; d <= c.Int("depth"); d++ {
		if err := c.Context.Err(); err != nil {
			return err
		}
		start := time.Now()
		n := p.Perft(d)
		fmt.Fprintf(c.App.Writer, "depth %2d  %14d  (%v)\n", d, n, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// rulesCheck judges a move against a state as the referee would.
func rulesCheck(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("rules check takes STATE.json and MOVE.json (got %d arguments)", c.NArg())
	}
	g, opts, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	stateData, err := readInput(c.Args().Get(0))
	if err != nil {
		return err
	}
	moveData, err := readInput(c.Args().Get(1))
	if err != nil {
		return err
	}
	st, err := g.FromView(opts, stateData)
	if err != nil {
		return usagef("%s: %v", c.Args().Get(0), err)
	}
	m, err := st.ParseMove(moveData)
	if err == nil {
		err = st.Judge(m)
	}
	if err != nil {
		return failf("%s: %v", rules.VerdictOf(err), err)
	}
	fmt.Fprintf(c.App.Writer, "legal: %s\n", m)
	return nil
}
