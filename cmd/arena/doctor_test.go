package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox/docker"
)

// needs is a game adapter that needs what it lists of the image.
type needs []string

func (needs) Package(map[string][]byte) (map[string][]byte, string, error) { return nil, "", nil }
func (needs) Submission() string                                           { return "" }
func (n needs) Needs() []string                                            { return n }

func TestOffersCheckNamesVersionsAndWhatIsMissing(t *testing.T) {
	facts := func(cmds ...string) *validate.ImageFacts {
		f := &validate.ImageFacts{Glibc: "2.39", Libraries: map[string]bool{"libc.so.6": true, "libm.so.6": true},
			Commands: map[string]bool{"sh": true, "/bin/sh": true}, Versions: map[string]string{}}
		for _, c := range cmds {
			name, ver, _ := strings.Cut(c, " ")
			f.Commands[name] = true
			f.Versions[name] = ver
		}
		return f
	}
	checkers := map[string]rules.Packager{"checkers": needs{"python3", "python3-numpy"}}
	cases := []struct {
		name   string
		facts  *validate.ImageFacts
		games  map[string]rules.Packager
		status docker.Status
		detail string
	}{
		{"everything the event's bots import", facts("python3 3.12.3", "python3-numpy 1.26.4", "python3-pandas 2.1.4", "python3-tabulate 0.8.10"), checkers, docker.OK,
			"glibc 2.39, 2 shared libraries; python3 3.12.3 with numpy 1.26.4, pandas 2.1.4, tabulate 0.8.10; interpreters python3, sh"},
		{"a module without a version", facts("python3 3.13.5", "python3-numpy 2.2.4", "python3-pandas 2.2.3", "python3-tabulate"), nil, docker.OK,
			"python3 3.13.5 with numpy 2.2.4, pandas 2.2.3, tabulate;"},
		{"no pandas, no tabulate", facts("python3 3.12.3", "python3-numpy 1.26.4"), checkers, docker.Warn,
			"python3 3.12.3 with numpy 1.26.4; no pandas, tabulate; interpreters python3, sh"},
		{"no python3", facts(), checkers, docker.Warn,
			"glibc 2.39, 2 shared libraries; no python3; interpreters sh; checkers needs python3, python3-numpy"},
		{"a game's need unmet", facts("python3 3.12.3", "python3-numpy 1.26.4", "python3-pandas 2.1.4", "python3-tabulate 0.8.10"),
			map[string]rules.Packager{"checkers": needs{"python3-scipy"}}, docker.Warn, "; checkers needs python3-scipy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := offersCheck(c.facts, c.games)
			if got.Name != imageOffersCheck || got.Status != c.status || !strings.Contains(got.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s with %q", got.Status, got.Detail, c.status, c.detail)
			}
			if (got.Status == docker.OK) != (got.Fix == "") {
				t.Fatalf("status %s with fix %q", got.Status, got.Fix)
			}
		})
	}
}

func TestImageOffersFollowsTheRuntimeImageRow(t *testing.T) {
	checks := []docker.Check{{Name: "engine", Status: docker.OK}, {Name: "runtime image", Status: docker.Fail}, {Name: "hardened container", Status: docker.Skip}}
	got := withImageOffers(context.Background(), nil, "none", build.Default(), checks)
	var names []string
	for _, c := range got {
		names = append(names, c.Name+"="+string(c.Status))
	}
	want := "engine=ok runtime image=fail image offers=skip language .c=skip language .cpp=skip language .java=skip language .js=skip language .py=skip hardened container=skip"
	if strings.Join(names, " ") != want {
		t.Fatalf("rows %s, want %s", strings.Join(names, " "), want)
	}
}

func TestProgramsOfALanguage(t *testing.T) {
	langs := build.Default()
	for ext, want := range map[string]string{".py": "python3", ".c": "gcc", ".cpp": "g++", ".java": "javac jar java", ".js": "node"} {
		if got := strings.Join(programs(langs[ext]), " "); got != want {
			t.Errorf("%s: %q, want %q", ext, got, want)
		}
	}
	l := build.Language{Ext: ".x", Version: "CC=1 /opt/x/bin/xc --version | head -1", Build: "(xc -o bot {src}; ./fix bot) || \"$CC\" x", Run: "{dir}/bot", Check: "xlint {src}"}
	if got, want := strings.Join(programs(l), " "), "/opt/x/bin/xc head xc xlint"; got != want {
		t.Errorf("programs %q, want %q", got, want)
	}
}

func TestLanguageRowSaysTheVersionOrWhatIsMissing(t *testing.T) {
	langs := build.Default()
	custom := build.Language{Ext: ".rs", Build: "rustc -O -o bot {src}", Artifact: "bot", Run: "{dir}/bot", Version: "rustc --version"}
	otherJava := langs[".java"]
	otherJava.Version = "java -version"
	cases := []struct {
		name   string
		lang   build.Language
		tc     validate.Toolchain
		found  bool
		status docker.Status
		detail string
		fix    string
	}{
		{"a version", langs[".c"], validate.Toolchain{Version: "gcc (Debian 14.2.0-19) 14.2.0"}, true, docker.OK, "gcc (Debian 14.2.0-19) 14.2.0", ""},
		{"no toolchain", langs[".java"], validate.Toolchain{Missing: []string{"javac", "jar", "java"}, Error: "javac -version failed (exit 127): sh: 1: javac: not found"}, true, docker.Warn,
			"no javac, jar, java in the image; javac -version failed (exit 127): sh: 1: javac: not found", "its Dockerfile installs default-jdk-headless (javac, jar and java)"},
		{"a version but a program missing", langs[".java"], validate.Toolchain{Version: "javac 21.0.8", Missing: []string{"jar"}}, true, docker.Warn,
			"no jar in the image; javac 21.0.8", "arena image build"},
		{"a failing version command", langs[".js"], validate.Toolchain{Error: "node --version failed (exit 1): node: libicu missing"}, true, docker.Warn,
			"node --version failed (exit 1): node: libicu missing", "installs nodejs"},
		{"not asked", langs[".py"], validate.Toolchain{}, false, docker.Warn, "the image probe did not ask about it", "installs python3"},
		{"a language of the organizer's", custom, validate.Toolchain{Missing: []string{"rustc"}, Error: "rustc --version failed (exit 127)"}, true, docker.Warn,
			"no rustc in the image", "install the toolchain (rustc) in the runtime image, e.g. with a Dockerfile FROM it, or drop .rs from the languages file"},
		{"a built-in extension called otherwise", otherJava, validate.Toolchain{Missing: []string{"java"}, Error: "x"}, true, docker.Warn,
			"no java", "install the toolchain (java, javac, jar)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := languageRow(c.lang, c.tc, c.found)
			if got.Name != "language "+c.lang.Ext || got.Status != c.status || !strings.Contains(got.Detail, c.detail) || !strings.Contains(got.Fix, c.fix) {
				t.Fatalf("got %s %s %q fix %q; want %s with %q, fix with %q", got.Name, got.Status, got.Detail, got.Fix, c.status, c.detail, c.fix)
			}
			if (got.Status == docker.OK) != (got.Fix == "") {
				t.Fatalf("status %s with fix %q", got.Status, got.Fix)
			}
		})
	}
}

// versions are what the test base's Debian packages put in the image.
var versions = regexp.MustCompile(`python3 3\.\d+\.\d+ with numpy \d+\.\d+\S*, pandas \d+\.\d+\S*, tabulate \d+\.\d+\S*;`)

func TestDoctorListsWhatTheRuntimeImageOffers(t *testing.T) {
	cli, img := dockertest.Engine(t)
	code, out, errs := runArena("doctor", "--json", "--image", img)
	if code != exitOK && code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var checks []docker.Check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json printed %q: %v", out, err)
	}
	var row *docker.Check
	for i, c := range checks {
		if c.Name == imageOffersCheck {
			row = &checks[i]
			if i == 0 || checks[i-1].Name != "runtime image" {
				t.Errorf("%s is not right after the runtime image's row", imageOffersCheck)
			}
		}
	}
	if row == nil || row.Status != docker.OK || !versions.MatchString(row.Detail) || !strings.Contains(row.Detail, "glibc 2.") {
		t.Fatalf("the image offers row: %+v\nall rows: %+v", row, checks)
	}

	// Every language of the table, with the version its toolchain prints in
	// the test base, in the table's order right after the image offers row.
	at := slices.IndexFunc(checks, func(c docker.Check) bool { return c.Name == imageOffersCheck })
	for i, ext := range build.Default().Exts() {
		if at+1+i >= len(checks) || checks[at+1+i].Name != "language "+ext {
			t.Fatalf("no row for %s at %d: %+v", ext, at+1+i, checks)
		}
		row := checks[at+1+i]
		if want := toolchainVersions[ext]; row.Status != docker.OK || !want.MatchString(row.Detail) {
			t.Errorf("%s: %s %q, want ok with %v", row.Name, row.Status, row.Detail, want)
		}
	}

	// The same image without pandas and tabulate: doctor warns and names them.
	bare := withoutModules(t, cli, img, "pandas", "tabulate")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := probeImageOffers(ctx, cli, bare, build.Default())
	if got[0].Status != docker.Warn || !strings.Contains(got[0].Detail, "; no pandas, tabulate;") || !strings.Contains(got[0].Detail, "with numpy ") {
		t.Fatalf("without pandas and tabulate: %+v", got[0])
	}
}

// toolchainVersions are what the test base's toolchains say of themselves.
var toolchainVersions = map[string]*regexp.Regexp{
	".py":   regexp.MustCompile(`^Python 3\.\d+\.\d+$`),
	".c":    regexp.MustCompile(`^gcc \(Debian [^)]+\) \d+\.\d+\.\d+$`),
	".cpp":  regexp.MustCompile(`^g\+\+ \(Debian [^)]+\) \d+\.\d+\.\d+$`),
	".java": regexp.MustCompile(`^javac \d+\.\d+\.\d+`),
	".js":   regexp.MustCompile(`^v\d+\.\d+\.\d+$`),
}

// An image without node and without jar: their languages warn with a fix,
// the others are untouched; a language of an organizer's table whose
// toolchain is not in the image warns too.
func TestDoctorWarnsWhenAToolchainIsMissing(t *testing.T) {
	cli, img := dockertest.Engine(t)
	without := withoutFiles(t, cli, img, "/usr/bin/node", "/usr/bin/nodejs", "/usr/bin/jar", "/etc/alternatives/jar")
	table := build.DefaultTable() + ".rs | rustc -O -o bot {src} | bot | {dir}/bot | - | rustc --version\n"
	langs, err := build.Parse(table)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := map[string]docker.Check{}
	for _, r := range probeImageOffers(ctx, cli, without, langs) {
		rows[r.Name] = r
	}
	for ext, want := range map[string]string{
		".js":   "no node in the image; node --version failed (exit 127)",
		".java": "no jar in the image; javac ",
		".rs":   "no rustc in the image; rustc --version failed (exit 127)",
	} {
		r := rows["language "+ext]
		if r.Status != docker.Warn || !strings.HasPrefix(r.Detail, want) || r.Fix == "" {
			t.Errorf("%s: %+v, want a warning %q... with a fix", ext, r, want)
		}
	}
	for _, ext := range []string{".py", ".c", ".cpp"} {
		if r := rows["language "+ext]; r.Status != docker.OK || !toolchainVersions[ext].MatchString(r.Detail) {
			t.Errorf("%s: %+v", ext, r)
		}
	}

	// The same through the command line, with the table as a file: the
	// warnings do not fail doctor (exit 0 or 1 as the host's other checks
	// say) and the table's rows are printed with their fixes.
	file := filepath.Join(t.TempDir(), "languages.txt")
	if err := os.WriteFile(file, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runArena("doctor", "--image", without, "--languages", file)
	if code != exitOK && code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{`language \.js +WARN +no node in the image`, `fix: bots handed in as \.js source would not build or run: rebuild the runtime image`,
		`language \.rs +WARN +no rustc`, `drop \.rs from the languages file`, `language \.py +OK +Python 3\.`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("doctor printed no %q:\n%s", want, out)
		}
	}
}

// Every language's hello world builds once in the sandbox and starts, timed.
func TestDoctorBenchStartsAHelloWorldOfEachLanguage(t *testing.T) {
	_, img := dockertest.Engine(t)
	code, out, errs := runArena("doctor", "--bench", "--json", "--runs", "10", "--hello-runs", "3", "--image", img)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var timings []docker.Timing
	if err := json.Unmarshal([]byte(out), &timings); err != nil {
		t.Fatalf("doctor --bench --json printed %q: %v", out, err)
	}
	byName := map[string]docker.Timing{}
	for _, tm := range timings {
		byName[tm.Name] = tm
	}
	for _, ext := range build.Default().Exts() {
		b, turn := byName[ext+" hello world build"], byName[ext+" hello world turn"]
		if b.Runs != 1 || b.P50Ms <= 0 || turn.Runs != 3 || turn.P50Ms <= 0 || turn.XBare <= 0 {
			t.Errorf("%s: build %+v, turn %+v\nall: %s", ext, b, turn, out)
		}
	}
	// A JVM starts slower than a C program: the turns are really run.
	if j, c := byName[".java hello world turn"], byName[".c hello world turn"]; j.P50Ms <= c.P50Ms {
		t.Errorf("java starts in %.2f ms, C in %.2f ms", j.P50Ms, c.P50Ms)
	}
}

// A language whose hello world does not build is named and fails the bench;
// one arena has no hello world in is only named.
func TestDoctorBenchNamesWhatItCouldNotMeasure(t *testing.T) {
	_, img := dockertest.Engine(t)
	table := ".c | gcc -O2 {src} -o bot -lnonesuch | bot | {dir}/bot | - | gcc --version\n" +
		".py | - | {src} | python3 {dir}/{src} | - | python3 --version\n" +
		".rs | rustc -O -o bot {src} | bot | {dir}/bot | - | rustc --version\n"
	file := filepath.Join(t.TempDir(), "languages.txt")
	if err := os.WriteFile(file, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runArena("doctor", "--bench", "--runs", "10", "--hello-runs", "3", "--image", img, "--languages", file)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, out, errs)
	}
	for _, want := range []string{"not measured: .rs (arena has no hello world in them)", "not measured: .c: the hello world did not build", "nonesuch"} {
		if !strings.Contains(errs, want) {
			t.Errorf("no %q in:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, ".py hello world turn") || strings.Contains(out, ".c hello world") {
		t.Errorf("the table:\n%s", out)
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

func TestSpaceCheckNamesTheDirectoryAndItsFreeSpace(t *testing.T) {
	dir := t.TempDir()
	c := spaceCheck(dir)
	if c.Name != "free space" || !strings.Contains(c.Detail, " free in "+dir) || (c.Status != docker.OK && c.Status != docker.Warn) {
		t.Fatalf("%+v", c)
	}
	if c := spaceCheck(filepath.Join(dir, "missing")); c.Status != docker.Warn || !strings.Contains(c.Detail, "no such file") {
		t.Fatalf("a missing directory: %+v", c)
	}
}
