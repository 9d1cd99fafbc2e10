// Package build turns a bot handed in as source (.py, .c, .cpp, .java, .js,
// or any language of an organizer's languages file) into a program the
// sandbox runs: the build runs in a box of the runtime image, hardened like a
// bot's, with its own time limit, and its artifact comes back through the
// backend, so a remote engine works. Artifacts are cached by the source's
// hash, the language's line and the image.
//
// It must never run a compiler, or anything a submission holds, on the host.
package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox"
)

// MaxArtifact caps what a build may leave.
const MaxArtifact = 64 << 20

// errorLines is how much of a failed build's output a report keeps.
const errorLines = 20

// Builder builds source submissions in the sandbox.
type Builder struct {
	Backend sandbox.Backend
	Langs   langs.Languages
	// Limits are the bots' limits; a build runs under them with its own
	// wall-clock limit, Timeout (default langs.BuildTimeout).
	Limits  sandbox.Limits
	Timeout time.Duration
	// Cache is a directory for artifacts ("": no cache).
	Cache  string
	Labels map[string]string

	builds atomic.Int64
	mu     sync.Mutex
	image  string // the backend's image id, for the cache key
}

// Builds counts the builds run, cache hits excluded.
func (b *Builder) Builds() int64 { return b.builds.Load() }

// Needs says whether bot must be built before it can run.
func Needs(bot *submission.Bot) bool { return bot.SourceEntry != "" && bot.Program.Entry == "" }

// Ready returns bot as it runs: unchanged when it needs no build; built (or
// taken from the cache) when it is source. A source that does not build is
// returned with BuildError set, the compiler's own first lines and exit
// status: that is the bot's fault, not an error. The error is the sandbox's
// or the cache's.
func (b *Builder) Ready(ctx context.Context, bot *submission.Bot) (*submission.Bot, error) {
	if !Needs(bot) {
		return bot, nil
	}
	lang, ok := b.Langs.For(bot.SourceEntry)
	if !ok {
		return nil, fmt.Errorf("%s: no language for %s (known: %s)", bot.Name, bot.SourceEntry, strings.Join(b.Langs.Exts(), ", "))
	}
	out := *bot
	out.Language = lang.Ext
	if _, _, ok := sourcePath(bot.SourceEntry); !ok {
		out.BuildError = fmt.Sprintf("%s: %s", bot.SourceEntry, sourceRule)
		return &out, nil
	}
	image, err := b.imageID(ctx)
	if err != nil {
		return nil, err
	}
	key := cacheKey(bot, lang, image)
	art, version, hit, err := b.cached(key)
	if err != nil {
		return nil, err
	}
	if !hit {
		var fail string
		art, version, fail, err = b.run(ctx, bot, lang)
		if err != nil {
			return nil, err
		}
		if fail != "" {
			out.BuildError = fail
			return &out, nil
		}
		if err := b.store(key, art, version); err != nil {
			return nil, err
		}
	}
	out.Toolchain = version
	out.Program = b.program(bot, lang, art)
	out.SHA256 = submission.Sum(art)
	out.Choice = fmt.Sprintf("%s built as %s (%s)", bot.SourceEntry, lang.Ext, version)
	if hit {
		out.Choice += ", from the build cache"
	}
	return &out, nil
}

func (b *Builder) imageID(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.image != "" {
		return b.image, nil
	}
	desc, err := b.Backend.Describe(ctx)
	if err != nil {
		return "", err
	}
	id := b.Backend.Name()
	if v := desc["imageId"]; v != "" {
		id = v
	}
	b.image = id
	return id, nil
}

func cacheKey(bot *submission.Bot, lang langs.Language, image string) string {
	h := sha256.New()
	for _, f := range bot.Program.Files {
		fmt.Fprintf(h, "%s %o %s\n", f.Name, f.Mode.Perm(), submission.Sum(f.Data))
	}
	fmt.Fprintf(h, "entry %s\nlanguage %s\nimage %s\n", bot.SourceEntry, lang.Line(), image)
	return hex.EncodeToString(h.Sum(nil))
}

type meta struct {
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// cached returns a cached artifact, checked against its recorded hash.
func (b *Builder) cached(key string) ([]byte, string, bool, error) {
	if b.Cache == "" {
		return nil, "", false, nil
	}
	dir := filepath.Join(b.Cache, key)
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", false, nil // a damaged entry is built again
	}
	art, err := os.ReadFile(filepath.Join(dir, "artifact"))
	if err != nil || submission.Sum(art) != m.SHA256 {
		return nil, "", false, nil
	}
	return art, m.Version, true, nil
}

// store writes an artifact to the cache, the metadata last so that a half
// written entry is never read.
func (b *Builder) store(key string, art []byte, version string) error {
	if b.Cache == "" {
		return nil
	}
	dir := filepath.Join(b.Cache, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("build cache: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "artifact"), art, 0o644); err != nil {
		return fmt.Errorf("build cache: %w", err)
	}
	m, _ := json.Marshal(meta{Version: version, SHA256: submission.Sum(art)})
	tmp := filepath.Join(dir, "meta.json.tmp")
	if err := os.WriteFile(tmp, m, 0o644); err != nil {
		return fmt.Errorf("build cache: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, "meta.json"))
}

// The build script's own exit codes.
const (
	exitNoArtifact = 98
	exitCopy       = 97
)

// collectedName is where the build script leaves the artifact of a source
// in a folder, at the top of the work directory, for the box to collect.
const collectedName = "arena-artifact"

// collected is the file the box collects after the build: the artifact, or
// for a source in a folder the copy the script leaves at the top.
func collected(bot *submission.Bot, lang langs.Language) string {
	dir, name, _ := sourcePath(bot.SourceEntry)
	if dir != "" {
		return collectedName
	}
	return langs.Expand(lang.Artifact, name, 0)
}

// script is the build, as the box runs it: copy the submission into the work
// directory, print the toolchain's version, build in the source's folder with
// the output kept in a file, then show the output's start (the compiler's
// first errors) on stderr.
func script(bot *submission.Bot, lang langs.Language) string {
	dir, src, _ := sourcePath(bot.SourceEntry)
	var b strings.Builder
	b.WriteString("#!/bin/sh\nd=$(dirname \"$0\")\n")
	fmt.Fprintf(&b, "cp -R \"$d\"/. . && rm -f %s || exit %d\n", scriptName, exitCopy)
	if dir != "" {
		fmt.Fprintf(&b, "top=$(pwd) && cd %s || exit %d\n", langs.ShellWord(dir), exitCopy)
	}
	fmt.Fprintf(&b, "(%s) 2>&1 | head -n 1\n", lang.Version)
	build := langs.Expand(lang.Build, src, 0)
	if build == "" {
		build = "true"
	}
	fmt.Fprintf(&b, "(%s) >build.log 2>&1\ncode=$?\n", build)
	fmt.Fprintf(&b, "head -c 16384 build.log >&2\n")
	b.WriteString("[ $code -eq 0 ] || exit $code\n")
	art := langs.Expand(lang.Artifact, src, 0)
	fmt.Fprintf(&b, "[ -f %s ] || { echo \"the build left no %s\" >&2; exit %d; }\n", art, art, exitNoArtifact)
	if dir != "" {
		fmt.Fprintf(&b, "cp -p %s \"$top\"/%s || exit %d\n", art, collectedName, exitCopy)
	}
	return b.String()
}

const scriptName = "arena-build.sh"

// run builds in a fresh box and returns the artifact and the version, or why
// the build failed.
func (b *Builder) run(ctx context.Context, bot *submission.Bot, lang langs.Language) (art []byte, version, fail string, err error) {
	b.builds.Add(1)
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = langs.BuildTimeout
	}
	lim := b.Limits
	lim.TurnTimeout = timeout
	files := append([]sandbox.File{}, bot.Program.Files...)
	files = append(files, sandbox.File{Name: scriptName, Data: []byte(script(bot, lang)), Mode: 0o755})
	box, err := b.Backend.Open(ctx, sandbox.Spec{Program: sandbox.Program{Name: bot.Name + "-build", Files: files, Entry: scriptName},
		Limits: lim, Labels: b.Labels})
	if err != nil {
		return nil, "", "", fmt.Errorf("open a box to build %s: %w", bot.Name, err)
	}
	defer box.Close(context.WithoutCancel(ctx))
	artifact := collected(bot, lang)
	rep, err := box.Run(ctx, sandbox.Turn{Collect: artifact, CollectMax: MaxArtifact, Timeout: timeout})
	if err != nil {
		return nil, "", "", fmt.Errorf("build %s: %w", bot.Name, err)
	}
	version = strings.TrimSpace(firstLine(string(rep.Stdout.Data)))
	output := firstLines(string(rep.Stderr.Data), errorLines)
	switch {
	case rep.TimedOut:
		return nil, version, fmt.Sprintf("the build did not finish within %v%s", timeout, withOutput(output)), nil
	case rep.OOMKilled:
		return nil, version, fmt.Sprintf("the build ran out of memory (%d MiB)%s", lim.Memory>>20, withOutput(output)), nil
	case rep.StartError != "":
		return nil, version, "the build could not start: " + rep.StartError, nil
	case rep.Signal != 0:
		return nil, version, fmt.Sprintf("the build was killed by signal %d%s", rep.Signal, withOutput(output)), nil
	case rep.ExitCode == exitCopy:
		return nil, version, "the submission could not be copied into the build directory (too large for it?)", nil
	case rep.ExitCode != 0:
		return nil, version, fmt.Sprintf("exit status %d%s", rep.ExitCode, withOutput(output)), nil
	case !rep.Answer.Present || rep.Answer.Type != sandbox.TypeFile:
		return nil, version, fmt.Sprintf("the build left no %s", artifact), nil
	case rep.Answer.Truncated:
		return nil, version, fmt.Sprintf("the build left %s of %d bytes; the limit is %d", artifact, rep.Answer.Size, MaxArtifact), nil
	}
	return rep.Answer.Data, version, "", nil
}

func withOutput(s string) string {
	if s == "" {
		return ""
	}
	return ":\n" + s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// HeapMiB is {heapMiB} of a run command for a bot with memory bytes of
// memory: half of it, in MiB, at least 16.
func HeapMiB(memory int64) int64 { return max(memory/2>>20, 16) }

// program is what runs: the submission's files, the artifact, and a launcher
// that starts it with the language's run command.
func (b *Builder) program(bot *submission.Bot, lang langs.Language, art []byte) sandbox.Program {
	src := bot.SourceEntry
	// The artifact's path, not a shell word: an interpreted source is its
	// own artifact and stays where it was.
	name := strings.ReplaceAll(lang.Artifact, "{src}", src)
	run := strings.ReplaceAll(langs.Expand(lang.Run, src, HeapMiB(b.Limits.Memory)), "{dir}", "\"$d\"")
	launcher := "#!/bin/sh\nd=$(dirname \"$0\")\nexec " + run + " \"$@\"\n"
	files := []sandbox.File{}
	for _, f := range bot.Program.Files {
		if f.Name != name && f.Name != launcherName {
			files = append(files, f)
		}
	}
	mode := artifactMode(lang)
	files = append(files, sandbox.File{Name: name, Data: art, Mode: mode},
		sandbox.File{Name: launcherName, Data: []byte(launcher), Mode: 0o755})
	return sandbox.Program{Name: bot.Name, Files: files, Entry: launcherName}
}

const launcherName = "arena-run"

// artifactMode is the artifact's mode: executable when it was built.
func artifactMode(lang langs.Language) os.FileMode {
	if lang.Build == "" {
		return 0o644
	}
	return 0o755
}

// Check runs the language's syntax check (validate's, for languages with no
// build) in the sandbox and returns its complaint, or "" when the source
// passes or the language has no check.
func (b *Builder) Check(ctx context.Context, bot *submission.Bot) (string, error) {
	lang, ok := b.Langs.For(bot.SourceEntry)
	if _, _, named := sourcePath(bot.SourceEntry); !ok || lang.Check == "" || !named {
		return "", nil
	}
	check := langs.Language{Ext: lang.Ext, Build: lang.Check, Artifact: "{src}", Version: lang.Version}
	_, _, fail, err := b.run(ctx, bot, check)
	return fail, err
}

// sourceName is what a source file may be called: it becomes a word of shell
// commands and, for Java, a class name.
var sourceName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z0-9]+$`)

// sourcePath splits a source entry into its folder ("" at the top of the
// submission) and its name, and says whether it can be built: a name that
// sourceName allows, in a folder whose path holds no quote or control
// character (a folder zipped on Windows, "New folder/main.cpp", builds). The
// build runs in that folder.
func sourcePath(entry string) (dir, name string, ok bool) {
	dir, name = path.Split(entry)
	dir = strings.TrimSuffix(dir, "/")
	bad := strings.ContainsFunc(dir, func(r rune) bool { return r == '\'' || r < 0x20 || r == 0x7f })
	return dir, name, sourceName.MatchString(name) && !bad
}

// sourceRule says what sourcePath allows, for a build error.
const sourceRule = "a source file's name must be letters, digits and _ then its extension (it names the program, or the Java class), in a folder whose name holds no quote"
