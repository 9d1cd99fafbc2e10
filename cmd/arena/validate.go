package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	units "github.com/docker/go-units"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/validate"
)

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
		all, err := submission.InDirs(paths)
		if err != nil {
			return usagef("--batch: %v", err)
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
		o.Backend, o.Limits, o.Rules = ms.backend, ms.Limits, ms.Rules
		if o.Builder, err = newBuilder(c, ms.backend, ms.Limits, nil); err != nil {
			return err
		}
		note, err := validate.Equip(c.Context, &o)
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintln(c.App.ErrWriter, "arena: warning:", note)
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
			if err := r.Save(o.Dir); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		if !c.Bool("json") {
			if err := r.WriteText(c.App.Writer); err != nil {
				return err
			}
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
