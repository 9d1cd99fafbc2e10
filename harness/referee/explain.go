package referee

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/arenabots/arena/rules"
)

// Uncaught is an interpreter's report of an exception nobody caught, as a
// bot's stderr shows it.
type Uncaught struct {
	Runtime string // Python, Java or Node.js
	// Last is the line that names the exception, e.g. "RuntimeError: boom";
	// "" when the tail kept no such line.
	Last string
}

var (
	pythonFrame = regexp.MustCompile(`^  File ".*", line [0-9]+`)
	javaHeader  = regexp.MustCompile(`^Exception in thread "[^"]*" (.*)$`)
)

// UncaughtException reads a stderr tail for the trace an interpreter prints
// when an exception ends the program: Python's "Traceback (most recent call
// last):" (or, its head cut off, its "  File ..., line N" frames), Java's
// "Exception in thread", Node.js's stack of "    at " lines. It says which
// and quotes the exception's line.
func UncaughtException(stderr string) (Uncaught, bool) {
	lines := strings.Split(strings.ReplaceAll(stderr, "\r\n", "\n"), "\n")
	// Python: the exception's line is the first unindented line after the
	// last traceback header (the lines between are indented frames).
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "Traceback (most recent call last):") || pythonFrame.MatchString(lines[i]) {
			u := Uncaught{Runtime: "Python"}
			for _, l := range lines[i+1:] {
				if l != "" && l[0] != ' ' && l[0] != '\t' {
					u.Last = quoted(l)
					break
				}
			}
			if u.Last != "" || strings.HasPrefix(lines[i], "Traceback") {
				return u, true
			}
		}
	}
	// Java: "Exception in thread "main" java.lang.X: message", then
	// tab-indented "at" lines.
	for i := len(lines) - 1; i >= 0; i-- {
		if m := javaHeader.FindStringSubmatch(lines[i]); m != nil {
			return Uncaught{Runtime: "Java", Last: quoted(m[1])}, true
		}
	}
	// Node.js: the line before the last block of "    at " lines names the
	// error; a thrown value that is not an Error has no stack, and node
	// says how to get one.
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i], "    at ") && !strings.HasPrefix(lines[i-1], "    at ") {
			return Uncaught{Runtime: "Node.js", Last: quoted(lines[i-1])}, true
		}
		if strings.HasPrefix(lines[i], "(Use `node --trace-uncaught") {
			return Uncaught{Runtime: "Node.js", Last: quoted(lines[i-1])}, true
		}
	}
	return Uncaught{}, false
}

// quoted is a line of a bot's stderr fit to quote: valid UTF-8, control
// characters shown as '?', at most 160 characters.
func quoted(line string) string {
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(strings.TrimSpace(line), "?"))
	if r := []rune(line); len(r) > 160 {
		line = string(r[:157]) + "..."
	}
	return line
}

// Explanation is what a turn's evidence says beyond its verdict, for the
// bot's author. The verdict stands as the rules decide it from the exit
// code: replay decides it again from the same facts.
type Explanation struct {
	Detail string // what happened
	Fix    string // what to do about it
}

// ExplainExit says what a file-protocol turn's exit code and stderr tail
// show when they disagree with what the rules read into the exit code: an
// interpreter exits 1 when an exception nobody caught ends the program, and
// a game's rules may count exit 1 as the bot rejecting the state it was
// given (Code Clash does). Then the bot crashed, and the explanation says
// so, quoting the exception, and how to make the exit code tell the truth.
// v is the turn's verdict; false when there is nothing to add to it.
//
// Two more are told apart: a Python script that does not parse (a syntax
// error: no turn ever ran, whatever the exit code is read as), named by
// its file and line; and a bot that says it failed (the game's bot-error
// exit code) and printed nothing: its own error handler caught something
// and kept it quiet.
func ExplainExit(p *rules.FileProtocol, v rules.Verdict, exitCode int, stderr string) (Explanation, bool) {
	if e, ok := SyntaxError(stderr); ok {
		return e, true
	}
	if p != nil && v == rules.BotError && p.ExitVerdicts[exitCode] == v && strings.TrimSpace(stderr) == "" {
		return Explanation{
			Detail: fmt.Sprintf("the bot exited %d, which says \"I failed\" (%s), and printed nothing: its own error handler caught an error and kept it quiet", exitCode, v),
			Fix:    "print the error where the bot catches it (in Python: traceback.print_exc() before exiting), run it on the state shown, and fix what it says",
		}, true
	}
	if p == nil || exitCode != 1 || v != rules.BotRejectedState || p.ExitVerdicts[exitCode] != v {
		return Explanation{}, false
	}
	u, ok := UncaughtException(stderr)
	if !ok {
		return Explanation{}, false
	}
	what := "an uncaught " + u.Runtime + " exception"
	if u.Last != "" {
		what += fmt.Sprintf(" (%s)", u.Last)
	}
	e := Explanation{Detail: fmt.Sprintf("the bot crashed with %s; the rules count exit 1 as \"rejected the state\" (%s)", what, v),
		Fix: "fix the crash (the stderr tail shows where it happened)"}
	codes := slices.Sorted(maps.Keys(p.ExitVerdicts))
	for _, code := range codes {
		if p.ExitVerdicts[code] == rules.BotError {
			e.Fix = fmt.Sprintf("catch errors and exit %d (bot error), or %s: exit 1 tells the referee the state was malformed", code, e.Fix)
			break
		}
	}
	return e, true
}

var pythonSyntax = regexp.MustCompile(`(?m)^ *File "([^"]*)", line ([0-9]+)\n(?:.*\n){0,3}?((?:SyntaxError|IndentationError|TabError): .*)$`)

// SyntaxError reads a Python script's failure to parse from its stderr:
// the file, the line and the error, and what to do.
func SyntaxError(stderr string) (Explanation, bool) {
	m := pythonSyntax.FindStringSubmatch(strings.ReplaceAll(stderr, "\r\n", "\n"))
	if m == nil {
		return Explanation{}, false
	}
	file := m[1]
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		file = file[i+1:]
	}
	return Explanation{
		Detail: fmt.Sprintf("%s, line %s: %s: Python could not read the script, so it never ran", quoted(file), m[2], quoted(m[3])),
		Fix:    fmt.Sprintf("fix the syntax error at %s line %s (python3 -m py_compile %s shows it on your machine)", quoted(file), m[2], quoted(file)),
	}, true
}
