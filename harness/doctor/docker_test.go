package doctor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
)

// versions are what the test base's Debian packages put in the image.
var versions = regexp.MustCompile(`python3 3\.\d+\.\d+ with numpy \d+\.\d+\S*, pandas \d+\.\d+\S*, tabulate \d+\.\d+\S*;`)

// toolchainVersions are what the test base's toolchains say of themselves.
var toolchainVersions = map[string]*regexp.Regexp{
	".py":   regexp.MustCompile(`^Python 3\.\d+\.\d+$`),
	".c":    regexp.MustCompile(`^gcc \(Debian [^)]+\) \d+\.\d+\.\d+$`),
	".cpp":  regexp.MustCompile(`^g\+\+ \(Debian [^)]+\) \d+\.\d+\.\d+$`),
	".java": regexp.MustCompile(`^javac \d+\.\d+\.\d+`),
	".js":   regexp.MustCompile(`^v\d+\.\d+\.\d+$`),
}

// names lists the checks' names.
func names(checks []sandbox.Check) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.Name)
	}
	return out
}

func TestCheckListsWhatTheRuntimeImageOffers(t *testing.T) {
	t.Parallel()
	cli, img := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	// No languages: the built-in table's.
	checks := Check(ctx, Config{Sandbox: sandbox.Config{Image: img}, Out: dir})

	// Every row, in the order arena doctor prints them.
	want := []string{"engine", "versions", "cgroups", "storage driver", "runtime", "runtime image", imageOffersCheck}
	for _, ext := range langs.Default().Exts() {
		want = append(want, "language "+ext)
	}
	want = append(want, "hardened container", "out-of-memory detection", "turn deadline", "host timers", "load headroom", "free space")
	if got := names(checks); !slices.Equal(got, want) {
		t.Fatalf("rows %q\nwant %q", got, want)
	}
	for _, c := range checks {
		if c.Status == sandbox.Skip {
			t.Errorf("%s is skipped on a working engine and image: %+v", c.Name, c)
		}
	}
	if c := checks[5]; c.Status != sandbox.OK || !strings.HasPrefix(c.Detail, img+" (") {
		t.Errorf("the runtime image row: %+v", c)
	}
	if c := checks[len(checks)-1]; !strings.Contains(c.Detail, " free in "+dir) {
		t.Errorf("the free space row: %+v", c)
	}
	row := checks[6]
	if row.Status != sandbox.OK || !versions.MatchString(row.Detail) || !strings.Contains(row.Detail, "glibc 2.") {
		t.Fatalf("the image offers row: %+v\nall rows: %+v", row, checks)
	}
	// Every language of the table, with the version its toolchain prints in
	// the test base.
	for i, ext := range langs.Default().Exts() {
		row := checks[7+i]
		if want := toolchainVersions[ext]; row.Status != sandbox.OK || !want.MatchString(row.Detail) {
			t.Errorf("%s: %s %q, want ok with %v", row.Name, row.Status, row.Detail, want)
		}
	}

	// The same image without pandas and tabulate: the doctor warns and names them.
	bare := withoutModules(t, cli, img, "pandas", "tabulate")
	got := probeImageOffers(ctx, sandbox.Config{Image: bare}, langs.Default())
	if got[0].Status != sandbox.Warn || !strings.Contains(got[0].Detail, "; no pandas, tabulate;") || !strings.Contains(got[0].Detail, "with numpy ") || got[0].Fix == "" {
		t.Fatalf("without pandas and tabulate: %+v", got[0])
	}
}

// An image without node and without jar: their languages warn with a fix,
// the others are untouched; a language of an organizer's table whose
// toolchain is not in the image warns too. Warnings are no failures.
func TestCheckWarnsWhenAToolchainIsMissing(t *testing.T) {
	t.Parallel()
	cli, img := dockertest.Engine(t)
	without := withoutFiles(t, cli, img, "/usr/bin/node", "/usr/bin/nodejs", "/usr/bin/jar", "/etc/alternatives/jar")
	langs, err := langs.Parse(langs.DefaultTable() + ".rs | rustc -O -o bot {src} | bot | {dir}/bot | - | rustc --version\n")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	checks := Check(ctx, Config{Sandbox: sandbox.Config{Image: without}, Languages: langs, Out: t.TempDir()})
	rows := map[string]sandbox.Check{}
	for _, r := range checks {
		rows[r.Name] = r
	}
	for ext, want := range map[string]struct{ detail, fix string }{
		".js":   {"no node in the image; node --version failed (exit 127)", "bots handed in as .js source would not build or run: rebuild the runtime image with arena image build (its Dockerfile installs nodejs)"},
		".java": {"no jar in the image; javac ", "rebuild the runtime image with arena image build"},
		".rs":   {"no rustc in the image; rustc --version failed (exit 127)", "install the toolchain (rustc) in the runtime image, e.g. with a Dockerfile FROM it, or drop .rs from the languages file"},
	} {
		r := rows["language "+ext]
		if r.Status != sandbox.Warn || !strings.HasPrefix(r.Detail, want.detail) || !strings.Contains(r.Fix, want.fix) {
			t.Errorf("%s: %+v, want a warning %q... with a fix %q", ext, r, want.detail, want.fix)
		}
	}
	for _, ext := range []string{".py", ".c", ".cpp"} {
		if r := rows["language "+ext]; r.Status != sandbox.OK || !toolchainVersions[ext].MatchString(r.Detail) {
			t.Errorf("%s: %+v", ext, r)
		}
	}
	for _, r := range checks {
		if strings.HasPrefix(r.Name, "language ") && r.Status == sandbox.Fail {
			t.Errorf("a missing toolchain fails: %+v", r)
		}
	}
}

// A worker on an engine without the runtime image is refused, with every
// check to show.
func TestEngineChecksRefuseAMachineWithoutTheImage(t *testing.T) {
	t.Parallel()
	dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := EngineChecks(ctx, Config{Sandbox: sandbox.Config{Image: fmt.Sprintf("arena-runtime:none-%d", time.Now().UnixNano())}})
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Failures() != 1 || !strings.Contains(err.Error(), "1 doctor check failed: runtime image") {
		t.Fatalf("got %v", err)
	}
	if got := strings.Join(names(failed.Checks), ", "); got != "engine, versions, cgroups, storage driver, runtime, runtime image, hardened container, out-of-memory detection, turn deadline" {
		t.Fatalf("checks %s", got)
	}
}

// An engine without the runtime asked for fails the runtime row, with a
// fix, and nothing is started under it.
func TestEngineChecksRefuseAMissingRuntime(t *testing.T) {
	t.Parallel()
	_, img := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := EngineChecks(ctx, Config{Sandbox: sandbox.Config{Image: img, Runtime: "runsc-missing"}})
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Failures() != 1 || !strings.Contains(err.Error(), "1 doctor check failed: runtime") {
		t.Fatalf("got %v", err)
	}
	for _, c := range failed.Checks {
		switch c.Name {
		case "runtime":
			if !strings.Contains(c.Detail, `no runtime "runsc-missing"`) || !strings.Contains(c.Fix, "scripts/runsc.sh") || !strings.Contains(c.Fix, "daemon.json") {
				t.Errorf("runtime row %+v", c)
			}
		case "runtime image", "hardened container", "out-of-memory detection", "turn deadline":
			if c.Status != sandbox.Skip {
				t.Errorf("%s ran without its runtime: %+v", c.Name, c)
			}
		}
	}
}

// Every language's hello world builds once in the sandbox and starts, timed.
// The bench tests measure: they run alone.
func TestBenchStartsAHelloWorldOfEachLanguage(t *testing.T) {
	_, img := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := Bench(ctx, Config{Sandbox: sandbox.Config{Image: img}, Runs: 10, HelloRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unknown) > 0 || len(r.Failed) > 0 {
		t.Fatalf("not measured: %v %v", r.Unknown, r.Failed)
	}
	byName := map[string]sandbox.Timing{}
	for _, tm := range r.Timings {
		byName[tm.Name] = tm
	}
	if r.Timings[0].Runs != 10 || r.Timings[0].XBare != 0 {
		t.Errorf("the first row is not the bare one of 10 runs: %+v", r.Timings[0])
	}
	for _, ext := range langs.Default().Exts() {
		b, turn := byName[ext+" hello world build"], byName[ext+" hello world turn"]
		if b.Runs != 1 || b.P50Ms <= 0 || turn.Runs != 3 || turn.P50Ms <= 0 || turn.XBare <= 0 {
			t.Errorf("%s: build %+v, turn %+v\nall: %+v", ext, b, turn, r.Timings)
		}
	}
	// The turns are really run: each said hello (startHello fails a
	// language whose turn did not). Which starts faster is the bench's to
	// say, not a test's: on a loaded host a C hello world's turn took as
	// long as a JVM's.
	j, c := byName[".java hello world turn"], byName[".c hello world turn"]
	t.Logf("java starts in %.2f ms, C in %.2f ms", j.P50Ms, c.P50Ms)
}

// A language whose hello world does not build is named as failed; one arena
// has no hello world in is named as unknown; the others are measured.
func TestBenchNamesWhatItCouldNotMeasure(t *testing.T) {
	_, img := dockertest.Engine(t)
	langs, err := langs.Parse(".c | gcc -O2 {src} -o bot -lnonesuch | bot | {dir}/bot | - | gcc --version\n" +
		".py | - | {src} | python3 {dir}/{src} | - | python3 --version\n" +
		".rs | rustc -O -o bot {src} | bot | {dir}/bot | - | rustc --version\n")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := Bench(ctx, Config{Sandbox: sandbox.Config{Image: img}, Languages: langs, Runs: 10, HelloRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Unknown, []string{".rs"}) {
		t.Errorf("unknown %q, want .rs", r.Unknown)
	}
	if len(r.Failed) != 1 || !strings.HasPrefix(r.Failed[0], ".c: the hello world did not build: ") || !strings.Contains(r.Failed[0], "nonesuch") {
		t.Errorf("failed %q", r.Failed)
	}
	var rows []string
	for _, tm := range r.Timings {
		rows = append(rows, tm.Name)
	}
	got := strings.Join(rows, ", ")
	if !strings.Contains(got, ".py hello world build, .py hello world turn") || strings.Contains(got, ".c hello world") || strings.Contains(got, ".rs") {
		t.Errorf("rows %s", got)
	}
}

// withoutFiles builds an image from img with the files removed, and removes
// it when the test ends.
func withoutFiles(t *testing.T, cli *client.Client, img string, files ...string) string {
	t.Helper()
	return derived(t, cli, img, "without-files", "RUN rm -f "+strings.Join(files, " "))
}

// withoutModules builds an image from img with the Python modules' packages
// removed, and removes it when the test ends.
func withoutModules(t *testing.T, cli *client.Client, img string, modules ...string) string {
	t.Helper()
	return derived(t, cli, img, "without-"+strings.Join(modules, "-"), "RUN cd /usr/lib/python3/dist-packages && rm -rf "+strings.Join(modules, " "))
}

// derived builds an image from img with one more Dockerfile line, offline,
// and removes it when the test ends.
func derived(t *testing.T, cli *client.Client, img, name, line string) string {
	t.Helper()
	tag := fmt.Sprintf("arena-runtime:test-%s-%d", name, time.Now().UnixNano())
	dockertest.BuildImage(t, cli, tag, fmt.Sprintf("FROM %s\n%s\n", img, line))
	return tag
}
