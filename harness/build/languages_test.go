package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox"
)

func TestTheBuiltInTableHasTheFiveLanguages(t *testing.T) {
	t.Parallel()
	l := Default()
	if got := strings.Join(l.Exts(), " "); got != ".c .cpp .java .js .py" {
		t.Fatalf("languages %s", got)
	}
	for name, want := range map[string]string{"Main.java": ".java", "bot.CPP": ".cpp", "x.py": ".py", "x.rs": "", "Makefile": ""} {
		got, ok := l.For(name)
		if ok != (want != "") || got.Ext != want {
			t.Errorf("%s: %q %v, want %q", name, got.Ext, ok, want)
		}
	}
	if c := l[".c"]; c.Build != "gcc -O2 {src} -o bot -lm" || c.Artifact != "bot" {
		t.Errorf(".c: %+v", c)
	}
	if p := l[".py"]; p.Build != "" || p.Artifact != "{src}" || p.Check == "" {
		t.Errorf(".py: %+v", p)
	}
}

// docs/languages.md shows the built-in table: every language line of it.
func TestTheDocsShowTheBuiltInTable(t *testing.T) {
	t.Parallel()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "languages.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(DefaultTable(), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(string(doc), line) {
			t.Errorf("docs/languages.md lacks the line\n%s", line)
		}
	}
}

func TestParseRefusesABadTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, want string }{
		{"", "no language"},
		{".c | gcc | bot | ./bot | -", "5 columns, want 6"},
		{"c | gcc | bot | ./bot | - | gcc --version", `source "c"`},
		{".c | gcc | bot | ./bot | - | v\n.c | gcc | bot | ./bot | - | v", ".c is listed twice"},
		{".c | gcc | bot | - | - | v", "needs an artifact and a run command"},
		{".py | - | bot | python3 bot | - | v", "its artifact must be {src}"},
		{".c | gcc | out/bot | ./bot | - | v", "one file name"},
	} {
		_, err := Parse(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
	l, err := Parse("# a comment\n.rb | - | {src} | ruby {dir}/{src} | ruby -c {src} | ruby --version\n")
	if err != nil || l[".rb"].Run != "ruby {dir}/{src}" {
		t.Fatalf("%v %+v", err, l)
	}
}

func TestTheScriptAndTheLauncher(t *testing.T) {
	t.Parallel()
	java := Default()[".java"]
	if got := expand(java.Run, "Main.java", 512); got != "java -Xmx512m -XX:+UseSerialGC -cp {dir}/bot.jar Main" {
		t.Fatalf("run %q", got)
	}
	s := script(botOf("Main.java"), java)
	for _, want := range []string{"javac -d classes Main.java && jar cf bot.jar -C classes .", "[ -f bot.jar ]", "javac -version"} {
		if !strings.Contains(s, want) {
			t.Errorf("the build script lacks %q:\n%s", want, s)
		}
	}
}

// A source in a folder (a folder zipped as it is, on Windows "New folder")
// is built in that folder, its artifact left at the top for the box to
// collect, and run from where it is.
func TestASourceInAFolderIsBuiltThere(t *testing.T) {
	t.Parallel()
	langs := Default()
	s := script(botOf("New folder/Main.java"), langs[".java"])
	for _, want := range []string{"cd 'New folder' ||", "javac -d classes Main.java && jar cf bot.jar", `cp -p bot.jar "$top"/` + collectedName} {
		if !strings.Contains(s, want) {
			t.Errorf("the build script lacks %q:\n%s", want, s)
		}
	}
	if got := expand(langs[".java"].Run, "New folder/Main.java", 512); !strings.HasSuffix(got, "bot.jar Main") {
		t.Errorf("java runs %q", got)
	}
	if got := expand(langs[".py"].Run, "New folder/bot.py", 0); got != "python3 {dir}/'New folder/bot.py'" {
		t.Errorf("python runs %q", got)
	}
	if c := collected(botOf("bot/walker.js"), langs[".js"]); c != collectedName {
		t.Errorf("a source in a folder is collected as %q", c)
	}
	if c := collected(botOf("walker.js"), langs[".js"]); c != "walker.js" {
		t.Errorf("a source at the top is collected as %q", c)
	}
	for entry, want := range map[string]bool{"a/b/main.c": true, "New folder/main.c": true, "it's/main.c": false, "a\nb/main.c": false, "dir/my bot.c": false, "main.c": true} {
		if _, _, ok := sourcePath(entry); ok != want {
			t.Errorf("sourcePath(%q) builds: %v, want %v", entry, ok, want)
		}
	}
}

func botOf(src string) *submission.Bot {
	return &submission.Bot{Name: "b", SourceEntry: src, Program: sandbox.Program{Name: "b", Files: []sandbox.File{{Name: src, Data: []byte("x")}}}}
}
