package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/settings"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// matchFlags are shared by every command that plays matches.
func matchFlags() []cli.Flag {
	d := sandbox.DefaultLimits()
	return append([]cli.Flag{
		gameFlag(),
		ruleFlag(),
		&cli.StringFlag{Name: "sandbox", Value: "docker", Usage: "where bots run: " + backendsSaid()},
		imageFlag(),
		runtimeFlag("the engine's, usually runc"),
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
	settings.Resolved
	backend sandbox.Backend
	closer  func()
}

// settingFlags name the flag each setting of settings.Settings comes from.
var settingFlags = map[string]string{"game": "--game", "rule": "--rule", "max plies": "--max-plies",
	"turn timeout": "--turn-timeout", "on fault": "--on-fault"}

// readMatchSettings reads matchFlags into settings.Settings, resolves them and
// opens the backend.
func readMatchSettings(c *cli.Context) (*matchSettings, error) {
	opts, err := ruleOptions(c)
	if err != nil {
		return nil, err
	}
	s := settings.Settings{Game: c.String("game"), Rules: opts, MaxPlies: c.Int("max-plies"),
		Limits: sandbox.DefaultLimits(), OnFault: c.String("on-fault")}
	if c.IsSet("max-plies") && s.MaxPlies < 1 {
		return nil, usagef("--max-plies: want 1 or more, got %d", s.MaxPlies)
	}
	if c.IsSet("turn-timeout") {
		s.TurnTimeout = c.Duration("turn-timeout")
	}
	if s.Limits.Memory, err = units.RAMInBytes(c.String("memory")); err != nil {
		return nil, usagef("--memory: %v", err)
	}
	s.Limits.CPUs = c.Float64("cpus")
	s.Limits.Pids = c.Int64("pids")
	r, err := s.Resolve()
	var bad *settings.SettingError
	if errors.As(err, &bad) {
		if flag := settingFlags[bad.Setting]; flag != "" {
			return nil, usagef("%s: %v", flag, bad.Err)
		}
		return nil, usagef("%v", bad.Err)
	}
	if err != nil {
		return nil, err
	}
	ms := &matchSettings{Resolved: r}
	ms.backend, ms.closer, err = openBackend(c, sandboxConfig(c), true)
	if err != nil {
		return nil, err
	}
	return ms, nil
}

// sandboxConfig reads the --sandbox, --image and --runtime flags.
func sandboxConfig(c *cli.Context) sandbox.Config {
	return sandbox.Config{Kind: c.String("sandbox"), Image: c.String("image"), Runtime: c.String("runtime")}
}

// backendSettings are the settings the flags give the backend kind names
// (sandbox.Config.Backend): the Docker engine's for docker, the cluster's
// for kubernetes (the organizer's build), none for the others.
func backendSettings(c *cli.Context, kind string) (any, error) {
	if kind == "" || kind == sandbox.DefaultKind {
		return dockerConn(c), nil
	}
	return otherSettings(c, kind)
}

// openBackend opens the sandbox backend cfg names (sandbox.Open) with the
// engine the global flags name; sweep removes what a killed arena left.
// The closer releases it.
func openBackend(c *cli.Context, cfg sandbox.Config, sweep bool) (sandbox.Backend, func(), error) {
	var err error
	if cfg.Backend, err = backendSettings(c, cfg.Kind); err != nil {
		return nil, nil, err
	}
	cfg.Sweep = sweep
	cfg.Notify = func(msg string) { fmt.Fprintln(c.App.ErrWriter, "arena:", msg) }
	b, release, err := sandbox.Open(c.Context, cfg)
	var unknown *sandbox.UnknownKindError
	if errors.As(err, &unknown) {
		return nil, nil, usagef("--sandbox: %v", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return b, func() {
		if err := release(); err != nil {
			// Whatever is left carries the owner label: the next run's sweep
			// removes it.
			slog.Warn("release the sandbox backend", "err", err)
		}
	}, nil
}

// loadBot loads a bot named as submission.NameBots said.
func loadBot(c *cli.Context, flag string, arg submission.BotArg, g rules.Game) (*submission.Bot, error) {
	langs, err := languages(c)
	if err != nil {
		return nil, err
	}
	pack, _ := g.(rules.Packager)
	b, err := submission.Load(arg.Path, submission.LoadOptions{Limits: submission.DefaultLimits(), Packager: pack,
		IsSource: langs.Knows, Name: arg.Name})
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
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
A BOT is an executable, a directory holding one, or a submission ZIP; NAME=PATH
gives it the name results show (by default the file's or directory's name, or,
when both bots' paths give the same one, their directories' names).

Exit 0 when the match was played to a result (whatever it is), 1 when it was
aborted (a fault of the host or sandbox, or Ctrl-C), 2 for bad usage.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "white", Usage: "the bot playing White (moves first); NAME=PATH names it", TakesFile: true},
			&cli.StringFlag{Name: "black", Usage: "the bot playing Black; NAME=PATH names it", TakesFile: true},
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
			for _, flag := range []string{"white", "black"} {
				if c.String(flag) == "" {
					return usagef("--%s is required: a bot executable, a directory holding one, a submission ZIP, or a source file (NAME=PATH names it)", flag)
				}
			}
			args, err := submission.NameBots([]string{c.String("white"), c.String("black")})
			if err != nil {
				return usagef("%v", err)
			}
			white, err := loadBot(c, "--white", args[0], g)
			if err != nil {
				return err
			}
			black, err := loadBot(c, "--black", args[1], g)
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
			b, err := newBuilder(c, ms.backend, ms.Limits, nil)
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
				obs = &liveView{w: live, tty: isTerminal(live), files: ms.Game.Protocol().Files, dir: dir}
			}
			res, err := match.Run(c.Context, match.Config{
				Game: ms.Game, Rules: ms.Rules, Seed: seed,
				White: white, Black: black,
				Backend: ms.backend, Limits: ms.Limits, OnFault: ms.OnFault,
				Dir: dir, ArenaVersion: arenaVersion(), Observer: obs, Signer: key,
				Evidence: evidence,
			})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				if err := enc.Encode(res); err != nil {
					return fmt.Errorf("print the result (it is in %s): %w", filepath.Join(dir, transcript.ResultFile), err)
				}
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
	if p, ok := w.(*pipeWatch); ok {
		w = p.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// liveView prints the match as it happens: one line per turn with the move,
// verdict and time, a compact board (rows separated by /), and the final board;
// at the end the result, and the fault that decided it with the bot's stderr.
type liveView struct {
	w   io.Writer
	tty bool
	// files is the game's file protocol (nil for a line game, whose bots'
	// stderr is in the transcript's footer, in dir).
	files *rules.FileProtocol
	dir   string
	names [2]string
	last  rules.State
	fault *transcript.Turn // the last turn that was not ok
}

func (v *liveView) Started(h transcript.Header, _ rules.State) {
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
	if t.Verdict == string(rules.OK) {
		return
	}
	v.fault = &t
	if e, ok := referee.ExplainExit(v.files, rules.Verdict(t.Verdict), t.ExitCode, t.StderrTail); ok {
		fmt.Fprintf(v.w, "       %s\n", e.Detail)
	} else if t.Reason != "" {
		fmt.Fprintf(v.w, "       %s\n", t.Reason)
	}
}

func (v *liveView) Finished(r transcript.Result) {
	if v.last != nil {
		if rr, ok := v.last.(rules.Renderer); ok {
			fmt.Fprint(v.w, "\n"+rr.Render())
		}
	}
	// The fault that ended the match: the last one, when the result's
	// reason is its verdict.
	var decided *transcript.Turn
	if n := len(r.Faults); n > 0 && v.fault != nil && r.Faults[n-1].Ply == v.fault.Ply && r.Reason == r.Faults[n-1].Verdict {
		decided = v.fault
	}
	switch r.Winner {
	case transcript.WinnerWhite, transcript.WinnerBlack:
		name := r.White.Name
		if r.Winner == transcript.WinnerBlack {
			name = r.Black.Name
		}
		fmt.Fprintf(v.w, "\n%s (%s) wins: %s, %s%s\n", name, r.Winner, r.Reason, played(r, decided), points(r))
	case transcript.WinnerDraw:
		fmt.Fprintf(v.w, "\ndraw: %s, %s%s\n", r.Reason, played(r, decided), points(r))
	default:
		fmt.Fprintf(v.w, "\nmatch aborted: %s\n", r.AbortReason)
		return
	}
	switch {
	case decided != nil:
		v.showFault("the fault that decided it", *decided)
	case v.fault != nil:
		fmt.Fprintf(v.w, "%s, each answered with a random legal move\n", words.Plural(len(r.Faults), "fault"))
		v.showFault("the last fault", *v.fault)
	}
}

// stderrLines is how many of the last lines of a faulting bot's stderr the
// live view shows.
const stderrLines = 10

// showFault prints a faulting turn: where, whose, the verdict and its
// reason, what the evidence adds to it, and the end of the bot's stderr.
func (v *liveView) showFault(label string, t transcript.Turn) {
	name := v.names[0]
	if t.Side == rules.Black.String() {
		name = v.names[1]
	}
	fmt.Fprintf(v.w, "%s: ply %d, %s (%s), %s: %s\n", label, t.Ply, t.Side, name, t.Phase, t.Verdict)
	if t.Reason != "" {
		fmt.Fprintf(v.w, "  %s\n", t.Reason)
	}
	if e, ok := referee.ExplainExit(v.files, rules.Verdict(t.Verdict), t.ExitCode, t.StderrTail); ok {
		fmt.Fprintf(v.w, "  %s\n  fix: %s\n", e.Detail, e.Fix)
	}
	tail, whose := t.StderrTail, "stderr"
	if v.files == nil {
		// A line game's bot is one process for the whole game: its stderr
		// is recorded when it ends, in the transcript's footer.
		tail, whose = v.sessionStderr(t.Side), "stderr of its process"
	}
	lines := strings.Split(strings.TrimRight(printable(tail), "\n"), "\n")
	switch {
	case strings.TrimSpace(tail) == "":
		fmt.Fprintf(v.w, "  %s: empty\n", whose)
		return
	case len(lines) > stderrLines:
		fmt.Fprintf(v.w, "  %s, the last %d lines:\n", whose, stderrLines)
		lines = lines[len(lines)-stderrLines:]
	default:
		fmt.Fprintf(v.w, "  %s:\n", whose)
	}
	for _, l := range lines {
		fmt.Fprintf(v.w, "    %s\n", l)
	}
}

// sessionStderr is the stderr tail a line game's transcript footer records
// for a side's bot, "" when there is none.
func (v *liveView) sessionStderr(side string) string {
	lines, err := transcript.ReadFile(filepath.Join(v.dir, transcript.FileName))
	if err != nil || len(lines) == 0 {
		return ""
	}
	var foot transcript.Footer
	if lines[len(lines)-1].Decode(&foot) != nil {
		return ""
	}
	for _, s := range foot.Sessions {
		if s.Side == side {
			return s.StderrTail
		}
	}
	return ""
}

// printable is a bot's output made safe for a terminal: valid UTF-8, no
// control characters but newlines and tabs.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}

// played says how far a match went, in the terms of result.json: turns
// counts every turn the bots were asked for, setup included (the one a
// fault ended the match on too), and the ply of a turn is its number among
// them; play plies leave setup out. decided is the fault that ended
// the match, if one did.
func played(r transcript.Result, decided *transcript.Turn) string {
	s := "after " + words.Plural(r.TurnsPlayed(), "turn")
	switch setup := r.Turns - r.Plies; { // the turns applied in setup
	case setup == 0:
		return s
	case r.Plies == 0 && decided != nil:
		return s + fmt.Sprintf(" (0 play plies: the fault came in %s)", decided.Phase)
	default:
		return s + fmt.Sprintf(" (%d in setup, %s)", setup, words.Plural(r.Plies, "play ply"))
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

// backendsSaid lists the sandbox backends this arena has, each as --sandbox
// names it and what it is: a team's arena has no kubernetes.
func backendsSaid() string {
	what := map[string]string{"docker": "docker (isolated)", "kubernetes": "kubernetes (a Pod each, on the cluster of --kube-config)", "local": "local (plain processes, UNSAFE)"}
	var out []string
	for _, k := range sandbox.Kinds() {
		out = append(out, cmp.Or(what[k], k))
	}
	return words.Or(out)
}
