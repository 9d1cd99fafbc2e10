package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stream is what go test -json prints for two packages: b passes, with one
// skip and a subtest; a fails, one of its tests having failed.
const stream = `{"Action":"start","Package":"ex/b"}
{"Action":"run","Package":"ex/b","Test":"TestQuick"}
{"Action":"output","Package":"ex/b","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}
{"Action":"pass","Package":"ex/b","Test":"TestQuick","Elapsed":0.01}
{"Action":"run","Package":"ex/b","Test":"TestTable"}
{"Action":"run","Package":"ex/b","Test":"TestTable/slow"}
{"Action":"pass","Package":"ex/b","Test":"TestTable/slow","Elapsed":30}
{"Action":"pass","Package":"ex/b","Test":"TestTable","Elapsed":31}
{"Action":"run","Package":"ex/b","Test":"TestDocker"}
{"Action":"output","Package":"ex/b","Test":"TestDocker","Output":"    docker_test.go:9: skipping: no Docker engine\n"}
{"Action":"output","Package":"ex/b","Test":"TestDocker","Output":"--- SKIP: TestDocker (0.00s)\n"}
{"Action":"skip","Package":"ex/b","Test":"TestDocker","Elapsed":0}
{"Action":"pass","Package":"ex/b","Elapsed":31.5}
{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestBroken"}
{"Action":"output","Package":"ex/a","Test":"TestBroken","Output":"    a_test.go:7: want 2, got 3\n"}
{"Action":"fail","Package":"ex/a","Test":"TestBroken","Elapsed":2.5}
{"Action":"pass","Package":"ex/a","Test":"TestFine","Elapsed":7}
{"Action":"fail","Package":"ex/a","Elapsed":9.9}
{"ImportPath":"ex/c [ex/c.test]","Action":"build-output","Output":"c/c.go:3:1: syntax error\n"}
{"Action":"skip","Package":"ex/none","Elapsed":0}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	code := summarize(strings.NewReader(stream), &out)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	want := `pass ex/b (31.5s)
fail ex/a (9.9s)
c/c.go:3:1: syntax error
---- ex/none (0.0s)
SKIP ex/b TestDocker docker_test.go:9: skipping: no Docker engine

=== FAIL ex/a TestBroken
    a_test.go:7: want 2, got 3

=== FAIL ex/a 

slowest tests:
   31.00s  ex/b TestTable
    7.00s  ex/a TestFine
    2.50s  ex/a TestBroken
    0.01s  ex/b TestQuick

tests: 4 passed, 1 failed, 1 skipped
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSummaryExitsZeroWhenAllPass(t *testing.T) {
	var out strings.Builder
	in := `{"Action":"pass","Package":"ex/b","Test":"TestQuick","Elapsed":0.01}
{"Action":"pass","Package":"ex/b","Elapsed":0.2}
`
	if code := summarize(strings.NewReader(in), &out); code != 0 || !strings.HasSuffix(out.String(), "tests: 1 passed, 0 failed, 0 skipped\n") {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
}

func TestSummaryListsTheFifteenSlowest(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&in, `{"Action":"pass","Package":"ex","Test":"Test%02d","Elapsed":%d}`+"\n", i, i)
	}
	var out strings.Builder
	summarize(strings.NewReader(in.String()), &out)
	_, list, _ := strings.Cut(out.String(), "slowest tests:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	lines := strings.Split(list, "\n")
	if len(lines) != slowest || !strings.HasSuffix(lines[0], "ex Test20") || !strings.HasSuffix(lines[14], "ex Test06") {
		t.Fatalf("slowest:\n%s", list)
	}
}

// TestSummaryPrintsEachPackageWhenItFinishes: a package's line comes out
// while the other packages still run.
func TestSummaryPrintsEachPackageWhenItFinishes(t *testing.T) {
	r, w := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- summarize(r, outW)
		outW.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	fmt.Fprintln(w, `{"Action":"pass","Package":"ex/first","Test":"TestA","Elapsed":1}`)
	fmt.Fprintln(w, `{"Action":"pass","Package":"ex/first","Elapsed":1.2}`)
	select {
	case line := <-lines:
		if line != "pass ex/first (1.2s)" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the finished package was not printed while the run went on")
	}
	fmt.Fprintln(w, `{"Action":"pass","Package":"ex/second","Elapsed":3}`)
	w.Close()
	var rest []string
	for line := range lines {
		rest = append(rest, line)
	}
	if code := <-done; code != 0 || rest[0] != "pass ex/second (3.0s)" {
		t.Fatalf("exit code %d, then %q", code, rest)
	}
}

// A package that timed out ends without ending the test it was running:
// that test is a failure, shown with its output, the timeout's dump.
func TestSummaryShowsATestThatNeverEnded(t *testing.T) {
	in := `{"Action":"run","Package":"ex/h","Test":"TestFine"}
{"Action":"pass","Package":"ex/h","Test":"TestFine","Elapsed":1}
{"Action":"run","Package":"ex/h","Test":"TestHang"}
{"Action":"output","Package":"ex/h","Test":"TestHang","Output":"panic: test timed out after 40m0s\n"}
{"Action":"output","Package":"ex/h","Test":"TestHang","Output":"goroutine 7 [select]:\n"}
{"Action":"fail","Package":"ex/h","Elapsed":2400}
`
	var out strings.Builder
	code := summarize(strings.NewReader(in), &out)
	if code != 1 || !strings.Contains(out.String(), "=== FAIL ex/h TestHang (never ended: its package timed out or crashed)\npanic: test timed out after 40m0s\ngoroutine 7 [select]:\n") ||
		!strings.HasSuffix(out.String(), "tests: 1 passed, 1 failed, 0 skipped\n") {
		t.Fatalf("exit code %d:\n%s", code, out.String())
	}
}

// The cluster's tests say what they held the one test cluster for, and
// what they waited for it: the summary adds them up.
func TestSummaryAddsUpTheClustersTime(t *testing.T) {
	in := `{"Action":"output","Package":"ex/a","Test":"TestPods","Output":"    clustertest.go:120: the cluster: waited 0.5 s for it, held it 40.0 s\n"}
{"Action":"pass","Package":"ex/a","Test":"TestPods","Elapsed":41}
{"Action":"output","Package":"ex/b","Test":"TestMore","Output":"    clustertest.go:120: the cluster: waited 39.5 s for it, held it 20.5 s\n"}
{"Action":"pass","Package":"ex/b","Test":"TestMore","Elapsed":60}
`
	var out strings.Builder
	summarize(strings.NewReader(in), &out)
	if want := "the test cluster: held 60 s in all by 2 tests, one at a time; they waited 40 s in all for it\n"; !strings.Contains(out.String(), want) {
		t.Fatalf("the summary:\n%s\nwant %q", out.String(), want)
	}
	summarize(strings.NewReader(stream), &out)
	if strings.Count(out.String(), "the test cluster:") != 1 {
		t.Fatalf("a run without the cluster's tests says something of it:\n%s", out.String())
	}
}
