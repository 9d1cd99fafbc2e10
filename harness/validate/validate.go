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
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/submission"
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

// Check is one line of the report.
type Check struct {
	Name     string    `json:"name"`
	Status   Status    `json:"status"`
	Detail   string    `json:"detail"`
	Fix      string    `json:"fix,omitempty"`
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Usage is how close the bot runs to its limits: Turns counts its turns
// in the full matches (its first answers too), P50Ms and MaxMs time them.
type Usage struct {
	Turns      int     `json:"turns"`
	P50Ms      float64 `json:"p50Ms"`
	MaxMs      float64 `json:"maxMs"`
	LimitMs    float64 `json:"limitMs"`
	PeakMemory int64   `json:"peakMemory"`
	MemLimit   int64   `json:"memoryLimit"`
	// StartMs is the slowest first answer of a line-game bot, whose clock
	// also covers starting its program, and StartLimitMs its limit (the move
	// time and rules.ProgramStart); P50Ms and MaxMs leave those answers out.
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

func finish(r *Report) *Report {
	r.Pass = r.Failures == 0
	return r
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
