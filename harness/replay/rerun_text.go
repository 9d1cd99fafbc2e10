package replay

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/arenabots/arena/harness/transcript"
)

// WriteText prints the rerun beside the record: a row for the recorded turn
// and one per run (move, exit, verdict, wall and CPU time, and how long the
// host kept the bot waiting for a CPU), the spread of
// several runs, and whether they reproduce the record.
func (r *Rerun) WriteText(w io.Writer) {
	t := r.Recorded
	fmt.Fprintf(w, "ply %d, %s (%s), %s; turn limit %v\n\n", t.Ply, t.Side, botName(r.Header, t.Side), t.Phase, r.Limit)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tMOVE\tEXIT\tVERDICT\tWALL\tCPU\tHOST WAIT")
	row := func(name, move string, exit, sig int, verdict string, wall, cpu, wait float64) {
		e := fmt.Sprint(exit)
		if sig != 0 {
			e = fmt.Sprintf("signal %d", sig)
		}
		if move == "" {
			move = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f ms\t%.1f ms\t%.1f ms\n", name, move, e, verdict, wall, cpu, wait)
	}
	row("recorded", t.Move, t.ExitCode, t.Signal, t.Verdict, t.WallMs, t.CPUMs, t.HostWaitMs)
	for i, a := range r.Attempts {
		row(fmt.Sprintf("run %d", i+1), a.Move, a.ExitCode, a.Signal, a.Verdict, a.WallMs, a.CPUMs, a.HostWaitMs)
	}
	tw.Flush()
	if len(r.Attempts) > 1 {
		walls := make([]float64, len(r.Attempts))
		verdicts := map[string]int{}
		for i, a := range r.Attempts {
			walls[i] = a.WallMs
			verdicts[a.Verdict]++
		}
		slices.Sort(walls)
		fmt.Fprintf(w, "\n%d runs: wall min %.1f ms, p50 %.1f ms, max %.1f ms; verdicts: %s\n", len(walls), walls[0], walls[len(walls)/2], walls[len(walls)-1], CountWords(verdicts))
	}
	switch same := r.Reproduced(); {
	case len(r.Attempts) > 1:
		fmt.Fprintf(w, "\n%d of %d runs reproduce the recorded move and verdict\n", same, len(r.Attempts))
	case same == 1:
		fmt.Fprintln(w, "\nthe run reproduces the recorded move and verdict")
	default:
		fmt.Fprintln(w, "\nthe run does not reproduce the recorded move and verdict")
	}
	if t.StderrTail != "" {
		fmt.Fprintf(w, "\nrecorded stderr:\n%s", indent(t.StderrTail))
	}
	for i, a := range r.Attempts {
		if a.Stderr != "" && (i == 0 || a.Stderr != r.Attempts[i-1].Stderr) {
			fmt.Fprintf(w, "\nrun %d stderr:\n%s", i+1, indent(a.Stderr))
		}
	}
	for i, a := range r.Attempts {
		if a.EarlierDiffer > 0 {
			fmt.Fprintf(w, "run %d: %d of the %d earlier answers differ from the record (the first at ply %d); the bot was sent the recorded lines all the same\n",
				i+1, a.EarlierDiffer, a.Earlier, a.FirstDiffer)
		}
	}
}

// Public is r without what the bot of the turn wrote besides its answers
// (its recorded and rerun stderr, what it wrote out of turn): the rerun as
// anyone but that side's team and the organizer may see it, the verdicts,
// moves and times alone.
func (r *Rerun) Public() *Rerun {
	p := *r
	p.Recorded = r.Recorded.Public()
	p.Attempts = make([]Attempt, len(r.Attempts))
	for i, a := range r.Attempts {
		a.Stderr = ""
		p.Attempts[i] = a
	}
	return &p
}

// indent sets text off by four spaces a line, ending it with a newline.
func indent(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ") + "\n"
}

// Reproduced counts the runs that played the recorded move with the
// recorded verdict.
func (r *Rerun) Reproduced() int {
	same := 0
	for _, a := range r.Attempts {
		if a.Verdict == r.Recorded.Verdict && a.Move == r.Recorded.Move {
			same++
		}
	}
	return same
}

// CountWords says how many of each there were, the most first: "3 ok,
// 1 timeout".
func CountWords(counts map[string]int) string {
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

func botName(h transcript.Header, side string) string {
	if side == "black" {
		return h.Black.Name
	}
	return h.White.Name
}
