package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
	"github.com/arenabots/arena/sandbox/local"
)

// matchFlags are shared by every command that plays matches.
func matchFlags() []cli.Flag {
	d := sandbox.DefaultLimits()
	return append([]cli.Flag{
		gameFlag(),
		ruleFlag(),
		&cli.StringFlag{Name: "sandbox", Value: "docker", Usage: "where bots run: docker (isolated) or local (plain processes, UNSAFE)"},
		imageFlag(),
		&cli.DurationFlag{Name: "turn-timeout", Value: d.TurnTimeout, Usage: "wall-clock limit per turn"},
		&cli.StringFlag{Name: "memory", Value: "1g", Usage: "memory limit per bot, no swap (e.g. 512m, 1g)"},
		&cli.Float64Flag{Name: "cpus", Value: d.CPUs, Usage: "CPU quota per bot, in cores"},
		&cli.Int64Flag{Name: "pids", Value: d.Pids, Usage: "process and thread limit per bot"},
		&cli.StringFlag{Name: "on-fault", Value: string(match.Forfeit), Usage: "forfeit (a bot's fault loses the game) or random-move (play a random legal move for it, record the fault, continue)"},
		&cli.IntFlag{Name: "max-plies", Usage: "draw after this many play plies (default: the game's rule, 200 for codeclash)"},
	}, buildFlags()...)
}

// evidenceFlags set how much data-file content a match keeps; budget is the
// command's default cap.
func evidenceFlags(budget string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "keep-data-files", Value: transcript.KeepChanged, Usage: "data-file contents to keep as evidence: changed or all (every distinct version), final (each side's last), none (hashes only); every version's hash is recorded whatever this says"},
		&cli.StringFlag{Name: "evidence-budget", Value: budget, Usage: "data-file bytes stored per match, beyond which versions are recorded by hash only (0: no cap; e.g. 64m)"},
	}
}

// readEvidence reads evidenceFlags.
func readEvidence(c *cli.Context) (transcript.Evidence, error) {
	e := transcript.Evidence{Keep: c.String("keep-data-files")}
	if err := transcript.ParseKeep(e.Keep); err != nil {
		return e, usagef("--keep-data-files: %v", err)
	}
	if b := c.String("evidence-budget"); b != "0" {
		n, err := units.RAMInBytes(b)
		if err != nil || n < 0 {
			return e, usagef("--evidence-budget: want a size such as 64m, or 0 for no cap, got %q", b)
		}
		e.Budget = n
	}
	return e, nil
}

// matchSettings is what matchFlags configure.
type matchSettings struct {
	game    rules.Game
	rules   map[string]string
	limits  sandbox.Limits
	onFault match.Policy
	backend sandbox.Backend
	closer  func()
}

func readMatchSettings(c *cli.Context) (*matchSettings, error) {
	g, opts, err := gameAndOptions(c)
	if err != nil {
		return nil, err
	}
	if n := c.Int("max-plies"); c.IsSet("max-plies") {
		opts["maxPlies"] = strconv.Itoa(n)
		if err := rules.CheckOptions(g, opts); err != nil {
			return nil, usagef("--max-plies: %v", err)
		}
	}
	if _, err := g.New(opts, 0); err != nil {
		return nil, usagef("--rule: %v", err)
	}
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = c.Duration("turn-timeout")
	mem, err := units.RAMInBytes(c.String("memory"))
	if err != nil {
		return nil, usagef("--memory: %v", err)
	}
	lim.Memory = mem
	lim.CPUs = c.Float64("cpus")
	lim.Pids = c.Int64("pids")
	if err := lim.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	pol, err := match.ParsePolicy(c.String("on-fault"))
	if err != nil {
		return nil, usagef("--on-fault: %v", err)
	}
	if lp := g.Protocol().Lines; lp != nil && c.IsSet("turn-timeout") {
		// A line game's answers are timed by its move-time rule.
		if err := setRule(g, opts, lp.MoveTimeOption, lim.TurnTimeout.String()); err != nil {
			return nil, usagef("--turn-timeout: %v", err)
		}
	}
	ms := &matchSettings{game: g, rules: opts, limits: lim, onFault: pol}
	ms.backend, ms.closer, err = openBackend(c, c.String("sandbox"), c.String("image"), true)
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// setRule sets a rule option a flag stands for, refusing a --rule that says
// otherwise.
func setRule(g rules.Game, opts map[string]string, name, value string) error {
	if name == "" {
		return fmt.Errorf("%s has no rule option for it", g.Name())
	}
	if v, ok := opts[name]; ok && v != value {
		return fmt.Errorf("it sets the rule %s=%s, but --rule says %s=%s", name, value, name, v)
	}
	opts[name] = value
	return nil
}

// openBackend connects to the sandbox backend of that kind: docker (the
// engine the global flags name, with the runtime image checked; sweep
// removes what a killed arena left) or local. The closer releases it.
func openBackend(c *cli.Context, kind, image string, sweep bool) (sandbox.Backend, func(), error) {
	switch kind {
	case "docker":
		cl, err := engine(c)
		if err != nil {
			return nil, nil, err
		}
		// What a killed run left is swept at the start and again at the
		// end: a killed run's last create request may still complete in the
		// engine after the first sweep.
		sweepDead := func(ctx context.Context) {
			res, err := docker.Sweep(ctx, cl, false)
			switch {
			case err != nil:
				slog.Warn("sweep containers left by an earlier run", "err", err)
			case res.Containers+res.Volumes > 0:
				fmt.Fprintf(c.App.ErrWriter, "arena: removed %d containers and %d volumes left by an earlier run that was killed\n", res.Containers, res.Volumes)
			}
		}
		if sweep {
			sweepDead(c.Context)
		}
		b := docker.New(cl, image)
		if _, err := b.CheckImage(c.Context); err != nil {
			cl.Close()
			return nil, nil, err
		}
		return b, func() {
			if sweep {
				sweepDead(context.WithoutCancel(c.Context))
			}
			cl.Close()
		}, nil
	case "local":
		fmt.Fprintln(c.App.ErrWriter, "arena: WARNING:", local.Warning)
		return local.New(), func() {}, nil
	}
	return nil, nil, usagef("--sandbox: want docker or local, got %q", kind)
}

func loadBot(c *cli.Context, flag, path string, g rules.Game) (*submission.Bot, error) {
	if path == "" {
		return nil, usagef("--%s is required: a bot executable, a directory holding one, a submission ZIP, or a source file", flag)
	}
	langs, err := languages(c)
	if err != nil {
		return nil, err
	}
	pack, _ := g.(rules.Packager)
	b, err := submission.LoadSource(path, submission.DefaultLimits(), pack, langs.Knows)
	if err != nil {
		return nil, usagef("--%s: %v", flag, err)
	}
	return b, nil
}

var unsafeDirChars = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func defaultMatchDir(white, black string) string {
	clean := func(s string) string { return strings.Trim(unsafeDirChars.ReplaceAllString(s, "-"), "-.") }
	return filepath.Join("matches", time.Now().Format("20060102-150405")+"-"+clean(white)+"-vs-"+clean(black))
}

func matchCommand() *cli.Command {
	return &cli.Command{
		Name:      "match",
		Usage:     "play one official match between two bots",
		UsageText: "arena match --white BOT --black BOT [options]",
		Description: `Plays one match, each bot in its own hardened container (one per bot for the
whole match, a fresh bot process per turn), and writes to --out:
   transcript.jsonl  every state given, answer received, time, verdict; hash-chained
   result.json       winner, reason, faults
   blobs/            each data-file content once, by SHA-256
A BOT is an executable, a directory holding one, or a submission ZIP.

Exit 0 when the match was played to a result (whatever it is), 1 when it was
aborted (a fault of the host or sandbox, or Ctrl-C), 2 for bad usage.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "white", Usage: "the bot playing White (moves first)", TakesFile: true},
			&cli.StringFlag{Name: "black", Usage: "the bot playing Black", TakesFile: true},
			&cli.StringFlag{Name: "out", Usage: "directory for the transcript and result (default: a new directory under ./matches)"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the game's random decisions (default: random; always recorded)"},
			&cli.BoolFlag{Name: "json", Usage: "print result.json to stdout (live output goes to stderr)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no live output"},
			signingKeyFlag(),
		}, append(matchFlags(), evidenceFlags("0")...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("match takes no arguments (got %q); use --white and --black", c.Args().Slice())
			}
			evidence, err := readEvidence(c)
			if err != nil {
				return err
			}
			g, _, err := gameAndOptions(c)
			if err != nil {
				return err
			}
			white, err := loadBot(c, "white", c.String("white"), g)
			if err != nil {
				return err
			}
			black, err := loadBot(c, "black", c.String("black"), g)
			if err != nil {
				return err
			}
			key, err := signer(c)
			if err != nil {
				return err
			}
			ms, err := readMatchSettings(c)
			if err != nil {
				return err
			}
			defer ms.closer()
			b, err := newBuilder(c, ms.backend, ms.limits, nil)
			if err != nil {
				return err
			}
			bots := []*submission.Bot{white, black}
			if err := readyBots(c, b, bots); err != nil {
				return err
			}
			white, black = bots[0], bots[1]
			seed := c.Uint64("seed")
			if !c.IsSet("seed") {
				seed = match.RandomSeed()
			}
			dir := c.String("out")
			if dir == "" {
				dir = defaultMatchDir(white.Name, black.Name)
			}
			if _, err := os.Stat(filepath.Join(dir, transcript.FileName)); err == nil {
				return usagef("--out %s already holds a transcript; choose another directory", dir)
			}
			live := c.App.Writer
			if c.Bool("json") {
				live = c.App.ErrWriter
			}
			var obs match.Observer
			if !c.Bool("quiet") {
				obs = &liveView{w: live, tty: isTerminal(live)}
			}
			res, err := match.Run(c.Context, match.Config{
				Game: ms.game, Rules: ms.rules, Seed: seed,
				White: white, Black: black,
				Backend: ms.backend, Limits: ms.limits, OnFault: ms.onFault,
				Dir: dir, ArenaVersion: arenaVersion(), Observer: obs, Signer: key,
				Evidence: evidence,
			})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				enc.Encode(res)
			} else if !c.Bool("quiet") {
				fmt.Fprintf(c.App.Writer, "transcript: %s\n", filepath.Join(dir, transcript.FileName))
			}
			if res.Reason == transcript.ReasonAborted {
				return failf("match aborted: %s", res.AbortReason)
			}
			return nil
		},
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// liveView prints the match as it happens: one line per turn with the move,
// verdict and time, a compact board (rows separated by /), and the final board.
type liveView struct {
	w     io.Writer
	tty   bool
	names [2]string
	last  rules.State
}

func (v *liveView) Started(h transcript.Header) {
	v.names = [2]string{h.White.Name, h.Black.Name}
	fmt.Fprintf(v.w, "%s: %s (white) vs %s (black), seed %d, %s sandbox\n", h.Game, h.White.Name, h.Black.Name, h.Seed, h.Sandbox["backend"])
}

func (v *liveView) Turn(t transcript.Turn, st rules.State) {
	v.last = st
	verdict := t.Verdict
	if t.Substituted {
		verdict += " (random move played)"
	}
	move := t.Move
	if move == "" {
		move = "-"
	}
	board := ""
	switch st := st.(type) {
	case rules.Scorer:
		// A game on points shows the mover's replies and the score.
		p := st.Points()
		if side, err := rules.ParseSide(t.Side); err == nil {
			if replies := t.After.Sides()[side]; len(replies) > 0 {
				board = strings.Join(replies, " ") + "  "
			}
		}
		board += fmt.Sprintf("points %d-%d", p[0], p[1])
	case rules.Framer:
		board = compactBoard(st.Frame(rules.NoSide))
	}
	mark, end := "", ""
	if v.tty && t.Verdict != string(rules.OK) {
		mark, end = "\x1b[1;31m", "\x1b[0m"
	}
	fmt.Fprintf(v.w, "%4d %-5s %-6s %-22s %s%-14s%s %8.1f ms  %s\n", t.Ply, t.Side, t.Phase, move, mark, verdict, end, t.WallMs, board)
	if t.Verdict != string(rules.OK) && t.Reason != "" {
		fmt.Fprintf(v.w, "       %s\n", t.Reason)
	}
}

func (v *liveView) Finished(r transcript.Result) {
	if v.last != nil {
		if rr, ok := v.last.(rules.Renderer); ok {
			fmt.Fprint(v.w, "\n"+rr.Render())
		}
	}
	switch r.Winner {
	case transcript.WinnerWhite, transcript.WinnerBlack:
		name := r.White.Name
		if r.Winner == transcript.WinnerBlack {
			name = r.Black.Name
		}
		fmt.Fprintf(v.w, "\n%s (%s) wins: %s, after %d play plies%s\n", name, r.Winner, r.Reason, r.Plies, points(r))
	case transcript.WinnerDraw:
		fmt.Fprintf(v.w, "\ndraw: %s, after %d play plies%s\n", r.Reason, r.Plies, points(r))
	default:
		fmt.Fprintf(v.w, "\nmatch aborted: %s\n", r.AbortReason)
	}
}

// points shows a result's score, if the game keeps one.
func points(r transcript.Result) string {
	if len(r.Points) != 2 {
		return ""
	}
	return fmt.Sprintf("; points %d-%d", r.Points[0], r.Points[1])
}

// compactBoard writes the true board on one line, rows joined by '/', '.' for
// an empty square.
func compactBoard(f rules.Frame) string {
	rows := make([]string, len(f.Cells))
	blocked := map[[2]int]bool{}
	for _, b := range f.Blocked {
		blocked[b] = true
	}
	for r, row := range f.Cells {
		var b strings.Builder
		for c, cell := range row {
			switch {
			case cell != "":
				b.WriteString(cell)
			case blocked[[2]int{r, c}]:
				b.WriteByte('#')
			default:
				b.WriteByte('.')
			}
		}
		rows[r] = b.String()
	}
	return strings.Join(rows, "/")
}
