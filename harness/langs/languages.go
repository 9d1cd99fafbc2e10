// Package langs is the table of languages a source submission may be
// written in: how each is recognized, built, checked and run, the built-in
// table and an organizer's own file. It is data: it never builds or runs
// anything (harness/build does).
package langs

import (
	_ "embed"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Language is one line of the languages table.
type Language struct {
	Ext      string // ".cpp"
	Build    string // shell command run in the work directory; "" for none
	Artifact string // the file the build leaves (a template)
	Run      string // the command that starts the bot (a template)
	Check    string // validate's syntax check; "" for none
	Version  string // prints the toolchain's version
}

// Line is the language as its table line says it: part of the cache key, so
// that a changed build command builds again.
func (l Language) Line() string {
	return strings.Join([]string{l.Ext, l.Build, l.Artifact, l.Run, l.Check, l.Version}, " | ")
}

// Languages is a languages table, by extension.
type Languages map[string]Language

//go:embed languages.txt
var defaultTable string

// Default is the built-in table (harness/build/languages.txt, shown in
// docs/languages.md).
func Default() Languages {
	l, err := Parse(defaultTable)
	if err != nil {
		panic("build: the built-in languages table: " + err.Error())
	}
	return l
}

// DefaultTable is the built-in table's text, a languages file to start from.
func DefaultTable() string { return defaultTable }

// Load reads a languages file.
func Load(file string) (Languages, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	l, err := Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return l, nil
}

var extPattern = regexp.MustCompile(`^\.[a-z0-9]+$`)

// Parse reads a languages table: "#" comments, then one language per line,
// six columns separated by "|"; "-" is an empty column.
func Parse(text string) (Languages, error) {
	out := Languages{}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) != 6 {
			return nil, fmt.Errorf("line %d: %d columns, want 6 (source | build | artifact | run | check | version)", i+1, len(cols))
		}
		for j := range cols {
			if cols[j] = strings.TrimSpace(cols[j]); cols[j] == "-" {
				cols[j] = ""
			}
		}
		l := Language{Ext: strings.ToLower(cols[0]), Build: cols[1], Artifact: cols[2], Run: cols[3], Check: cols[4], Version: cols[5]}
		switch {
		case !extPattern.MatchString(l.Ext):
			return nil, fmt.Errorf("line %d: source %q: want an extension such as .cpp", i+1, cols[0])
		case out[l.Ext].Ext != "":
			return nil, fmt.Errorf("line %d: %s is listed twice", i+1, l.Ext)
		case l.Artifact == "" || l.Run == "":
			return nil, fmt.Errorf("line %d: %s needs an artifact and a run command", i+1, l.Ext)
		case l.Build == "" && l.Artifact != "{src}":
			return nil, fmt.Errorf("line %d: %s has no build, so its artifact must be {src}", i+1, l.Ext)
		}
		if art := Expand(l.Artifact, "x.y", 1); art == "" || strings.ContainsAny(art, "/ ") {
			return nil, fmt.Errorf("line %d: %s: the artifact must be one file name", i+1, l.Ext)
		}
		out[l.Ext] = l
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no language listed")
	}
	return out, nil
}

// Exts lists the extensions, sorted.
func (ls Languages) Exts() []string {
	var out []string
	for e := range ls {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// For is the language of a source file's name.
func (ls Languages) For(name string) (Language, bool) {
	l, ok := ls[strings.ToLower(path.Ext(name))]
	return l, ok
}

// Knows says whether name is a source file of a listed language.
func (ls Languages) Knows(name string) bool {
	_, ok := ls.For(name)
	return ok
}

// BuildTimeout is a build's wall-clock limit when none is set.
const BuildTimeout = 60 * time.Second

// ShellWord is s as one word of a shell command: as it is when it is made
// of safe characters, else single-quoted (a buildable source's path holds none).
func ShellWord(s string) string {
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + s + "'"
}

var safeWord = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)

// Expand fills a template's placeholders for the source file src (a name,
// or a path for the launcher); {class} is the name without its extension;
// {dir} is left to the launcher.
func Expand(tmpl, src string, heapMiB int64) string {
	class := strings.TrimSuffix(path.Base(src), path.Ext(src))
	return strings.NewReplacer("{src}", ShellWord(src), "{class}", class, "{heapMiB}", fmt.Sprint(heapMiB)).Replace(tmpl)
}
