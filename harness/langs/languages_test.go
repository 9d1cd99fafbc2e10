package langs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/internal/gobuild"
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
