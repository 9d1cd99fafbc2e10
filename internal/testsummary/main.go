// Command testsummary reads `go test -json` on stdin and prints a readable
// summary: each package's result as soon as the package finishes (build
// errors as they come), then every skipped test with its reason, the output
// of every failed test, the slowest tests, how long the cluster's tests
// held the one test cluster and waited for it, and the totals. It exits 1
// if anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// slowest is how many of the slowest tests the summary lists.
const slowest = 15

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
	// ImportPath is set on build-output events (Go 1.24 and later).
	ImportPath string
}

// clusterLine is the line internal/clustertest logs as a test gives the
// test cluster back: the cluster's tests hold its one node in turn, so
// what they held it for in all bounds the run from below.
var clusterLine = regexp.MustCompile(`the cluster: waited ([0-9.]+) s for it, held it ([0-9.]+) s`)

// timing is how long one top-level test took.
type timing struct {
	name    string // package and test
	elapsed float64
}

func main() {
	os.Exit(summarize(os.Stdin, os.Stdout))
}

// summarize reads the events from r, writes the summary to w as it goes, and
// returns the exit code: 1 if a test or a package failed, else 0.
func summarize(r io.Reader, w io.Writer) int {
	outputs := map[string]*strings.Builder{}
	var failed, skipped []string
	var times []timing
	running := map[string]bool{} // tests started and not yet ended
	var started []string
	counts := map[string]int{}
	var held, waited float64
	holders := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(w, sc.Text()) // build errors of older Go arrive as plain text
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "run":
			if !running[key] {
				started = append(started, key)
			}
			running[key] = true
		case "output":
			if m := clusterLine.FindStringSubmatch(e.Output); m != nil {
				wait, _ := strconv.ParseFloat(m[1], 64)
				hold, _ := strconv.ParseFloat(m[2], 64)
				waited, held, holders = waited+wait, held+hold, holders+1
			}
			b := outputs[key]
			if b == nil {
				b = &strings.Builder{}
				outputs[key] = b
			}
			if b.Len() < 64<<10 {
				b.WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				action := e.Action
				if action == "skip" {
					action = "----" // no test files
				}
				// Now: a run that prints nothing for minutes looks hung.
				fmt.Fprintf(w, "%-4s %s (%.1fs)\n", action, e.Package, e.Elapsed)
				if e.Action == "fail" {
					failed = append(failed, key)
				}
				continue
			}
			delete(running, key)
			counts[e.Action]++
			switch e.Action {
			case "fail":
				failed = append(failed, key)
			case "skip":
				skipped = append(skipped, key)
			}
			if e.Action != "skip" && !strings.Contains(e.Test, "/") {
				times = append(times, timing{key, e.Elapsed})
			}
		}
	}
	if err := sc.Err(); err != nil {
		// The exit code stays that of what was read: go test, whose
		// output is no longer read, fails on its own.
		fmt.Fprintf(w, "testsummary: reading the test events: %v\n", err)
	}
	// A package that timed out ends without ending its running tests: the
	// panic's dump (every goroutine) is in their output. Each is a failure.
	for _, k := range started {
		if running[k] {
			counts["fail"]++
			failed = append(failed, k+" (never ended: its package timed out or crashed)")
			outputs[k+" (never ended: its package timed out or crashed)"] = outputs[k]
		}
	}
	for _, k := range skipped {
		reason := ""
		if b := outputs[k]; b != nil {
			for _, line := range strings.Split(b.String(), "\n") {
				if strings.Contains(line, "skip") && !strings.HasPrefix(strings.TrimSpace(line), "---") {
					reason = strings.TrimSpace(line)
				}
			}
		}
		fmt.Fprintf(w, "SKIP %s %s\n", k, reason)
	}
	for _, k := range failed {
		fmt.Fprintf(w, "\n=== FAIL %s\n", k)
		if b := outputs[k]; b != nil {
			fmt.Fprint(w, b.String())
		}
	}
	if len(times) > 0 {
		sort.SliceStable(times, func(i, j int) bool { return times[i].elapsed > times[j].elapsed })
		fmt.Fprintf(w, "\nslowest tests:\n")
		for _, t := range times[:min(slowest, len(times))] {
			fmt.Fprintf(w, "%8.2fs  %s\n", t.elapsed, t.name)
		}
	}
	if holders > 0 {
		fmt.Fprintf(w, "\nthe test cluster: held %.0f s in all by %d tests, one at a time; they waited %.0f s in all for it\n", held, holders, waited)
	}
	fmt.Fprintf(w, "\ntests: %d passed, %d failed, %d skipped\n", counts["pass"], counts["fail"], counts["skip"])
	if len(failed) > 0 {
		return 1
	}
	return 0
}
