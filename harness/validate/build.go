package validate

import (
	"context"
	"strings"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/referee"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox"
)

var sourceExt = map[string]bool{
	".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".h": true, ".hpp": true, ".rs": true, ".go": true,
	".py": true, ".java": true, ".kt": true, ".js": true, ".ts": true, ".cs": true, ".swift": true, ".rb": true,
	".zig": true, ".nim": true, ".hs": true, ".ml": true, ".scala": true, ".d": true, ".pas": true, ".lua": true, ".jl": true,
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
