// Command testsummary reads `go test -json` on stdin and prints a readable
// summary: each package's result, the output of every failed test, every skipped
// test with its reason, and the totals. It exits 1 if anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	outputs := map[string]*strings.Builder{}
	var failed, skipped []string
	pkgs := map[string]string{}
	counts := map[string]int{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Println(sc.Text()) // build errors arrive as plain text
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
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
				pkgs[e.Package] = fmt.Sprintf("%-4s %s (%.1fs)", action, e.Package, e.Elapsed)
				if e.Action == "fail" {
					failed = append(failed, key)
				}
				continue
			}
			counts[e.Action]++
			switch e.Action {
			case "fail":
				failed = append(failed, key)
			case "skip":
				skipped = append(skipped, key)
			}
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		fmt.Println(pkgs[p])
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
		fmt.Printf("SKIP %s %s\n", k, reason)
	}
	for _, k := range failed {
		fmt.Printf("\n=== FAIL %s\n", k)
		if b := outputs[k]; b != nil {
			fmt.Print(b.String())
		}
	}
	fmt.Printf("\ntests: %d passed, %d failed, %d skipped\n", counts["pass"], counts["fail"], counts["skip"])
	if len(failed) > 0 {
		os.Exit(1)
	}
}
