package doctor

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// needs is a game adapter that needs what it lists of the image.
type needs []string

func (needs) Package(map[string][]byte) (map[string][]byte, string, error) { return nil, "", nil }
func (needs) Submission() string                                           { return "" }
func (n needs) Needs() []string                                            { return n }

func TestOffersCheckNamesVersionsAndWhatIsMissing(t *testing.T) {
	t.Parallel()
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
		status sandbox.Status
		detail string
	}{
		{"everything the event's bots import", facts("python3 3.12.3", "python3-numpy 1.26.4", "python3-pandas 2.1.4", "python3-tabulate 0.8.10"), checkers, sandbox.OK,
			"glibc 2.39, 2 shared libraries; python3 3.12.3 with numpy 1.26.4, pandas 2.1.4, tabulate 0.8.10; interpreters python3, sh"},
		{"a module without a version", facts("python3 3.13.5", "python3-numpy 2.2.4", "python3-pandas 2.2.3", "python3-tabulate"), nil, sandbox.OK,
			"python3 3.13.5 with numpy 2.2.4, pandas 2.2.3, tabulate;"},
		{"no pandas, no tabulate", facts("python3 3.12.3", "python3-numpy 1.26.4"), checkers, sandbox.Warn,
			"python3 3.12.3 with numpy 1.26.4; no pandas, tabulate; interpreters python3, sh"},
		{"no python3", facts(), checkers, sandbox.Warn,
			"glibc 2.39, 2 shared libraries; no python3; interpreters sh; checkers needs python3, python3-numpy"},
		{"a game's need unmet", facts("python3 3.12.3", "python3-numpy 1.26.4", "python3-pandas 2.1.4", "python3-tabulate 0.8.10"),
			map[string]rules.Packager{"checkers": needs{"python3-scipy"}}, sandbox.Warn, "; checkers needs python3-scipy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := offersCheck(c.facts, c.games)
			if got.Name != imageOffersCheck || got.Status != c.status || !strings.Contains(got.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s with %q", got.Status, got.Detail, c.status, c.detail)
			}
			if (got.Status == sandbox.OK) != (got.Fix == "") {
				t.Fatalf("status %s with fix %q", got.Status, got.Fix)
			}
		})
	}
}

// The games arena registers are the ones whose needs the image is checked for.
func TestPackagersAreTheRegisteredGames(t *testing.T) {
	t.Parallel()
	got := packagers()
	if len(got) == 0 {
		t.Fatalf("no game's needs would be checked (registered: %v)", rules.Names())
	}
	for name := range got {
		if _, err := rules.Lookup(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestImageOffersFollowsTheRuntimeImageRow(t *testing.T) {
	t.Parallel()
	checks := []sandbox.Check{{Name: "engine", Status: sandbox.OK}, {Name: "runtime image", Status: sandbox.Fail}, {Name: "hardened container", Status: sandbox.Skip}}
	got := withImageOffers(context.Background(), sandbox.Config{Image: "none"}, langs.Default(), checks)
	if want := "engine=ok runtime image=fail image offers=skip language .c=skip language .cpp=skip language .java=skip language .js=skip language .py=skip hardened container=skip"; rowsOf(got) != want {
		t.Fatalf("rows %s, want %s", rowsOf(got), want)
	}
}

// rowsOf lists the checks as name=status.
func rowsOf(checks []sandbox.Check) string {
	var names []string
	for _, c := range checks {
		names = append(names, c.Name+"="+string(c.Status))
	}
	return strings.Join(names, " ")
}

// Without an engine nothing the engine was needed for passes: the engine
// fails, what needed it is skipped with why, and the host's own checks run.
func TestCheckWithoutAnEngineSkipsWhatNeedsIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	langs, err := langs.Parse(".c | gcc -O2 {src} -o bot | bot | {dir}/bot | - | gcc --version\n.rs | rustc -O -o bot {src} | bot | {dir}/bot | - | rustc --version\n")
	if err != nil {
		t.Fatal(err)
	}
	checks := Check(context.Background(), Config{Sandbox: sandbox.Config{Backend: docker.Conn{Host: "unix://" + filepath.Join(dir, "none.sock")}, Image: "none"}, Languages: langs, Out: dir})
	want := "engine=fail versions=skip cgroups=skip storage driver=skip runtime=skip runtime image=skip image offers=skip language .c=skip language .rs=skip " +
		"hardened container=skip out-of-memory detection=skip turn deadline=skip host timers="
	if got := rowsOf(checks); !strings.HasPrefix(got, want) || !strings.Contains(got, " free space=") {
		t.Fatalf("rows %s\nwant %s...", got, want)
	}
	for _, c := range checks {
		if c.Status == sandbox.Skip && c.Detail == "" {
			t.Errorf("%s is skipped without saying why", c.Name)
		}
	}
	if !strings.Contains(checks[0].Detail, "no Docker engine answered") || checks[0].Fix == "" {
		t.Errorf("the engine row: %+v", checks[0])
	}
	if c := checks[len(checks)-1]; !strings.Contains(c.Detail, " free in "+dir) {
		t.Errorf("the free space row does not name %s: %+v", dir, c)
	}
	if n := Failures(checks); n != 1 {
		t.Errorf("%d failures, want 1", n)
	}
}

// An engine no client can be made for (its address does not parse) is one
// failed row, then the host's own checks.
func TestCheckWithBadEngineSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	checks := Check(context.Background(), Config{Sandbox: sandbox.Config{Backend: docker.Conn{Host: "nonsense"}}, Out: dir})
	if got := rowsOf(checks); !strings.HasPrefix(got, "engine=fail host timers=") || !strings.Contains(got, " load headroom=") || len(checks) != 4 {
		t.Fatalf("rows %s", got)
	}
	if c := checks[0]; !strings.Contains(c.Detail, `docker client for "nonsense"`) || c.Fix != "check --docker-host and the --docker-tls-* flags" {
		t.Errorf("the engine row: %+v", c)
	}
}

func TestFailuresCountsTheFailedChecks(t *testing.T) {
	t.Parallel()
	checks := []sandbox.Check{{Name: "a", Status: sandbox.OK}, {Name: "b", Status: sandbox.Fail}, {Name: "c", Status: sandbox.Warn},
		{Name: "d", Status: sandbox.Skip}, {Name: "e", Status: sandbox.Fail}}
	if n := Failures(checks); n != 2 {
		t.Fatalf("%d failures, want 2", n)
	}
	if n := Failures(nil); n != 0 {
		t.Fatalf("%d failures of nothing", n)
	}
	err := &FailedError{Checks: checks}
	if err.Failures() != 2 || err.Error() != "2 doctor checks failed: b, e" {
		t.Fatalf("%d: %v", err.Failures(), err)
	}
	if err := (&FailedError{Checks: checks[:2]}); err.Error() != "1 doctor check failed: b" {
		t.Fatalf("%v", err)
	}
}

// A worker whose engine does not answer is told so, not shown checks.
func TestEngineChecksWithoutAnEngine(t *testing.T) {
	t.Parallel()
	err := EngineChecks(context.Background(), Config{Sandbox: sandbox.Config{Backend: docker.Conn{Host: "unix://" + filepath.Join(t.TempDir(), "none.sock")}, Image: "none"}})
	var failed *FailedError
	if err == nil || errors.As(err, &failed) || !strings.Contains(err.Error(), "no Docker engine answered") {
		t.Fatalf("got %v", err)
	}
}

// The bench refuses what it cannot measure with before it reaches an engine.
func TestBenchRefusesABadConfig(t *testing.T) {
	t.Parallel()
	dead := docker.Conn{Host: "unix://" + filepath.Join(t.TempDir(), "none.sock")}
	for _, c := range []struct {
		cfg            Config
		field, problem string
	}{
		{Config{Sandbox: sandbox.Config{Backend: dead}}, "Runs", "must be at least 10"},
		{Config{Sandbox: sandbox.Config{Backend: dead}, Runs: 9}, "Runs", "must be at least 10"},
		{Config{Sandbox: sandbox.Config{Backend: dead}, Runs: 10, HelloRuns: -1}, "HelloRuns", "must not be negative"},
	} {
		r, err := Bench(context.Background(), c.cfg)
		var bad *ConfigError
		if !errors.As(err, &bad) || bad.Field != c.field || bad.Problem != c.problem || r != nil {
			t.Errorf("runs %d, hello runs %d: %v, want %s %s", c.cfg.Runs, c.cfg.HelloRuns, err, c.field, c.problem)
		}
	}
	// A good one goes on to the engine.
	_, err := Bench(context.Background(), Config{Sandbox: sandbox.Config{Backend: dead}, Runs: 10})
	var bad *ConfigError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "no Docker engine answered") {
		t.Errorf("with a good config: %v", err)
	}
}

func TestSpaceCheckNamesTheDirectoryAndItsFreeSpace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := spaceCheck(dir)
	if c.Name != "free space" || !strings.Contains(c.Detail, " free in "+dir) || (c.Status != sandbox.OK && c.Status != sandbox.Warn) {
		t.Fatalf("%+v", c)
	}
	if c := spaceCheck(filepath.Join(dir, "missing")); c.Status != sandbox.Warn || !strings.Contains(c.Detail, "no such file") {
		t.Fatalf("a missing directory: %+v", c)
	}
}

// The load row says how much of the host is free, how long tasks waited for
// a CPU where the kernel keeps it, and what arena serve runs at once here.
func TestLoadCheckReportsTheHeadroom(t *testing.T) {
	t.Parallel()
	c := loadCheck("0.50 0.40 0.30 1/200 999\n", "some avg10=61.44 avg60=27.27 avg300=7.31 total=25131974\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 2, 1)
	for _, want := range []string{"load 0.50", "2 cores: 1.50 cores free", "waited for a CPU 61.44% of the last 10 s", "1 validation and 1 game at once"} {
		if c.Status != sandbox.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("quiet host: %+v lacks %q", c, want)
		}
	}
	if c := loadCheck("9.80 9.00 8.00 1/200 999\n", "", 2, 1); c.Status != sandbox.Warn || !strings.Contains(c.Detail, "0.00 cores free") || c.Fix == "" {
		t.Errorf("busy host: %+v", c)
	}
	if c := loadCheck("", "", 2, 1); c.Status != sandbox.Warn {
		t.Errorf("no load average: %+v", c)
	}
}
