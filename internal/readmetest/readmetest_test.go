package readmetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/gobuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// command is a command a document shows.
type command struct {
	where string // file:line
	// block numbers the code block it is in, from 1; the commands of a block
	// run in order, in one directory. 0: named in the text, run on its own.
	block int
	text  string // continuation lines joined, its comment dropped
}

var (
	fence   = regexp.MustCompile("^\\s*```")
	span    = regexp.MustCompile("`((?:bin/)?arena [^`]*)`")
	comment = regexp.MustCompile(`\s+#.*$`)
)

// isArena reports whether a command line runs arena.
func isArena(text string) bool {
	return strings.HasPrefix(text, "arena ") || strings.HasPrefix(text, "bin/arena ")
}

// commands reads what a markdown file (file, a path under root) shows to
// run: every line of its shell code blocks and every line of any code block
// that starts with arena or bin/arena, continuation lines joined and comments
// dropped; with inText, also the arena commands of its text's code spans.
func commands(t *testing.T, root, file string, inText bool) []command {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []command
	in, shell, block, start := false, false, 0, 0
	var joined []string
	for i, line := range strings.Split(string(data), "\n") {
		if fence.MatchString(line) {
			if !in {
				block++
				lang := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "`"))
				shell = lang == "sh" || lang == "bash" || lang == "shell"
			}
			in, joined = !in, nil
			continue
		}
		if !in {
			if inText {
				for _, m := range span.FindAllStringSubmatch(line, -1) {
					out = append(out, command{where: fmt.Sprintf("%s:%d", file, i+1), text: m[1]})
				}
			}
			continue
		}
		l := strings.TrimSpace(line)
		if len(joined) == 0 {
			start = i + 1
		}
		joined = append(joined, strings.TrimSpace(strings.TrimSuffix(l, "\\")))
		if strings.HasSuffix(l, "\\") {
			continue
		}
		text := strings.TrimSpace(comment.ReplaceAllString(strings.Join(joined, " "), ""))
		joined = nil
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if shell || isArena(text) {
			out = append(out, command{where: fmt.Sprintf("%s:%d", file, start), block: block, text: text})
		}
	}
	return out
}

// repo is the repository's root.
func repo(t *testing.T) string {
	t.Helper()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// shared is what every test here uses: bin/ as make builds it, and the home
// directory the commands run with (their signing key).
var shared struct {
	once sync.Once
	dir  string // holds bin/ and home/
	err  error
}

// goExamples are the example bots the Makefile's examples target builds,
// by their name in bin/examples; scripts are the files it copies there.
var (
	goExamples = map[string]string{
		"random": "./examples/random", "greedy": "./examples/greedy",
		"chess-random": "./cmd/arena-random", "acm6x6-random": "./cmd/arena-random", "checkers-random": "./cmd/arena-random",
		"tiles-random": "./examples/tiles-random",
	}
	scripts = map[string]string{
		"checkers_random_bot.py": "examples/checkers/random_bot.py",
		"random.py":              "examples/python/random_bot.py",
		"tiles_random_bot.py":    "examples/tiles/random_bot.py",
	}
)

// built returns the directory holding bin/ as make builds it: bin/arena
// with its random bot, bin/examples/ and each example as a complete
// submission.
func built(t *testing.T) string {
	t.Helper()
	shared.once.Do(func() { shared.dir, shared.err = build() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir
}

func build() (string, error) {
	root, err := gobuild.ModuleRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "arena-readmetest-")
	if err != nil {
		return "", err
	}
	ex := filepath.Join(dir, "bin", "examples")
	if err := os.MkdirAll(ex, 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "home", ".config"), 0o700); err != nil {
		return "", err
	}
	for _, prog := range []string{"arena", "arena-random"} {
		exe, err := gobuild.Static("./cmd/" + prog)
		if err != nil {
			return "", err
		}
		if err := copyFile(exe, filepath.Join(dir, "bin", prog)); err != nil {
			return "", err
		}
	}
	for name, pkg := range goExamples {
		exe, err := gobuild.Static(pkg)
		if err != nil {
			return "", err
		}
		if err := copyFile(exe, filepath.Join(ex, name)); err != nil {
			return "", err
		}
	}
	for name, src := range scripts {
		if err := copyFile(filepath.Join(root, src), filepath.Join(ex, name)); err != nil {
			return "", err
		}
	}
	subs, err := makefileSubmissions(root)
	if err != nil {
		return "", err
	}
	for _, s := range subs {
		to := filepath.Join(dir, filepath.FromSlash(s.path))
		if err := os.MkdirAll(to, 0o755); err != nil {
			return "", err
		}
		for _, f := range s.files {
			from := filepath.Join(root, filepath.FromSlash(f))
			if strings.HasPrefix(f, "bin/") {
				from = filepath.Join(dir, filepath.FromSlash(f))
			}
			if err := copyFile(from, filepath.Join(to, filepath.Base(f))); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}

// submission is an example as a complete submission, as the Makefile makes
// it.
type submission struct {
	game, path string   // path: bin/examples/submissions/GAME/NAME
	files      []string // what goes in it: paths in the repository, or in bin/
}

var submissionLine = regexp.MustCompile(`(?m)^\t\$\(call submission,([^,]+),([^,]+),([^)]+)\)\s*$`)

// makefileSubmissions reads the Makefile's submission lines.
func makefileSubmissions(root string) ([]submission, error) {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	var out []submission
	for _, m := range submissionLine.FindAllStringSubmatch(string(data), -1) {
		out = append(out, submission{game: m[1], path: "bin/examples/submissions/" + m[1] + "/" + m[2], files: strings.Fields(m[3])})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the Makefile has no $(call submission,...) lines")
	}
	return out, nil
}

func copyFile(from, to string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// workDir is a directory to run documented commands in as from the root of
// a checkout after make: bin/ and examples/ are there.
func workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, target := range map[string]string{"bin": filepath.Join(built(t), "bin"), "examples": filepath.Join(repo(t), "examples")} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// run runs a command line with sh in dir, arena on the PATH, bots in the
// runtime image of the tests; it fails the test when the command fails, and
// returns what it wrote on stdout.
func run(t *testing.T, dir, image, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	home := filepath.Join(built(t), "home")
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "ARENA_IMAGE="+image,
		"PATH="+filepath.Join(built(t), "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s\nfailed: %v\nstdout:\n%s\nstderr:\n%s", line, err, stdout.String(), stderr.String())
	}
	t.Logf("%s: ok in %v", line, time.Since(start).Round(100*time.Millisecond))
	return stdout.String()
}

var (
	turnsRule = regexp.MustCompile(`\bturns=\d+`)
	repeat    = regexp.MustCompile(`--repeat \d+`)
)

// shorter makes a command that plays games play short ones: a short game
// (the game's length option) and one game per pair, unless the command sets
// them; a rerun repeats a turn twice at most.
func shorter(line string) string {
	line = repeat.ReplaceAllString(line, "--repeat 2")
	f := strings.Fields(line)
	if len(f) < 2 || !isArena(line) || !slices.Contains([]string{"match", "tournament", "validate"}, f[1]) {
		return line
	}
	game := ""
	if i := slices.Index(f, "--game"); i >= 0 && i+1 < len(f) {
		game = f[i+1]
	}
	var add []string
	switch game {
	case "tiles":
		line = turnsRule.ReplaceAllString(line, "turns=30")
		if !turnsRule.MatchString(line) {
			add = append(add, "--rule", "turns=30")
		}
	case "acm6x6":
		if !strings.Contains(line, "maxMoves=") {
			add = append(add, "--rule", "maxMoves=20")
		}
	default:
		if !slices.Contains(f, "--max-plies") {
			add = append(add, "--max-plies", "20")
		}
	}
	if f[1] == "tournament" && !slices.Contains(f, "--games-per-pair") {
		add = append(add, "--games-per-pair", "1")
	}
	return withFlags(line, add...)
}

// withFlags puts flags right after an arena command's name (arena match
// --flag ...), where they are read before its arguments.
func withFlags(line string, flags ...string) string {
	if len(flags) == 0 {
		return line
	}
	prog, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimLeft(rest, " ")
	sub, args, _ := strings.Cut(rest, " ")
	return strings.TrimSpace(prog + " " + sub + " " + strings.Join(flags, " ") + " " + args)
}

func TestCommandsAreReadAsShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.md"), []byte("Run `arena key` or `make`.\n\n```sh\nbash go.sh   # setup\nbin/arena match --white a \\\n    --black b\n# a comment\n```\n\n```\narena replay m\nnot a command\n```\n"), 0o644)
	var got []string
	for _, c := range commands(t, dir, "x.md", true) {
		got = append(got, fmt.Sprintf("%d %s", c.block, c.text))
	}
	want := []string{"0 arena key", "1 bash go.sh", "1 bin/arena match --white a --black b", "2 arena replay m"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for in, want := range map[string]string{
		"arena tournament --out e/ s/":                          "arena tournament --max-plies 20 --games-per-pair 1 --out e/ s/",
		"bin/arena match --game tiles --rule turns=150 --out m": "bin/arena match --game tiles --rule turns=30 --out m",
		"arena validate --game tiles x":                         "arena validate --rule turns=30 --game tiles x",
		"arena match --max-plies 9 --white a":                   "arena match --max-plies 9 --white a",
		"arena rerun m --ply 3 --bot b --repeat 20":             "arena rerun m --ply 3 --bot b --repeat 2",
		"arena replay m":                                        "arena replay m",
	} {
		if got := shorter(in); got != want {
			t.Errorf("shorter(%q) = %q, want %q", in, got, want)
		}
	}
}
