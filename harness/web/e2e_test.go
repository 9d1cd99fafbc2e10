package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/client"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/ziptest"
)

// exampleZip is a ZIP of an example submission directory of the module
// (examples/NAME), its files as they are, executables kept executable.
func exampleZip(t *testing.T, name string) []byte {
	t.Helper()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", name)
	var entries []ziptest.Entry
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		entries = append(entries, ziptest.Entry{Name: filepath.ToSlash(rel), Data: data, Mode: info.Mode().Perm()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ziptest.Bytes(t, entries...)
}

// writeFile writes data to a new file named name and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor uploads path as c's team and waits for its validation.
func waitFor(t *testing.T, c *client.Client, path string) (event.Submission, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	sub, err := c.Upload(ctx, path)
	if err != nil {
		t.Fatalf("upload %s: %v", filepath.Base(path), err)
	}
	acked := time.Since(start)
	if sub.State != event.Queued {
		t.Errorf("a new upload is %q, want queued", sub.State)
	}
	var started time.Duration
	done, err := c.Wait(ctx, sub.ID, func(s event.Submission) {
		if started == 0 && s.State != event.Queued {
			started = time.Since(start)
		}
	})
	if err != nil {
		t.Fatalf("wait for %s: %v", filepath.Base(path), err)
	}
	// The figures of the closing note: the acknowledgement includes the
	// transfer over loopback; "started" is seen by polling (every 0.5 s or
	// more).
	t.Logf("%s: acknowledged in %v, validation seen started at %v, %s at %v", filepath.Base(path),
		acked.Round(time.Millisecond), started.Round(time.Millisecond), done.State, time.Since(start).Round(time.Millisecond))
	report, err := c.ReportText(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	return done, report
}

// TestTeamsSubmitOverHTTPAndGetTheirReports: the real server on the real
// engine validates what teams upload through the API: a good Code Clash
// ZIP passes and becomes active, a broken C++ source fails with the
// compiler's line, a compression bomb and a zip-slip are refused before
// anything is unpacked, and `arena submit` reports and exits by the outcome.
func TestTeamsSubmitOverHTTPAndGetTheirReports(t *testing.T) {
	t.Parallel()
	// The ladder is off: this test is about validation (the ladder has its
	// own test).
	e := newLiveEvent(t, "game = \"codeclash\"\n[quotas]\npending_validations = 10\n[ladder]\nenabled = false\n")
	a := &client.Client{Server: e.srv.URL, Token: e.a.Token}

	type result struct {
		sub    event.Submission
		report string
	}
	uploads := map[string]string{
		"good":  writeFile(t, "python.zip", exampleZip(t, "python")),
		"cpp":   writeFile(t, "bot.cpp", []byte("#include <cstdio>\nint main() {\n  this is not C++;\n}\n")),
		"bomb":  writeFile(t, "bomb.zip", ziptest.Bytes(t, ziptest.Entry{Name: "zeros", Data: make([]byte, 64<<20)})),
		"slip":  writeFile(t, "slip.zip", ziptest.Bytes(t, ziptest.Entry{Name: "../../etc/cron.d/x", Data: []byte("* * * * * root id\n")})),
		"empty": writeFile(t, "empty.zip", nil),
	}
	// The empty upload is refused at once; the others are validated two at
	// a time.
	if _, err := a.Upload(context.Background(), uploads["empty"]); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty upload: %v, want it refused as empty", err)
	}
	results := map[string]result{}
	res := make(chan struct {
		name string
		result
	})
	for _, name := range []string{"good", "cpp", "bomb", "slip"} {
		go func() {
			sub, rep := waitFor(t, a, uploads[name])
			res <- struct {
				name string
				result
			}{name, result{sub, rep}}
		}()
	}
	for range 4 {
		r := <-res
		results[r.name] = r.result
	}

	good := results["good"]
	if good.sub.State != event.Passed || !strings.Contains(good.report, "PASS") {
		t.Errorf("the example Python bot: %s (%s)\n%s\nserver log:\n%s", good.sub.State, good.sub.Summary, good.report, e.srv.Logs())
	}
	if strings.Contains(good.report, e.dir) {
		t.Errorf("the report shows where the server keeps uploads:\n%s", good.report)
	}
	cpp := results["cpp"]
	if cpp.sub.State != event.Failed || !strings.Contains(cpp.report, "bot.cpp:3") {
		t.Errorf("a broken C++ source: %s (%s), want failed with the compiler's line bot.cpp:3:\n%s", cpp.sub.State, cpp.sub.Summary, cpp.report)
	}
	for name, want := range map[string]string{"bomb": "compression bomb", "slip": "escapes the archive"} {
		r := results[name]
		if r.sub.State != event.Failed || !strings.HasPrefix(r.sub.Summary, "archive:") || !strings.Contains(r.report, want) {
			t.Errorf("%s: %s (%s), want failed at the archive check with %q:\n%s", name, r.sub.State, r.sub.Summary, want, r.report)
		}
		// Refused before unpacking: no file of it was written.
		if _, err := os.Stat(filepath.Join(e.dir, event.ValidationsDir, fmt.Sprint(r.sub.ID), "files")); !os.IsNotExist(err) {
			t.Errorf("%s: its files were unpacked (%v)", name, err)
		}
	}

	// The passed upload is active; the failed ones are not.
	ctx := context.Background()
	for name, r := range results {
		sub, err := a.Submission(ctx, r.sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sub.Active != (name == "good") {
			t.Errorf("%s: active %v", name, sub.Active)
		}
	}
	// Its games against the built-in bot are its team's.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/games", nil)
	req.Header.Set("Authorization", "Bearer "+e.a.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if n := strings.Count(buf.String(), `"kind": "validation"`); n != 2 {
		t.Errorf("%d validation games, want 2 (as white and as black):\n%s", n, buf.String())
	}

	// arena submit, as a team's CI runs it: exit 0 when the upload passed,
	// 1 when it failed.
	arena := gobuild.MustStatic(t, "./cmd/arena")
	tokenFile := writeFile(t, "token", []byte(e.b.Token+"\n"))
	for _, c := range []struct {
		path string
		exit int
		out  string
	}{{uploads["good"], 0, "PASS"}, {uploads["slip"], 1, "FAIL"}} {
		cmd := exec.Command(arena, "submit", "--server", e.srv.URL, "--token-file", tokenFile, c.path)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.exit || !strings.Contains(stdout.String(), c.out) {
			t.Errorf("arena submit %s: exit %d, want %d with %q:\n%s\n%s", filepath.Base(c.path), code, c.exit, c.out, stdout.String(), stderr.String())
		}
	}
}

// TestAPythonTilesSourcePasses: a tiles event validates a Python bot handed
// in as source.
func TestAPythonTilesSourcePasses(t *testing.T) {
	t.Parallel()
	e := newLiveEvent(t, "game = \"tiles\"\n")
	a := &client.Client{Server: e.srv.URL, Token: e.a.Token}
	sub, report := waitFor(t, a, writeFile(t, "tiles.zip", exampleZip(t, "tiles")))
	if sub.State != event.Passed {
		t.Errorf("the example Python tiles bot: %s (%s)\n%s\nserver log:\n%s", sub.State, sub.Summary, report, e.srv.Logs())
	}
}

// TestEveryStarterPassesItsEvent: every starter the site of an event of any
// game offers, downloaded as it is and uploaded, passes that event's
// validation on the real engine (the browser test also walks Code Clash's
// first one through the pages).
func TestEveryStarterPassesItsEvent(t *testing.T) {
	for _, game := range []string{"codeclash", "checkers", "tiles", "chess", "acm6x6"} {
		t.Run(game, func(t *testing.T) {
			t.Parallel()
			e := newLiveEvent(t, "game = \""+game+"\"\n")
			code, page := callAPI(t, e.srv.URL, "GET", "/how-to-submit", "", "")
			links := regexp.MustCompile(`href="(/how-to-submit/[^"]+\.zip)"`).FindAllStringSubmatch(page, -1)
			if code != http.StatusOK || len(links) == 0 {
				t.Fatalf("how to submit: %d, %d starters", code, len(links))
			}
			for _, l := range links {
				res, err := http.Get(e.srv.URL + l[1])
				if err != nil || res.StatusCode != http.StatusOK {
					t.Fatalf("download %s: %v %v", l[1], res, err)
				}
				data, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				sub, report := waitFor(t, &client.Client{Server: e.srv.URL, Token: e.a.Token}, writeFile(t, path.Base(l[1]), data))
				if sub.State != event.Passed {
					t.Errorf("the starter %s: %s (%s)\n%s", l[1], sub.State, sub.Summary, report)
				}
			}
		})
	}
}
