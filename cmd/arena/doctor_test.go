package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
)

// The doctor's policy is harness/doctor's, tested there; this is the
// command's wiring: its flags reach the doctor, the checks are printed as a
// table or as JSON, and a failed check exits 1.
func TestDoctorWiring(t *testing.T) {
	dockertest.Engine(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "languages.txt")
	if err := os.WriteFile(file, []byte(".c | gcc -O2 {src} -o bot | bot | {dir}/bot | - | gcc --version\n.rs | rustc -O -o bot {src} | bot | {dir}/bot | - | rustc --version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An image the engine does not have: the runtime image fails, what
	// needs it is skipped.
	img := fmt.Sprintf("arena-runtime:none-%d", time.Now().UnixNano())

	code, out, errs := runArena("doctor", "--json", "--image", img, "--languages", file, "--out", dir)
	if code != exitFailed || errs != "" {
		t.Fatalf("exit %d, want %d with nothing on stderr\n%s\n%s", code, exitFailed, out, errs)
	}
	var checks []sandbox.Check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json printed %q: %v", out, err)
	}
	var rows []string
	for _, c := range checks {
		rows = append(rows, c.Name+"="+string(c.Status))
	}
	want := "engine=ok versions=ok cgroups=ok storage driver=ok runtime=ok runtime image=fail image offers=skip language .c=skip language .rs=skip " +
		"hardened container=skip out-of-memory detection=skip turn deadline=skip host timers="
	if got := strings.Join(rows, " "); !strings.HasPrefix(got, want) {
		t.Fatalf("rows %s\nwant %s...", got, want)
	}
	if c := checks[5]; !strings.Contains(c.Detail, img) {
		t.Errorf("the runtime image row does not name %s: %+v", img, c)
	}
	if c := checks[len(checks)-1]; c.Name != "free space" || !strings.Contains(c.Detail, " free in "+dir) {
		t.Errorf("the free space row does not name %s: %+v", dir, c)
	}

	code, out, errs = runArena("doctor", "--image", img, "--languages", file, "--out", dir)
	if code != exitFailed || !strings.Contains(errs, "arena: 1 check failed; official matches need them to pass") {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, out, errs)
	}
	for _, want := range []string{`(?m)^CHECK +STATUS +DETAIL$`, `(?m)^runtime image +FAIL +.*` + regexp.QuoteMeta(img), `(?m)^ +fix: arena image build`,
		`(?m)^language \.rs +SKIP +needs the runtime image$`, `(?m)^free space +(OK|WARN) +.* free in ` + regexp.QuoteMeta(dir)} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("doctor printed no %q:\n%s", want, out)
		}
	}

	// The bench's settings reach it, and a bad one is bad usage.
	for flag, want := range map[string]string{"--runs=9": "arena: --runs must be at least 10", "--hello-runs=-1": "arena: --hello-runs must not be negative"} {
		if code, out, errs := runArena("doctor", "--bench", flag); code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, want %d with %q\n%s\n%s", flag, code, exitUsage, want, out, errs)
		}
	}
}
