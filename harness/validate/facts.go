package validate

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/sandbox"
)

// ImageFacts is what the runtime image offers a bot, read from inside it.
type ImageFacts struct {
	Glibc string `json:"glibc"`
	// OS is the image's operating system as its /etc/os-release names it
	// ("Debian GNU/Linux 13 (trixie)", "Ubuntu 24.04.3 LTS").
	OS string `json:"os,omitempty"`
	// Libraries by language (a source file's extension): what a bot in it
	// may use, as the image's build listed it (/usr/share/arena/libraries);
	// none for an image built before the list was.
	LanguageLibraries map[string]string `json:"languageLibraries,omitempty"`
	Libraries         map[string]bool   `json:"-"`
	// Commands holds the names and absolute paths of the interpreters
	// present, and "python3-<module>" for each of PythonModules python3
	// imports.
	Commands map[string]bool `json:"-"`
	// Versions holds python3's version and each importable module's, by the
	// name Commands uses ("python3", "python3-numpy"); a module without a
	// __version__ has an empty one.
	Versions map[string]string `json:"versions,omitempty"`
	// Toolchains holds what was found of each ToolchainQuery the probe was
	// given, by its Name.
	Toolchains map[string]Toolchain `json:"toolchains,omitempty"`
}

// ToolchainQuery asks the image probe about a toolchain: a language's
// compiler or interpreter and the programs its commands start.
type ToolchainQuery struct {
	Name     string   // its key in ImageFacts.Toolchains (a language's extension)
	Programs []string // looked up in PATH (or as absolute paths)
	Version  string   // a shell command that prints the toolchain's version
}

// Toolchain is what the probe found of a ToolchainQuery.
type Toolchain struct {
	// Version is the first line the version command printed, when it
	// exited 0.
	Version string `json:"version,omitempty"`
	// Missing lists the programs that are not in the image.
	Missing []string `json:"missing,omitempty"`
	// Error says how the version command failed: its exit status and the
	// first line it printed.
	Error string `json:"error,omitempty"`
}

// System is the system a bot's executable is built for: the image's OS as
// it names itself, or, before the image was read, the one the rules name.
func (f *ImageFacts) System() string {
	if f == nil || f.OS == "" {
		return "Ubuntu 24.04"
	}
	return f.OS
}

// OK reports whether every program is there and the version command worked.
func (t Toolchain) OK() bool { return t.Version != "" && t.Error == "" && len(t.Missing) == 0 }

// PythonModules are the Python modules the probe looks for, in the order
// reports name them: the ones the event's script bots import. A game that
// needs one names it "python3-<module>" (rules.Packager's Needs).
var PythonModules = []string{"numpy", "pandas", "tabulate"}

// HasCommand reports whether an interpreter (a name or an absolute path) exists.
func (f *ImageFacts) HasCommand(prog string) bool {
	return f.Commands[prog] || (!path.IsAbs(prog) && f.Commands[path.Base(prog)])
}

// probeScript writes facts.txt: one "key=value" per line. The Python part
// imports each module in turn, so a module that fails to import (a missing
// dependency) is reported absent without hiding the others. Each toolchain
// query is reported by its index: "tcmissing=<i>=<program>" for a program
// not found, "tcexit=<i>=<status>" and "tcout=<i>=<first line>" for its
// version command, which runs with stdin closed and at most
// toolchainVersionTime.
func probeScript(tcs ...ToolchainQuery) string {
	return `#!/bin/sh
{
echo "glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
[ -r /etc/os-release ] && (. /etc/os-release && echo "os=$PRETTY_NAME")
[ -r /usr/share/arena/libraries ] && sed -n 's/^\(\.[A-Za-z0-9]*\)=/langlib=\1=/p' /usr/share/arena/libraries
ldconfig -p 2>/dev/null | awk 'NR > 1 {print "lib=" $1}'
for d in /lib64 /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /usr/lib /usr/local/lib; do
  for f in "$d"/*.so*; do [ -e "$f" ] && echo "lib=${f##*/}"; done
done
for c in sh bash dash env python3 python perl node nodejs java ruby lua php; do
  p=$(command -v "$c" 2>/dev/null) && echo "cmd=$c" && echo "cmd=$p"
done
if command -v python3 >/dev/null 2>&1; then
  python3 -c '
import importlib, sys
print("ver=python3=%d.%d.%d" % sys.version_info[:3])
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except Exception:
        continue
    print("cmd=python3-" + name)
    print("ver=python3-%s=%s" % (name, getattr(module, "__version__", "")))
' ` + strings.Join(PythonModules, " ") + ` 2>/dev/null
fi
for p in /bin/sh /bin/bash /usr/bin/env /usr/bin/python3 /usr/bin/python /usr/local/bin/python3 /usr/bin/perl /usr/bin/node; do
  [ -x "$p" ] && echo "cmd=$p"
done
` + toolchainScript(tcs) + `} > facts.txt
exit 0
`
}

// toolchainVersionTime bounds one toolchain's version command in the probe.
const toolchainVersionTime = 10 * time.Second

// toolchainScript is the part of the probe that asks about toolchains.
func toolchainScript(tcs []ToolchainQuery) string {
	if len(tcs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "if command -v timeout >/dev/null 2>&1; then limit=\"timeout %d\"; else limit=; fi\n", int(toolchainVersionTime/time.Second))
	for i, q := range tcs {
		for _, p := range q.Programs {
			fmt.Fprintf(&b, "command -v %s >/dev/null 2>&1 || echo \"tcmissing=%d=\"%s\n", shellQuote(p), i, shellQuote(p))
		}
		fmt.Fprintf(&b, "out=$($limit sh -c %s 2>&1 </dev/null); echo \"tcexit=%d=$?\"\n", shellQuote(q.Version), i)
		fmt.Fprintf(&b, "printf 'tcout=%d=%%s\\n' \"$(printf '%%s\\n' \"$out\" | sed -n '/[^[:space:]]/{p;q;}')\"\n", i)
	}
	return b.String()
}

// shellQuote makes s one word of sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// probeTime is the least time the probe is given, whatever the bots' turn
// limit: importing pandas alone takes most of a second on an idle host.
const probeTime = 30 * time.Second

// ProbeImage runs a small script in the sandbox to learn the image's glibc
// version, shared libraries and interpreters, python3's version, and which
// of PythonModules it imports, with their versions. The probe runs under lim,
// with at least probeTime to finish: it is arena's program, not a bot's turn.
func ProbeImage(ctx context.Context, b sandbox.Backend, lim sandbox.Limits) (*ImageFacts, error) {
	return ProbeImageWith(ctx, b, lim, nil)
}

// ProbeImageWith is ProbeImage that also asks about toolchains: whether the
// programs of each are there and what its version command prints, run in
// the sandbox like everything else of the probe. The probe's time grows by
// toolchainVersionTime for each query.
func ProbeImageWith(ctx context.Context, b sandbox.Backend, lim sandbox.Limits, tcs []ToolchainQuery) (*ImageFacts, error) {
	lim.TurnTimeout = max(lim.TurnTimeout, probeTime+time.Duration(len(tcs))*toolchainVersionTime)
	prog := sandbox.Program{Name: "probe", Entry: "probe", Files: []sandbox.File{{Name: "probe", Data: []byte(probeScript(tcs...)), Mode: 0o755}}}
	box, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim, Labels: map[string]string{"org.arenabots.arena.validate": "probe"}})
	if err != nil {
		return nil, err
	}
	defer box.Close(ctx)
	r, err := box.Run(ctx, sandbox.Turn{Collect: "facts.txt", CollectMax: 4 << 20})
	if err != nil {
		return nil, err
	}
	if r.ExitCode != 0 || !r.Answer.Present {
		return nil, fmt.Errorf("the image probe failed (exit %d): %s", r.ExitCode, r.Stderr.Data)
	}
	f := parseFacts(r.Answer.Data, tcs...)
	if f.Glibc == "" {
		return nil, fmt.Errorf("the image probe could not read the glibc version")
	}
	return f, nil
}

// parseFacts reads the probe's facts.txt; tcs are the toolchain queries the
// probe was given.
func parseFacts(data []byte, tcs ...ToolchainQuery) *ImageFacts {
	f := &ImageFacts{Libraries: map[string]bool{}, Commands: map[string]bool{}, Versions: map[string]string{}}
	type answer struct {
		missing []string
		exit    string
		out     string
	}
	answers := make([]answer, len(tcs))
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || v == "" {
			continue
		}
		switch k {
		case "glibc":
			f.Glibc = v
		case "os":
			f.OS = v
		case "langlib":
			if ext, what, ok := strings.Cut(v, "="); ok && what != "" {
				if f.LanguageLibraries == nil {
					f.LanguageLibraries = map[string]string{}
				}
				f.LanguageLibraries[ext] = what
			}
		case "lib":
			f.Libraries[v] = true
		case "cmd":
			f.Commands[v] = true
		case "ver":
			if name, ver, ok := strings.Cut(v, "="); ok && name != "" {
				f.Versions[name] = ver
			}
		case "tcmissing", "tcexit", "tcout":
			n, val, _ := strings.Cut(v, "=")
			i, err := strconv.Atoi(n)
			if err != nil || i < 0 || i >= len(tcs) {
				continue
			}
			switch val = strings.TrimSpace(val); k {
			case "tcmissing":
				answers[i].missing = append(answers[i].missing, val)
			case "tcexit":
				answers[i].exit = val
			case "tcout":
				answers[i].out = val
			}
		}
	}
	if len(tcs) > 0 {
		f.Toolchains = map[string]Toolchain{}
	}
	for i, q := range tcs {
		a := answers[i]
		t := Toolchain{Missing: a.missing}
		switch {
		case a.exit == "":
			t.Error = "the probe did not get to run " + q.Version
		case a.exit == "124":
			t.Error = fmt.Sprintf("%s did not finish within %v", q.Version, toolchainVersionTime)
		case a.exit != "0":
			t.Error = fmt.Sprintf("%s failed (exit %s)", q.Version, a.exit)
			if a.out != "" {
				t.Error += ": " + a.out
			}
		case a.out == "":
			t.Error = q.Version + " printed nothing"
		default:
			t.Version = a.out
		}
		f.Toolchains[q.Name] = t
	}
	return f
}

// ToolchainQueries asks the image probe, for each language of the table,
// for the programs its commands start and its version.
func ToolchainQueries(langs langs.Languages) []ToolchainQuery {
	var out []ToolchainQuery
	for _, ext := range langs.Exts() {
		l := langs[ext]
		out = append(out, ToolchainQuery{Name: ext, Programs: Programs(l), Version: l.Version})
	}
	return out
}

// Programs lists the programs a language's commands start (the version
// command's, the build's, the syntax check's, then the run's): the first
// word of each simple command, leaving out what the build leaves itself
// ({dir}/bot, ./bot) and variable assignments.
func Programs(l langs.Language) []string {
	var out []string
	for _, cmd := range []string{l.Version, l.Build, l.Check, l.Run} {
		for _, part := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune("&|;()", r) }) {
			for _, word := range strings.Fields(part) {
				if strings.Contains(word, "=") {
					continue // FOO=bar before the program
				}
				if !strings.ContainsAny(word, "{}$`'\"") && (!strings.Contains(word, "/") || strings.HasPrefix(word, "/")) && !slices.Contains(out, word) {
					out = append(out, word)
				}
				break
			}
		}
	}
	return out
}
