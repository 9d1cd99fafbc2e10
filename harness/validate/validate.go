// Package validate tells a team exactly what is wrong with its submission
// before the event: the ZIP's integrity, what the executable is and whether it
// can run in the runtime image (architecture, glibc symbol versions, shared
// libraries, interpreter), the source and README the rules ask for, and how the
// bot behaves in the real sandbox with the official limits: every setup step
// and a set of play positions as both colours, then a full match against the
// built-in random bot as each colour.
//
// Every check is pass, warn or fail with a one-line reason and a fix; every
// behavioural failure carries the state given, what came back, the exit code,
// the time and the stderr tail.
//
// Validation must never be more lenient than an official match: it plays
// through the same runner, referee and limits, so a submission that passes
// here runs the same way at the event; and a submission's bytes are never
// unpacked before the submission package's defences have read them.
package validate

import (
	"bytes"
	"cmp"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/replay"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/version"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Status of a check.
type Status string

// Check statuses.
const (
	Pass Status = "pass"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Evidence is one bot turn, for a failing check.
type Evidence struct {
	Label      string  `json:"label"`
	State      string  `json:"state"`
	Answer     string  `json:"answer,omitempty"`
	ExitCode   int     `json:"exitCode"`
	Signal     int     `json:"signal,omitempty"`
	Verdict    string  `json:"verdict"`
	Reason     string  `json:"reason,omitempty"`
	WallMs     float64 `json:"wallMs"`
	PeakMemory int64   `json:"peakMemory"`
	StderrTail string  `json:"stderrTail,omitempty"`
	// Dialogue is what a line-game bot was sent and answered up to the
	// faulty answer, its last dialogueSteps steps; Board the true position it
	// was asked in, terrain included, as the game draws it.
	Dialogue []string `json:"dialogue,omitempty"`
	Board    string   `json:"board,omitempty"`
	// Output is what a failed build said (its exit status and first lines);
	// such evidence is about no turn.
	Output string `json:"output,omitempty"`
}

// dialogueSteps is how much of a dialogue the evidence keeps.
const dialogueSteps = 40

// Check is one line of the report.
type Check struct {
	Name     string    `json:"name"`
	Status   Status    `json:"status"`
	Detail   string    `json:"detail"`
	Fix      string    `json:"fix,omitempty"`
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Usage is how close the bot runs to its limits.
type Usage struct {
	Turns      int     `json:"turns"`
	P50Ms      float64 `json:"p50Ms"`
	MaxMs      float64 `json:"maxMs"`
	LimitMs    float64 `json:"limitMs"`
	PeakMemory int64   `json:"peakMemory"`
	MemLimit   int64   `json:"memoryLimit"`
	// StartMs is the slowest first answer of a line-game bot, whose clock
	// also covers starting its program, and StartLimitMs its limit (the move
	// time and rules.ProgramStart); the turns above leave those answers out.
	StartMs      float64 `json:"startMs,omitempty"`
	StartLimitMs float64 `json:"startLimitMs,omitempty"`
}

// Report is the verdict on one submission.
type Report struct {
	Path     string  `json:"path"`
	Name     string  `json:"name"`
	SHA256   string  `json:"sha256,omitempty"`
	Entry    string  `json:"executable,omitempty"`
	Pass     bool    `json:"pass"`
	Checks   []Check `json:"checks"`
	Usage    *Usage  `json:"usage,omitempty"`
	Warnings int     `json:"warnings"`
	Failures int     `json:"failures"`
	// SourceBuilt is the artifact's hash of a submission built from source.
	SourceBuilt string `json:"sourceBuilt,omitempty"`
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	switch c.Status {
	case Fail:
		r.Failures++
	case Warn:
		r.Warnings++
	}
}

// Options configure validation.
type Options struct {
	// Game is the game the submission plays; Rules its rule options.
	Game    rules.Game
	Rules   map[string]string
	Intake  submission.Limits
	Backend sandbox.Backend // nil: static checks only
	Limits  sandbox.Limits
	Facts   *ImageFacts // what the runtime image offers; nil skips those checks
	// Builder builds a submission handed in as source; nil takes executables
	// only.
	Builder *build.Builder
	// Opponent is the built-in random bot for the full matches; nil skips them.
	Opponent *submission.Bot
	// Label is how the submission is named in what the validation records
	// (the matches' transcripts): "" is its path.
	Label string
	// Require are the documents (rules.DocSource, rules.DocReadme) a
	// submission must hold: without one it fails; the others only warn
	// when missing. nil is the game's own (rules.Documents).
	Require []string
	// Dir, when set, keeps the extracted files and the matches here.
	Dir  string
	Seed uint64
	// Progress, when set, is told when a build starts (StageBuilding) and
	// when the bot starts to run (StageRunning).
	Progress func(stage string)
}

// FilesDir holds a validation's unpacked files inside Options.Dir.
const FilesDir = "files"

// Stages of a validation, for Options.Progress.
const (
	StageBuilding = "building"
	StageRunning  = "running"
)

func (o Options) progress(stage string) {
	if o.Progress != nil {
		o.Progress(stage)
	}
}

var sourceExt = map[string]bool{
	".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".h": true, ".hpp": true, ".rs": true, ".go": true,
	".py": true, ".java": true, ".kt": true, ".js": true, ".ts": true, ".cs": true, ".swift": true, ".rb": true,
	".zig": true, ".nim": true, ".hs": true, ".ml": true, ".scala": true, ".d": true, ".pas": true, ".lua": true, ".jl": true,
}

var (
	algorithmWords = regexp.MustCompile(`(?i)algorithm|approach|strategy|minimax|alpha[- ]?beta|search|heuristic|evaluat|monte[- ]?carlo|mcts|greedy|random`)
	buildWords     = regexp.MustCompile(`(?i)\bbuild|compil|\bmake\b|cmake|cargo|go build|pyinstaller|javac|gcc|g\+\+|clang|docker`)
)

// Validate checks one submission (a ZIP or a directory).
func Validate(ctx context.Context, p string, o Options) (*Report, error) {
	rep := &Report{Path: p, Name: strings.TrimSuffix(filepath.Base(filepath.Clean(p)), ".zip")}
	files, zipSum, err := submission.ReadAny(p, o.Intake)
	if err != nil {
		var se *submission.Error
		if !errorsAs(err, &se) {
			return nil, err
		}
		rep.add(Check{Name: "archive", Status: Fail, Detail: se.Error(), Fix: archiveFix(se)})
		return finish(rep), nil
	}
	rep.SHA256 = zipSum
	rep.add(Check{Name: "archive", Status: Pass, Detail: words.Plural(len(files), "file") + ", no unsafe entries"})
	if o.Dir != "" {
		if err := submission.Extract(files, filepath.Join(o.Dir, FilesDir)); err != nil {
			return nil, fmt.Errorf("extract: %w", err)
		}
	}

	if o.Game == nil {
		return nil, errors.New("validate: no game")
	}
	submitted := files
	var entry, why string
	// packaged: the game's adapter runs the submission as a module; a game
	// that takes modules also takes an executable speaking its protocol.
	packaged := false
	// nothingToBuild: the bot runs as it was handed in (a script, a
	// module), so its README need give no build steps.
	nothingToBuild := false
	if pack, ok := o.Game.(rules.Packager); ok {
		files, entry, err = submission.Package(files, pack)
		why = "the module is run by arena's adapter (" + entry + ")"
		if err != nil {
			rep.add(Check{Name: "module", Status: Fail, Detail: err.Error(), Fix: pack.Submission()})
		} else if packaged = entry != ""; packaged {
			nothingToBuild = true
			rep.add(Check{Name: "module", Status: Pass, Detail: why})
			moduleChecks(rep, pack, o.Facts)
		}
	}
	if err == nil && !packaged {
		entry, why, err = submission.PickExecutable(files)
		var src string
		if errors.Is(err, submission.ErrNoExecutable) && o.Builder != nil {
			src, err = submission.PickSource(files, o.Builder.Langs.Knows)
		}
		switch {
		case err != nil:
			fix := "put exactly one executable, built for Linux x86-64 on " + o.Facts.System() + ", in the ZIP (or call the one that runs \"" + submission.RunName + "\")"
			if o.Builder != nil {
				fix += ", or one source file (" + strings.Join(o.Builder.Langs.Exts(), ", ") + "; see arena languages)"
			}
			rep.add(Check{Name: "executable", Status: Fail, Detail: err.Error(), Fix: fix})
		case src != "":
			if lang, ok := o.Builder.Langs.For(src); ok && lang.Build == "" {
				nothingToBuild = true
			}
			o.progress(StageBuilding)
			var built bool
			if files, entry, built, err = buildChecks(ctx, rep, o.Builder, &submission.Bot{Name: rep.Name, Source: cmp.Or(o.Label, p),
				SubmissionSHA256: zipSum, SourceEntry: src, Program: sandbox.Program{Name: rep.Name, Files: files}}); err != nil {
				return nil, err
			}
			if !built {
				err = errors.New("did not build")
			}
		default:
			// why names the file and the rule that picked it.
			rep.add(Check{Name: "executable", Status: Pass, Detail: why})
		}
	}
	var exe []byte
	if err == nil {
		rep.Entry = entry
		for _, f := range files {
			if f.Name == entry {
				exe = f.Data
			}
		}
		if bytes.HasPrefix(exe, []byte("#!")) {
			nothingToBuild = true // a script: it runs as written
		}
	}
	if exe != nil && !packaged && rep.SourceBuilt == "" {
		binaryChecks(rep, entry, exe, o.Facts)
	}
	require := o.Require
	if require == nil {
		require = rules.Documents(o.Game)
	}
	single := len(submitted) == 1 && submitted[0].Name == filepath.Base(filepath.Clean(p)) && !strings.EqualFold(filepath.Ext(p), ".zip")
	docChecks(rep, submitted, require, single, nothingToBuild)

	// The bot is run whatever the static checks said (a failure there still
	// fails the submission): its behaviour is what a team needs to see next.
	switch {
	case o.Backend == nil:
		rep.add(Check{Name: "behaviour", Status: Skip, Detail: "the answers and matches were not run: static checks only, no sandbox to run the bot in"})
	case exe == nil:
		rep.add(Check{Name: "behaviour", Status: Skip, Detail: "the answers and matches were not run: " + nothingToRun(rep)})
	default:
		bot := &submission.Bot{Name: rep.Name, Source: cmp.Or(o.Label, p), SHA256: submission.Sum(exe), SubmissionSHA256: zipSum,
			Program: sandbox.Program{Name: rep.Name, Files: files, Entry: entry}}
		if rep.SourceBuilt != "" {
			bot.SHA256 = rep.SourceBuilt
		}
		o.progress(StageRunning)
		if err := behaviour(ctx, rep, bot, files, o); err != nil {
			return nil, err
		}
	}
	return finish(rep), nil
}

// nothingToRun says why a submission has no program to run: the failed
// checks that would have given it one.
func nothingToRun(rep *Report) string {
	var failed []string
	for _, c := range rep.Checks {
		if c.Status == Fail && (c.Name == "module" || c.Name == "executable" || c.Name == "build" || c.Name == "syntax") {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) == 0 {
		return "there is no program to run"
	}
	return "there is no program to run (see the " + strings.Join(failed, " and ") + " check)"
}

func finish(r *Report) *Report {
	r.Pass = r.Failures == 0
	return r
}

// errorsAs finds a refusal of the submission reader in err's chain.
func errorsAs(err error, target **submission.Error) bool { return errors.As(err, target) }

// archiveFix is the advice for a refused archive, by the rule it broke.
func archiveFix(e *submission.Error) string {
	switch e.Kind {
	case submission.KindSymlink:
		return "replace the link with the file itself"
	case submission.KindPathEscape:
		return "zip the folder from inside it (cd bot && zip -r ../bot.zip .)"
	case submission.KindBomb, submission.KindTooLarge, submission.KindTooManyEntries:
		return "submit only the executable, its source and the README"
	case submission.KindEncrypted:
		return "zip without a password"
	case submission.KindDuplicate:
		return "zip each file once"
	}
	return "build the ZIP again with a standard zip tool"
}

// binaryChecks looks at the executable without running it.
func binaryChecks(rep *Report, entry string, exe []byte, facts *ImageFacts) {
	if submission.Classify(exe) == submission.Script {
		interpreterCheck(rep, entry, exe, facts)
		return
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		rep.add(Check{Name: "format", Status: Fail, Detail: fmt.Sprintf("%s is not a readable ELF file: %v", entry, err), Fix: "rebuild the executable"})
		return
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		rep.add(Check{Name: "format", Status: Fail, Detail: fmt.Sprintf("%s is built for %s (%s), not x86-64", entry, f.Machine, f.Class),
			Fix: "build for Linux x86-64 on " + facts.System() + " (a Docker container of that system works on any machine)"})
		return
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		rep.add(Check{Name: "format", Status: Fail, Detail: fmt.Sprintf("%s is an ELF %s, not an executable", entry, f.Type), Fix: "link an executable"})
		return
	}
	rep.add(Check{Name: "format", Status: Pass, Detail: "ELF 64-bit x86-64 executable"})
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data := make([]byte, p.Filesz)
			p.ReadAt(data, 0)
			interp = string(bytes.TrimRight(data, "\x00"))
		}
	}
	if interp == "" {
		rep.add(Check{Name: "linking", Status: Pass, Detail: "statically linked: needs nothing from the image"})
		return
	}
	libs, _ := f.ImportedLibraries()
	rep.add(Check{Name: "linking", Status: Pass, Detail: fmt.Sprintf("dynamically linked (%s), needs %s", interp, strings.Join(libs, ", "))})
	if facts == nil {
		rep.add(Check{Name: "glibc", Status: Skip, Detail: "not checked: the runtime image was not probed"})
		rep.add(Check{Name: "libraries", Status: Skip, Detail: "not checked: the runtime image was not probed"})
		return
	}
	// glibc symbol versions.
	needs, _ := f.DynamicVersionNeeds()
	var newest, need string
	for _, n := range needs {
		for _, d := range n.Needs {
			if v, ok := strings.CutPrefix(d.Dep, "GLIBC_"); ok && version.Less(newest, v) {
				newest, need = v, n.Name
			}
		}
	}
	switch {
	case newest == "":
		rep.add(Check{Name: "glibc", Status: Pass, Detail: "no glibc symbol versions required"})
	case version.Less(facts.Glibc, newest):
		rep.add(Check{Name: "glibc", Status: Fail, Detail: fmt.Sprintf("needs GLIBC_%s (from %s); the runtime image has glibc %s", newest, need, facts.Glibc),
			Fix: "build on " + facts.System() + " (or older), or link statically"})
	default:
		rep.add(Check{Name: "glibc", Status: Pass, Detail: fmt.Sprintf("needs GLIBC_%s at most; the image has %s", newest, facts.Glibc)})
	}
	var missing []string
	for _, l := range append([]string{path.Base(interp)}, libs...) {
		if !facts.Libraries[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		rep.add(Check{Name: "libraries", Status: Fail, Detail: fmt.Sprintf("needs %s, which the runtime image lacks", strings.Join(missing, ", ")),
			Fix: "link those libraries statically, or bundle them into a one-file executable"})
	} else {
		rep.add(Check{Name: "libraries", Status: Pass, Detail: fmt.Sprintf("all %d shared libraries resolve in the runtime image", len(libs)+1)})
	}
}

// moduleChecks checks that the image offers what the game's adapter needs.
func moduleChecks(rep *Report, pack rules.Packager, facts *ImageFacts) {
	if facts == nil {
		rep.add(Check{Name: "interpreter", Status: Skip, Detail: "not checked: the runtime image was not probed"})
		return
	}
	var missing []string
	for _, n := range pack.Needs() {
		if !facts.HasCommand(n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		rep.add(Check{Name: "interpreter", Status: Fail, Detail: "the runtime image lacks " + strings.Join(missing, ", "),
			Fix: "run this game with an image that offers " + strings.Join(pack.Needs(), ", ") + " (e.g. arena image build --base arena-testbase:trixie)"})
		return
	}
	rep.add(Check{Name: "interpreter", Status: Pass, Detail: "the runtime image offers " + strings.Join(pack.Needs(), ", ")})
}

// docChecks looks for the source and the README: a missing one fails when
// require names it, else it warns. A single file handed in (single) is told
// how to package it with its README; a bot with nothing to build (a
// script, a module) is not asked for build steps.
func docChecks(rep *Report, files []sandbox.File, require []string, single, nothingToBuild bool) {
	missing := func(doc string) Status {
		if slices.Contains(require, doc) {
			return Fail
		}
		return Warn
	}
	var sources []string
	var readme *sandbox.File
	for i, f := range files {
		base := strings.ToLower(path.Base(f.Name))
		if sourceExt[path.Ext(base)] {
			sources = append(sources, f.Name)
		}
		if base == "readme" || base == "readme.md" || base == "readme.txt" {
			if readme == nil || strings.Count(f.Name, "/") < strings.Count(readme.Name, "/") {
				readme = &files[i]
			}
		}
	}
	if len(sources) == 0 {
		rep.add(Check{Name: "source", Status: missing(rules.DocSource), Detail: "no source files found", Fix: "add every source file needed to build the bot"})
	} else {
		rep.add(Check{Name: "source", Status: Pass, Detail: fmt.Sprintf("%s (%s)", words.Plural(len(sources), "source file"), strings.Join(first(sources, 3), ", "))})
	}
	if readme == nil {
		c := Check{Name: "readme", Status: missing(rules.DocReadme), Detail: "no README.md or README.txt", Fix: "add a README with the algorithm, the build steps and the data file's name, format and purpose"}
		if single {
			name := files[0].Name
			base := strings.TrimSuffix(name, path.Ext(name))
			c.Detail = "a single file holds no README.md or README.txt"
			c.Fix = fmt.Sprintf("upload a ZIP instead, with %s and a README.md side by side at its top level (no folder around them): for example zip %s.zip %s README.md; the README says how the bot chooses its moves", name, base, name)
			if !nothingToBuild {
				c.Fix += ", how to build it"
			}
			c.Fix += " and the name, format and purpose of any data file it keeps"
		}
		rep.add(c)
		return
	}
	rep.add(Check{Name: "readme", Status: Pass, Detail: readme.Name})
	if !algorithmWords.Match(readme.Data) {
		rep.add(Check{Name: "readme: algorithm", Status: Warn, Detail: "the README does not seem to describe the algorithm", Fix: "say briefly how the bot chooses its moves"})
	}
	if !nothingToBuild && !buildWords.Match(readme.Data) {
		rep.add(Check{Name: "readme: build", Status: Warn, Detail: "the README does not seem to give build instructions", Fix: "give the commands that build the executable"})
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clone(s[:n]), "...")
	}
	return s
}

// behaviour runs the bot on every prepared position as each colour, then a full
// match against the random bot as each colour.
func behaviour(ctx context.Context, rep *Report, bot *submission.Bot, files []sandbox.File, o Options) error {
	proto := o.Game.Protocol().Files
	var walls, firsts []float64
	var peak int64
	dataName := ""
	ex, _ := o.Game.(rules.Exerciser)
	for _, side := range rules.Sides {
		if proto == nil || ex == nil {
			break // the other games get the full matches
		}
		positions := ex.Positions(o.Seed)[side]
		box, err := o.Backend.Open(ctx, sandbox.Spec{Program: bot.Program, Limits: o.Limits,
			Labels: map[string]string{"org.arenabots.arena.validate": rep.Name}})
		if err != nil {
			return fmt.Errorf("start the sandbox: %w", err)
		}
		failed := false
		for _, pos := range positions {
			view, err := pos.State.View(side)
			if err != nil {
				box.Close(ctx)
				return fmt.Errorf("render %s: %w", pos.Label, err)
			}
			r, err := box.Run(ctx, referee.FileTurn(proto, view))
			if err != nil {
				box.Close(ctx)
				return fmt.Errorf("sandbox: %w", err)
			}
			walls = append(walls, float64(r.Wall.Microseconds())/1000)
			peak = max(peak, r.PeakMemory)
			j := referee.JudgeTurn(pos.State, proto, r)
			for _, d := range j.Data {
				dataName = d.Name
			}
			if j.Verdict != rules.OK && !failed {
				failed = true
				detail, fix := failure(o.Game, j.Verdict, j.Reason, r.ExitCode, string(r.Stderr.Data))
				ev := evidence(pos.Label, view, r, j)
				if rd, ok := pos.State.(rules.Renderer); ok {
					ev.Board = rd.Render() // the true position, as the game draws it
				}
				rep.add(Check{Name: "answers as " + side.String(), Status: Fail,
					Detail: pos.Label + ": " + detail, Fix: fix, Evidence: ev})
			}
		}
		if err := box.Close(ctx); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		if !failed {
			rep.add(Check{Name: "answers as " + side.String(), Status: Pass,
				Detail: fmt.Sprintf("%d positions: every setup step, normal, fogged and shielded play, abilities used", len(positions))})
		}
	}
	if dataName != "" {
		var readme []byte
		for _, f := range files {
			if b := strings.ToLower(path.Base(f.Name)); strings.HasPrefix(b, "readme") {
				readme = f.Data
			}
		}
		if !bytes.Contains(readme, []byte(dataName)) {
			rep.add(Check{Name: "readme: data file", Status: Warn, Detail: fmt.Sprintf("the bot keeps a data file %q that the README does not mention", dataName),
				Fix: "name the data file in the README, with its format and purpose"})
		}
	}
	// The full matches are played even after a failure above: a team sees
	// whether its bot gets through a whole game all the same.
	for _, side := range rules.Sides {
		if o.Opponent == nil {
			rep.add(Check{Name: "match as " + side.String(), Status: Skip, Detail: "not run: there is no built-in random bot to play against"})
			continue
		}
		w, first, ms, err := fullMatch(ctx, rep, bot, side, o)
		if err != nil {
			return err
		}
		walls = append(walls, w...)
		if first > 0 {
			firsts = append(firsts, first)
		}
		peak = max(peak, ms)
	}
	if len(walls)+len(firsts) > 0 {
		slices.Sort(walls)
		limit, start := o.Limits.TurnTimeout, time.Duration(0)
		if lp := o.Game.Protocol().Lines; lp != nil {
			l, err := referee.LineTimes(*lp, o.Rules)
			if err != nil {
				return err
			}
			limit, start = l.MoveTime, rules.ProgramStart
		}
		rep.Usage = &Usage{Turns: len(walls), LimitMs: float64(limit.Microseconds()) / 1000, PeakMemory: peak, MemLimit: o.Limits.Memory}
		if len(walls) > 0 {
			rep.Usage.P50Ms, rep.Usage.MaxMs = walls[len(walls)/2], walls[len(walls)-1]
		}
		if len(firsts) > 0 {
			rep.Usage.StartMs, rep.Usage.StartLimitMs = slices.Max(firsts), float64((limit+start).Microseconds())/1000
		}
		switch u := rep.Usage; {
		case rep.Failures > 0:
		case u.MaxMs > 0.8*u.LimitMs:
			rep.add(Check{Name: "time", Status: Warn, Detail: fmt.Sprintf("the slowest turn took %.0f ms of the %.0f ms limit", u.MaxMs, u.LimitMs),
				Fix: "leave a margin: a loaded host is slower than yours"})
		case u.StartMs > 0.8*u.StartLimitMs:
			rep.add(Check{Name: "time", Status: Warn, Detail: fmt.Sprintf("the first answer, which includes starting the program, took %.0f ms of the %.0f ms limit", u.StartMs, u.StartLimitMs),
				Fix: "start faster: load less before the first answer, or leave the work for later turns"})
		}
		if float64(peak) > 0.8*float64(o.Limits.Memory) && rep.Failures == 0 {
			rep.add(Check{Name: "memory", Status: Warn, Detail: fmt.Sprintf("peak memory %d MiB of %d MiB", peak>>20, o.Limits.Memory>>20), Fix: "use less memory"})
		}
	}
	return nil
}

// fixFor is what a bot author should do about a verdict: the game's own
// advice where it has some (rules.Advisor), else what holds for any game.
func fixFor(g rules.Game, v rules.Verdict) string {
	if a, ok := g.(rules.Advisor); ok {
		if fix := a.Advice(v); fix != "" {
			return fix
		}
	}
	files := g.Protocol().Files
	switch v {
	case rules.Timeout:
		return "answer well within the turn limit, on every kind of state"
	case rules.Crash, rules.BotError:
		return "run the bot on the state shown and fix the crash (the stderr tail is below)"
	case rules.OutOfMemory:
		return "stay under the memory limit"
	case rules.InvalidOutput:
		if files == nil {
			return "answer each question with exactly one line, as the protocol shows, and print nothing else"
		}
		return "write " + files.MoveFile + " exactly as the guide shows, then exit 0"
	case rules.IllegalMove:
		return "play only moves the rules allow in the position shown (arena rules explain)"
	case rules.BotRejectedState:
		return "read every kind of state the game's protocol describes (arena rules explain)"
	case rules.DataFileViolation:
		if files != nil {
			return fmt.Sprintf("keep at most %d regular data file of at most %d MiB in game_dir", files.DataFiles, files.MaxDataFileBytes>>20)
		}
	}
	return ""
}

func evidence(label string, state []byte, r sandbox.Report, j referee.Judgement) *Evidence {
	return &Evidence{Label: label, State: string(state), Answer: string(r.Answer.Data), ExitCode: r.ExitCode, Signal: r.Signal,
		Verdict: string(j.Verdict), Reason: j.Reason, WallMs: float64(r.Wall.Microseconds()) / 1000,
		PeakMemory: r.PeakMemory, StderrTail: string(r.Stderr.Data)}
}

// lineEvidence adds to a line game's faulty turn t the dialogue that led to
// it and the position it was asked in, rebuilt by replaying the transcript.
func lineEvidence(e *Evidence, lines []transcript.Line, dir string, turns []transcript.Turn, t transcript.Turn) error {
	var h transcript.Header
	if err := lines[0].Decode(&h); err != nil {
		return err
	}
	if h.Protocol != "lines" {
		return nil
	}
	d, err := transcript.Dialogue(h, turns, t.Side, t.Ply)
	if err != nil {
		return err
	}
	// Up to the faulty answer: what came after it was the fault's doing.
	for i, step := range d {
		if step.Question && step.Ply == t.Ply {
			d = d[:i+1]
			break
		}
	}
	for _, step := range d[max(0, len(d)-dialogueSteps):] {
		e.Dialogue = append(e.Dialogue, strings.Split(step.String(), "\n")...)
	}
	replay.Lines(lines, dir, func(s replay.State) {
		if s.Turn.Ply != t.Ply {
			return
		}
		if r, ok := s.Before.(rules.Renderer); ok {
			e.Board = r.Render()
		}
	})
	return nil
}

// buildChecks builds a submission handed in as source: a "build" check with
// the compiler's own lines when it fails, then the language's syntax check
// (Python's byte-compile, node --check). It returns the program to run.
func buildChecks(ctx context.Context, rep *Report, b *build.Builder, bot *submission.Bot) ([]sandbox.File, string, bool, error) {
	lang, _ := b.Langs.For(bot.SourceEntry)
	built, err := b.Ready(ctx, bot)
	if err != nil {
		return nil, "", false, err
	}
	if built.BuildError != "" {
		first := headline(built.BuildError)
		fix := "make it build in the runtime image with: " + strings.ReplaceAll(lang.Build, "{src}", bot.SourceEntry) + " (arena languages shows every language's build)"
		if lang.Build == "" { // nothing to compile: what failed is the file's name or its copy
			fix = "do what the line above says"
		}
		rep.add(Check{Name: "build", Status: Fail, Detail: first, Fix: fix,
			Evidence: &Evidence{Label: "the build of " + bot.SourceEntry, Verdict: "build-error", Output: built.BuildError}})
		return nil, "", false, nil
	}
	rep.add(Check{Name: "build", Status: Pass, Detail: built.Choice})
	complaint, err := b.Check(ctx, bot)
	if err != nil {
		return nil, "", false, err
	}
	if complaint != "" {
		c := Check{Name: "syntax", Status: Fail, Detail: bot.SourceEntry + ": " + headline(complaint),
			Fix:      "fix the errors shown; the check is: " + strings.ReplaceAll(lang.Check, "{src}", bot.SourceEntry),
			Evidence: &Evidence{Label: "the syntax check of " + bot.SourceEntry, Verdict: "build-error", Output: complaint}}
		if e, ok := referee.SyntaxError(complaint); ok {
			c.Detail, c.Fix = e.Detail, e.Fix // the file, the line and the error
		}
		rep.add(c)
		return nil, "", false, nil
	}
	if lang.Check != "" {
		rep.add(Check{Name: "syntax", Status: Pass, Detail: strings.ReplaceAll(lang.Check, "{src}", bot.SourceEntry) + " finds nothing wrong"})
	}
	rep.SourceBuilt = built.SHA256
	return built.Program.Files, built.Program.Entry, true, nil
}

// headline is the line of a build's output worth a report's one line: the
// first that names an error, else the first.
func headline(out string) string {
	lines := strings.Split(out, "\n")
	for _, l := range lines[1:] {
		if strings.Contains(strings.ToLower(l), "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSuffix(lines[0], ":")
}

// MatchDir is where a validation kept in dir (Options.Dir) keeps its full
// match with the bot on side.
func MatchDir(dir string, side rules.Side) string {
	return filepath.Join(dir, "match-as-"+side.String())
}

// fullMatch plays the bot against the random bot with the bot on side. It
// returns the bot's answers' wall times in ms, apart from its first answer
// in a line game (first; 0 for none), whose clock also covers starting the
// program, and its peak memory.
func fullMatch(ctx context.Context, rep *Report, bot *submission.Bot, side rules.Side, o Options) (walls []float64, first float64, peak int64, err error) {
	dir := ""
	if o.Dir != "" {
		dir = MatchDir(o.Dir, side)
	} else {
		tmp, err := os.MkdirTemp("", "arena-validate-")
		if err != nil {
			return nil, 0, 0, err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "match")
	}
	white, black := bot, o.Opponent
	if side == rules.Black {
		white, black = o.Opponent, bot
	}
	res, err := match.Run(ctx, match.Config{Game: o.Game, Rules: o.Rules, Seed: o.Seed + uint64(side), White: white, Black: black,
		Backend: o.Backend, Limits: o.Limits, Dir: dir, Labels: map[string]string{"org.arenabots.arena.validate": rep.Name}})
	if err != nil {
		return nil, 0, 0, err
	}
	name := "match as " + side.String()
	if res.Reason == transcript.ReasonAborted {
		return nil, 0, 0, fmt.Errorf("%s aborted by the host or sandbox: %s", name, res.AbortReason)
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		return nil, 0, 0, err
	}
	var foot transcript.Footer
	if lines[len(lines)-1].Decode(&foot) == nil {
		for _, s := range foot.Sessions {
			if s.Side == side.String() {
				peak = max(peak, s.PeakMemory)
			}
		}
	}
	var turns []transcript.Turn
	asked := false
	for _, l := range lines {
		var t transcript.Turn
		if l.Type != transcript.TypeTurn || l.Decode(&t) != nil {
			continue
		}
		turns = append(turns, t)
		if t.Side != side.String() || t.Auto {
			continue
		}
		if o.Game.Protocol().Lines != nil && !asked {
			first, asked = t.WallMs, true
		} else {
			walls = append(walls, t.WallMs)
		}
		peak = max(peak, t.PeakMemory)
		if t.Verdict != string(rules.OK) {
			answer := ""
			if t.Answer != nil {
				answer = *t.Answer
			}
			e := &Evidence{Label: fmt.Sprintf("ply %d of the match as %s", t.Ply, side), State: t.State, Answer: answer,
				ExitCode: t.ExitCode, Signal: t.Signal, Verdict: t.Verdict, Reason: t.Reason, WallMs: t.WallMs,
				PeakMemory: t.PeakMemory, StderrTail: t.StderrTail}
			if err := lineEvidence(e, lines, dir, turns, t); err != nil {
				return nil, 0, 0, err
			}
			detail, fix := failure(o.Game, rules.Verdict(t.Verdict), t.Reason, t.ExitCode, t.StderrTail)
			rep.add(Check{Name: name, Status: Fail, Detail: fmt.Sprintf("ply %d: %s", t.Ply, detail), Fix: fix,
				Evidence: e})
			return walls, first, peak, nil
		}
	}
	outcome := "a draw (" + res.Reason + ")"
	if res.Winner != transcript.WinnerDraw {
		who := "the random bot"
		if res.Winner == side.String() {
			who = "this bot"
		}
		outcome = who + " won by " + res.Reason
	}
	rep.add(Check{Name: name, Status: Pass, Detail: fmt.Sprintf("a full match against the random bot: %s after %s, no faults", outcome, words.Plural(res.Plies, "ply"))})
	return walls, first, peak, nil
}

// interpreterCheck reads a script's #! line as Linux will when the bot is
// run (submission.Shebang): the program it names must be in the runtime
// image, and the line must name one program as Linux reads it.
func interpreterCheck(rep *Report, entry string, exe []byte, facts *ImageFacts) {
	interp, arg, _ := submission.Shebang(exe)
	fail := func(detail, fix string) {
		rep.add(Check{Name: "interpreter", Status: Fail, Detail: entry + ": " + detail, Fix: fix})
	}
	const envFix = "start the script with #!/usr/bin/env python3 (or the interpreter it needs), with nothing after the interpreter's name"
	switch {
	case interp == "":
		fail("its #! line names no interpreter", envFix)
		return
	case strings.ContainsRune(interp+arg, '\r'):
		fail(fmt.Sprintf("its #! line ends in a carriage return: Linux looks for %q", strings.TrimSpace(interp+" "+arg)),
			"save the script with Unix line endings (LF), or submit it as source without the #! line")
		return
	}
	prog := interp
	if path.Base(interp) == "env" {
		switch {
		case arg == "":
			fail("#!"+interp+" names no program for env to run", envFix)
			return
		case strings.HasPrefix(arg, "-S"):
			fields := strings.Fields(strings.TrimPrefix(arg, "-S"))
			if len(fields) == 0 {
				fail("#!"+interp+" -S names no program", envFix)
				return
			}
			prog = fields[0]
		case strings.ContainsAny(arg, " \t"):
			// Linux hands env the rest of the line as one argument.
			fail(fmt.Sprintf("#!%s %s: Linux passes %q to env as one word, and env finds no program of that name", interp, arg, arg),
				fmt.Sprintf("write #!/usr/bin/env -S %s, or name the interpreter by its path (#!/usr/bin/%s)", arg, arg))
			return
		default:
			prog = arg
		}
	}
	switch {
	case facts == nil:
		rep.add(Check{Name: "interpreter", Status: Skip, Detail: "no image facts"})
	case facts.HasCommand(prog):
		rep.add(Check{Name: "interpreter", Status: Pass, Detail: fmt.Sprintf("%s runs under %s, which the runtime image has", entry, prog)})
	default:
		rep.add(Check{Name: "interpreter", Status: Fail, Detail: fmt.Sprintf("%s needs %s, which the runtime image does not have", entry, prog),
			Fix: "use an interpreter the image has (python3, node...), or hand in source in a language of the event (arena languages), or a one-file executable built on " + facts.System()})
	}
}

// First is the failing check to fix first (nil when none fails): the most
// basic, whatever order the checks ran in. A submission that cannot be
// read, built or started comes before one that crashes, a crash (or a
// timeout, running out of memory) before a wrong answer, and any of these
// before a missing document: a README is no use to a bot that does not run.
func (r *Report) First() *Check {
	var first *Check
	for i := range r.Checks {
		c := &r.Checks[i]
		if c.Status == Fail && (first == nil || rank(*c) < rank(*first)) {
			first = c
		}
	}
	return first
}

// CannotPlay says why the submission has no program that could play
// (nothing to run, a build or syntax error, an executable the image cannot
// run, a script its interpreter could not read), or "" when it has one:
// whatever else it failed, admitted, it would play.
func (r *Report) CannotPlay() string {
	for _, c := range r.Checks {
		if c.Status != Fail {
			continue
		}
		if rank(c) == 0 {
			return c.Name + ": " + c.Detail
		}
		if e := c.Evidence; e != nil {
			if _, ok := referee.SyntaxError(e.StderrTail); ok {
				return c.Name + ": " + c.Detail
			}
		}
	}
	if r.Entry == "" {
		return nothingToRun(r)
	}
	return ""
}

// rank orders failures by how basic they are (lower first): rank 0 is a
// submission that cannot play (CannotPlay).
func rank(c Check) int {
	switch c.Name {
	case "archive", "module", "executable", "build", "syntax", "format", "glibc", "libraries", "interpreter":
		return 0
	case rules.DocSource, rules.DocReadme:
		return 3
	}
	if e := c.Evidence; e != nil {
		switch rules.Verdict(e.Verdict) {
		case rules.Crash, rules.Timeout, rules.OutOfMemory, rules.BotError, rules.BuildError:
			return 1
		case rules.BotRejectedState:
			if e.ExitCode == 1 && strings.Contains(e.StderrTail, "Error") {
				return 1 // an interpreter's uncaught error, read as a rejection
			}
		}
		if strings.Contains(c.Detail, "Python could not read the script") {
			return 0
		}
	}
	return 2
}
