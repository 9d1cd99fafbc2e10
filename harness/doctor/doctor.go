// Package doctor checks that a host can run official matches: the preflight
// an organizer runs before an event (arena doctor), the part of it a worker
// machine must pass before it plays, and a bench of what a turn costs.
//
// Check gives the rows in order: the engine answers, its versions, cgroups
// and storage driver, the runtime image is present and what it offers bots
// (glibc, interpreters, python3 and the event's Python modules with their
// versions, each registered game's needs), the toolchain of each language of
// the languages table with its version, a hardened container starts with the
// limits that were asked (read back from inside), an out-of-memory kill is
// reported as such, turn deadlines are exact, this host's timers are precise
// and the output directory has room. Each row is ok, warn, fail or skip, with
// a fix when it is not ok. EngineChecks is what a worker must pass; Bench
// measures a turn bare, in the sandbox, and as a fresh process of each
// language.
//
// Each kind of sandbox backend registers its own checks and bench
// (sandbox.Doctor) where it registers its Opener; the doctor finds them by
// kind (sandbox.DoctorOf) and opens backends with sandbox.Open. It must
// never import a backend's package: a command that runs the doctor imports
// the backends it offers.
//
// The doctor must never report a check as passed that it could not run: a
// check whose engine, image or probe is missing is skipped or warned about,
// saying why, and never ok. It only looks and measures: the sandboxes it
// starts are removed when it is done, and it builds, pulls and removes no
// image and changes nothing on the host.
package doctor

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/runner"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games" // the image is checked for every game's needs
	"github.com/arenabots/arena/sandbox"
)

// Config says what the doctor checks and measures.
type Config struct {
	// Sandbox is where bots run and how it is reached: its kind ("" is
	// docker, or "kubernetes"), the runtime image, the runtime (on
	// Kubernetes, the RuntimeClass) and the kind's own settings.
	Sandbox sandbox.Config
	// Host is this host's own backend, which Bench measures beside a kind
	// whose boxes run elsewhere (a cluster): the docker backend with the
	// engine's settings (its image, unless set, Sandbox's). Zero: docker
	// with its defaults.
	Host sandbox.Config
	// Languages is the table whose toolchains are checked and whose hello
	// worlds the bench builds. Nil: the built-in table.
	Languages langs.Languages
	// Out is the directory matches and tournaments will write to: its free
	// space is checked.
	Out string
	// Runs is the number of turns of each of Bench's measurements: at least
	// 10 (DefaultRuns is what arena doctor --bench takes).
	Runs int
	// HelloRuns is how many times Bench starts each language's hello world
	// (0: the languages are left out).
	HelloRuns int
}

// The bench's defaults: what arena doctor --bench measures unless told.
const (
	DefaultRuns      = 200
	DefaultHelloRuns = 20
)

// minRuns is the fewest turns a measurement's p99 means something with.
const minRuns = 10

func (cfg Config) languages() langs.Languages {
	if cfg.Languages == nil {
		return langs.Default()
	}
	return cfg.Languages
}

// Check runs every check of the doctor and returns its rows in order: the
// preflight of cfg.Sandbox's kind (sandbox.Doctor), with what the runtime
// image offers and a row per language right after the runtime image's row
// when it has one, then, when the kind's boxes run on this host, the host's
// timers and load, then the free space of cfg.Out. A kind no backend
// registered is one failed row.
func Check(ctx context.Context, cfg Config) []sandbox.Check {
	d, err := sandbox.DoctorOf(cfg.Sandbox.Kind)
	if err != nil {
		return []sandbox.Check{{Name: "sandbox", Status: sandbox.Fail, Detail: err.Error()}, spaceCheck(cfg.Out)}
	}
	// A backend that could not be reached says so in its rows.
	checks, _ := d.Preflight(ctx, cfg.Sandbox)
	checks = withImageOffers(ctx, cfg.Sandbox, cfg.languages(), checks)
	if d.Host {
		checks = append(checks, timerCheck(), loadCheck(readFile("/proc/loadavg"), readFile("/proc/pressure/cpu"), runtime.NumCPU(), sandbox.DefaultLimits().CPUs))
	}
	return append(checks, spaceCheck(cfg.Out))
}

// readFile is a file's text, or "" when it cannot be read.
func readFile(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(data)
}

// loadCheck reports the host's load headroom: its load average against its
// cores, the CPU pressure where the kernel keeps it, and how many
// validations and games an event server here runs at once by default.
func loadCheck(loadavg, pressure string, cores int, botCPUs float64) sandbox.Check {
	c := sandbox.Check{Name: "load headroom", Status: sandbox.OK}
	capa := event.DefaultCapacity(cores, botCPUs)
	serve := fmt.Sprintf("arena serve runs %s at once here (%g CPU a bot)", capa, botCPUs)
	f := strings.Fields(loadavg)
	if len(f) < 1 {
		c.Status, c.Detail = sandbox.Warn, "no load average to read (/proc/loadavg); "+serve
		return c
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		c.Status, c.Detail = sandbox.Warn, fmt.Sprintf("load average %q: %v; %s", f[0], err, serve)
		return c
	}
	c.Detail = fmt.Sprintf("load %.2f over the last minute on %d cores: %.2f cores free", load, cores, max(float64(cores)-load, 0))
	for _, line := range strings.Split(pressure, "\n") {
		if rest, ok := strings.CutPrefix(line, "some avg10="); ok {
			c.Detail += fmt.Sprintf("; tasks waited for a CPU %s%% of the last 10 s", strings.Fields(rest)[0])
		}
	}
	c.Detail += "; " + serve
	if load >= float64(cores) {
		c.Status = sandbox.Warn
		c.Fix = "the host is busy with other work: bots will wait for the CPU (their deadlines move past the wait, up to three times the turn limit and two seconds, past which a game is played again), so games take longer; run fewer things beside arena"
	}
	return c
}

// Failures counts the failed checks: official matches need there to be none.
func Failures(checks []sandbox.Check) int {
	n := 0
	for _, c := range checks {
		if c.Status == sandbox.Fail {
			n++
		}
	}
	return n
}

// EngineChecks runs the checks a worker machine must pass before it plays:
// the preflight of cfg.Sandbox's kind (the docker backend's by default: the
// engine's and the runtime image's). A backend that could not be reached is
// an error; a failed check is a *FailedError holding every check, to show.
func EngineChecks(ctx context.Context, cfg Config) error {
	d, err := sandbox.DoctorOf(cfg.Sandbox.Kind)
	if err != nil {
		return err
	}
	checks, err := d.Preflight(ctx, cfg.Sandbox)
	if err != nil {
		return err
	}
	if Failures(checks) > 0 {
		return &FailedError{Checks: checks}
	}
	return nil
}

// FailedError is EngineChecks' error when a check fails.
type FailedError struct {
	// Checks are all the checks that ran, the failed ones among them.
	Checks []sandbox.Check
}

func (e *FailedError) Error() string {
	var names []string
	for _, c := range e.Checks {
		if c.Status == sandbox.Fail {
			names = append(names, c.Name)
		}
	}
	what := "doctor check"
	if len(names) != 1 {
		what += "s"
	}
	return fmt.Sprintf("%d %s failed: %s", len(names), what, strings.Join(names, ", "))
}

// Failures counts the failed checks.
func (e *FailedError) Failures() int { return Failures(e.Checks) }

// imageOffersCheck is the name of the row saying what the runtime image offers.
const imageOffersCheck = "image offers"

// withImageOffers adds, after the runtime image's row, what the image offers
// bots, then a row for each language of langs: a probe of the image in a
// backend of sc when the row is ok, skips otherwise. Checks without a
// runtime image's row (a backend that could not be reached, a cluster) are
// left as they are.
func withImageOffers(ctx context.Context, sc sandbox.Config, langs langs.Languages, checks []sandbox.Check) []sandbox.Check {
	at := slices.IndexFunc(checks, func(c sandbox.Check) bool { return c.Name == "runtime image" })
	if at < 0 {
		return checks
	}
	rows := append([]sandbox.Check{{Name: imageOffersCheck, Status: sandbox.Skip, Detail: "needs the runtime image"}},
		languageRows(langs, nil, "needs the runtime image")...)
	if checks[at].Status == sandbox.OK {
		rows = probeImageOffers(ctx, sc, langs)
	}
	return slices.Insert(checks, at+1, rows...)
}

// probeImageOffers runs the image probe of arena validate in a sandbox of
// the backend sc names, asking it about the toolchain of each language of
// langs too: the image offers row, then one row per language.
func probeImageOffers(ctx context.Context, sc sandbox.Config, langs langs.Languages) []sandbox.Check {
	b, release, err := sandbox.Open(ctx, sc)
	var facts *validate.ImageFacts
	if err == nil {
		defer release()
		facts, err = validate.ProbeImageWith(ctx, b, sandbox.DefaultLimits(), validate.ToolchainQueries(langs))
	}
	if err != nil {
		return append([]sandbox.Check{{Name: imageOffersCheck, Status: sandbox.Warn, Detail: "the image probe failed: " + err.Error(),
			Fix: "arena validate cannot check submissions against this image either; see the hardened container check"}},
			languageRows(langs, nil, "needs the image probe")...)
	}
	return append([]sandbox.Check{offersCheck(facts, packagers())}, languageRows(langs, facts, "")...)
}

// packagers are the registered games whose adapters need something of the
// image, by name.
func packagers() map[string]rules.Packager {
	out := map[string]rules.Packager{}
	for _, name := range rules.Names() {
		if g, err := rules.Lookup(name); err == nil {
			if p, ok := g.(rules.Packager); ok {
				out[name] = p
			}
		}
	}
	return out
}

// offersCheck says what the image offers bots: glibc, its shared libraries,
// its interpreters, python3 and the Python modules of the event's bots with
// their versions. A missing module, or a game's need the image does not
// meet, is a warning: the matches that need them would fault.
func offersCheck(f *validate.ImageFacts, games map[string]rules.Packager) sandbox.Check {
	c := sandbox.Check{Name: imageOffersCheck, Status: sandbox.OK}
	var parts, missing []string
	parts = append(parts, fmt.Sprintf("glibc %s, %d shared libraries", f.Glibc, len(f.Libraries)))
	if f.HasCommand("python3") {
		py := "python3"
		if v := f.Versions["python3"]; v != "" {
			py += " " + v
		}
		var mods []string
		for _, m := range validate.PythonModules {
			if !f.HasCommand("python3-" + m) {
				missing = append(missing, m)
				continue
			}
			mods = append(mods, strings.TrimSpace(m+" "+f.Versions["python3-"+m]))
		}
		if len(mods) > 0 {
			py += " with " + strings.Join(mods, ", ")
		}
		if len(missing) > 0 {
			py += "; no " + strings.Join(missing, ", ")
		}
		parts = append(parts, py)
	} else {
		parts = append(parts, "no python3")
		missing = append([]string{"python3"}, validate.PythonModules...)
	}
	var names []string
	for k := range f.Commands {
		if !strings.Contains(k, "/") && !strings.HasPrefix(k, "python3-") {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	parts = append(parts, "interpreters "+strings.Join(names, ", "))
	c.Detail = strings.Join(parts, "; ")

	var unmet []string
	gameNames := make([]string, 0, len(games))
	for name := range games {
		gameNames = append(gameNames, name)
	}
	slices.Sort(gameNames)
	for _, name := range gameNames {
		var lacks []string
		for _, n := range games[name].Needs() {
			if !f.HasCommand(n) {
				lacks = append(lacks, n)
			}
		}
		if len(lacks) > 0 {
			unmet = append(unmet, name+" needs "+strings.Join(lacks, ", "))
		}
	}
	if len(unmet) > 0 {
		c.Detail += "; " + strings.Join(unmet, "; ")
	}
	if len(missing) > 0 || len(unmet) > 0 {
		c.Status = sandbox.Warn
		c.Fix = "the event's Python bots import numpy, pandas and tabulate: rebuild the image with arena image build (its Dockerfile installs python3, python3-numpy, python3-pandas and python3-tabulate)"
	}
	return c
}

// timerCheck measures how late a 1 ms sleep wakes up on this host.
func timerCheck() sandbox.Check {
	const n = 200
	late := make([]time.Duration, n)
	for i := range late {
		t := time.Now()
		time.Sleep(time.Millisecond)
		late[i] = time.Since(t) - time.Millisecond
	}
	slices.Sort(late)
	p50, p99 := late[n/2], late[n*99/100]
	c := sandbox.Check{Name: "host timers", Status: sandbox.OK,
		Detail: fmt.Sprintf("a 1 ms sleep wakes %v late at p50, %v at p99", p50.Round(time.Microsecond), p99.Round(time.Microsecond))}
	if p99 > 10*time.Millisecond {
		c.Status = sandbox.Warn
		c.Fix = "the host is overloaded or its timers are coarse; avoid sub-second turn limits here"
	}
	return c
}

// spaceCheck reports the free space of the directory evidence goes to: a
// tournament keeps up to 64 MiB of data files per game and waits below 1 GiB.
func spaceCheck(dir string) sandbox.Check {
	c := sandbox.Check{Name: "free space", Status: sandbox.OK}
	free, err := runner.FreeSpace(dir)
	if err != nil {
		c.Status, c.Detail, c.Fix = sandbox.Warn, err.Error(), "name the output directory with --out"
		return c
	}
	c.Detail = fmt.Sprintf("%s free in %s", units.BytesSize(float64(free)), dir)
	if free < 4<<30 {
		c.Status = sandbox.Warn
		c.Fix = "a tournament keeps up to 64 MiB of evidence per game (--evidence-budget) and starts no game below 1 GiB free (--min-free); free some space or write elsewhere"
	}
	return c
}
