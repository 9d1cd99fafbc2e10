package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/images"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// builtinOpponent is this executable as the random bot of game, if it can run
// in any image (it must be static).
func builtinOpponent(game rules.Game) (*submission.Bot, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := images.CheckStatic(self); err != nil {
		return nil, fmt.Errorf("the built-in random bot is this arena binary, which must be static to run in the image (build it with make): %v", strings.TrimPrefix(err.Error(), "agent "))
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return nil, err
	}
	entry := randomBotPrefix + game.Name()
	return &submission.Bot{Name: "random", SHA256: submission.Sum(data), Source: "built in",
		Program: sandbox.Program{Name: "random", Entry: entry, Files: []sandbox.File{{Name: entry, Data: data, Mode: 0o755}}}}, nil
}

func validateCommand() *cli.Command {
	d := submission.DefaultLimits()
	return &cli.Command{
		Name:      "validate",
		Usage:     "check submissions the way the event will run them",
		UsageText: "arena validate [options] SUBMISSION...   (a ZIP or a directory; --batch DIR for a directory of them)",
		Description: `Checks each submission and reports every problem with a fix:
  archive      size, entry count, no path escapes, links, duplicates, encryption, bombs
  executable   exactly one ELF (or one #! script); Windows/macOS builds explained
  format, linking, glibc, libraries, interpreter
               can it run in the runtime image: x86-64, glibc symbol versions,
               shared libraries, script interpreter
  source, readme
               source present; README with the algorithm, build steps, data file
  answers      in the real sandbox with the official limits: every setup step and
               play positions (fogged, facing a shield, abilities used) as both
               colours must get a legal move in time, obeying the data-file rule
  match        one full match against the built-in random bot as each colour
For each behavioural failure the report shows the state given, the answer, the
exit code, the time and the stderr tail, and it states the bot's p50/max turn
time and peak memory against the limits.

Exit 0 when every submission passes (warnings allowed), 1 when any fails, 2 for
bad usage or an infrastructure error.`,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "batch", Usage: "each argument is a directory holding submissions"},
			&cli.BoolFlag{Name: "json", Usage: "print the full reports as JSON"},
			&cli.StringFlag{Name: "out", Usage: "keep a report, the extracted files and the matches per submission under this directory"},
			&cli.BoolFlag{Name: "static-only", Usage: "skip the checks that run the bot"},
			&cli.StringFlag{Name: "max-zip-bytes", Value: units.BytesSize(float64(d.MaxArchiveBytes)), Usage: "largest ZIP accepted"},
			&cli.StringFlag{Name: "max-unpacked-bytes", Value: units.BytesSize(float64(d.MaxTotalBytes)), Usage: "largest total of uncompressed sizes"},
			&cli.IntFlag{Name: "max-entries", Value: d.MaxEntries, Usage: "most entries in a ZIP"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the test positions and matches"},
		}, matchFlags()...),
		Action: runValidate,
	}
}

func runValidate(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return usagef("name at least one submission (a ZIP or a directory)")
	}
	if c.Bool("batch") {
		var all []string
		for _, dir := range paths {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return usagef("--batch: %v", err)
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), ".") {
					all = append(all, filepath.Join(dir, e.Name()))
				}
			}
		}
		paths = all
	}
	lim := submission.DefaultLimits()
	for flag, dst := range map[string]*int64{"max-zip-bytes": &lim.MaxArchiveBytes, "max-unpacked-bytes": &lim.MaxTotalBytes} {
		n, err := units.RAMInBytes(c.String(flag))
		if err != nil || n <= 0 {
			return usagef("--%s: want a size such as 256MiB, got %q", flag, c.String(flag))
		}
		*dst = n
	}
	lim.MaxEntries = c.Int("max-entries")
	g, _, err := gameAndOptions(c)
	if err != nil {
		return err
	}
	o := validate.Options{Intake: lim, Seed: c.Uint64("seed"), Game: g}
	if !c.Bool("static-only") {
		ms, err := readMatchSettings(c)
		if err != nil {
			return err
		}
		defer ms.closer()
		o.Backend, o.Limits, o.Rules = ms.backend, ms.limits, ms.rules
		if o.Facts, err = validate.ProbeImage(c.Context, ms.backend, ms.limits); err != nil {
			return fmt.Errorf("read the runtime image: %w", err)
		}
		if o.Builder, err = newBuilder(c, ms.backend, ms.limits, nil); err != nil {
			return err
		}
		if o.Opponent, err = builtinOpponent(ms.game); err != nil {
			fmt.Fprintln(c.App.ErrWriter, "arena: warning:", err, "; the full matches are skipped")
		}
	}
	var reports []*validate.Report
	for _, p := range paths {
		if out := c.String("out"); out != "" {
			o.Dir = filepath.Join(out, strings.TrimSuffix(filepath.Base(filepath.Clean(p)), ".zip"))
			if err := os.RemoveAll(o.Dir); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
		}
		r, err := validate.Validate(c.Context, p, o)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		reports = append(reports, r)
		if o.Dir != "" {
			if err := saveReport(o.Dir, r); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		if !c.Bool("json") {
			printReport(c.App.Writer, r)
		}
	}
	failed := 0
	for _, r := range reports {
		if !r.Pass {
			failed++
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return err
		}
	} else if len(reports) > 1 {
		tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nSUBMISSION\tRESULT\tFAILED CHECKS\tWARNINGS")
		for _, r := range reports {
			res, names := "PASS", []string{}
			for _, ch := range r.Checks {
				if ch.Status == validate.Fail {
					names = append(names, ch.Name)
				}
			}
			if !r.Pass {
				res = "FAIL"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", r.Name, res, strings.Join(names, ", "), r.Warnings)
		}
		tw.Flush()
	}
	if failed > 0 {
		if c.Bool("json") {
			return silent(exitFailed)
		}
		return failf("%d of %d submissions failed", failed, len(reports))
	}
	return nil
}

// saveReport keeps a submission's report beside its files, as JSON and text.
func saveReport(dir string, r *validate.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	printReport(&b, r)
	return os.WriteFile(filepath.Join(dir, "report.txt"), []byte(b.String()), 0o644)
}

func printReport(w io.Writer, r *validate.Report) {
	res := "PASS"
	if !r.Pass {
		res = "FAIL"
	}
	fmt.Fprintf(w, "%s: %s (%d failed, %d warnings)\n", r.Path, res, r.Failures, r.Warnings)
	for _, ch := range r.Checks {
		fmt.Fprintf(w, "  %-4s  %-20s %s\n", ch.Status, ch.Name, ch.Detail)
		if ch.Fix != "" && ch.Status != validate.Pass {
			fmt.Fprintf(w, "        %-20s fix: %s\n", "", ch.Fix)
		}
		if e := ch.Evidence; e != nil && e.Output != "" {
			fmt.Fprintf(w, "        %-20s %s said:\n", "", e.Label)
			for _, l := range strings.Split(e.Output, "\n") {
				fmt.Fprintf(w, "        %-20s   %s\n", "", l)
			}
		} else if e != nil {
			exit := fmt.Sprintf("exit %d", e.ExitCode)
			if e.Signal != 0 {
				exit = fmt.Sprintf("killed by signal %d", e.Signal)
			}
			fmt.Fprintf(w, "        %-20s given (%s): %s\n", "", e.Label, strings.TrimSpace(e.State))
			fmt.Fprintf(w, "        %-20s answer: %q\n", "", e.Answer)
			fmt.Fprintf(w, "        %-20s %s after %.1f ms, peak %.1f MiB\n", "", exit, e.WallMs, float64(e.PeakMemory)/(1<<20))
			if e.StderrTail != "" {
				fmt.Fprintf(w, "        %-20s stderr: %s\n", "", strings.ReplaceAll(strings.TrimSpace(e.StderrTail), "\n", "\n                                     "))
			}
			if len(e.Dialogue) > 0 {
				fmt.Fprintf(w, "        %-20s the dialogue up to it (> sent, ? asked, < answered):\n", "")
				for _, l := range e.Dialogue {
					fmt.Fprintf(w, "        %-20s   %s\n", "", l)
				}
			}
			if e.Board != "" {
				fmt.Fprintf(w, "        %-20s the position it was asked in:\n", "")
				for _, l := range strings.Split(strings.TrimRight(e.Board, "\n"), "\n") {
					fmt.Fprintf(w, "        %-20s   %s\n", "", l)
				}
			}
		}
	}
	if u := r.Usage; u != nil {
		fmt.Fprintf(w, "  usage: %d turns, p50 %.1f ms, max %.1f ms of %.0f ms; peak memory %.1f MiB of %d MiB\n",
			u.Turns, u.P50Ms, u.MaxMs, u.LimitMs, float64(u.PeakMemory)/(1<<20), u.MemLimit>>20)
	}
	fmt.Fprintln(w)
}
