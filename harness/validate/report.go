package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/arenabots/arena/internal/words"
)

// The files Save writes.
const (
	ReportJSON = "report.json"
	ReportText = "report.txt"
)

// LoadReport reads the report Save kept in dir.
func LoadReport(dir string) (*Report, error) {
	data, err := os.ReadFile(filepath.Join(dir, ReportJSON))
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReportJSON), err)
	}
	return &r, nil
}

// Save keeps the report beside a submission's files: report.json and
// report.txt (WriteText).
func (r *Report) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReportJSON), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ReportText), []byte(b.String()), 0o644)
}

// WriteText writes the report as arena validate prints it: each check with
// its fix and evidence, then the bot's usage against the limits.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	w = ew
	res := "PASS"
	if !r.Pass {
		res = "FAIL"
	}
	fmt.Fprintf(w, "%s: %s (%d failed, %s)\n", r.Path, res, r.Failures, words.Plural(r.Warnings, "warning"))
	if f := r.First(); f != nil {
		fmt.Fprintf(w, "  fix first: %s: %s\n", f.Name, f.Detail)
	}
	for _, ch := range r.Checks {
		fmt.Fprintf(w, "  %-4s  %-20s %s\n", ch.Status, ch.Name, ch.Detail)
		if ch.Fix != "" && ch.Status != Pass {
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
		fmt.Fprintf(w, "  usage: %s, p50 %.1f ms, max %.1f ms of %.0f ms; peak memory %.1f MiB of %d MiB\n",
			words.Plural(u.Turns, "turn"), u.P50Ms, u.MaxMs, u.LimitMs, float64(u.PeakMemory)/(1<<20), u.MemLimit>>20)
		if u.StartLimitMs > 0 {
			fmt.Fprintf(w, "         first answer (starting the program included): at most %.1f ms of %.0f ms\n", u.StartMs, u.StartLimitMs)
		}
	}
	fmt.Fprintln(w)
	return ew.err
}

// errWriter keeps the first error of a run of writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// Summary is the failing check to fix first (First) in one line, or
// "failed" when no check names it.
func (r *Report) Summary() string {
	if c := r.First(); c != nil {
		return c.Name + ": " + c.Detail
	}
	return "failed"
}
