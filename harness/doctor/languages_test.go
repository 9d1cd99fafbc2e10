package doctor

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/sandbox"
)

func TestProgramsOfALanguage(t *testing.T) {
	t.Parallel()
	table := langs.Default()
	for ext, want := range map[string]string{".py": "python3", ".c": "gcc", ".cpp": "g++", ".java": "javac jar java", ".js": "node"} {
		if got := strings.Join(validate.Programs(table[ext]), " "); got != want {
			t.Errorf("%s: %q, want %q", ext, got, want)
		}
	}
	l := langs.Language{Ext: ".x", Version: "CC=1 /opt/x/bin/xc --version | head -1", Build: "(xc -o bot {src}; ./fix bot) || \"$CC\" x", Run: "{dir}/bot", Check: "xlint {src}"}
	if got, want := strings.Join(validate.Programs(l), " "), "/opt/x/bin/xc head xc xlint"; got != want {
		t.Errorf("programs %q, want %q", got, want)
	}
}

func TestLanguageRowSaysTheVersionOrWhatIsMissing(t *testing.T) {
	t.Parallel()
	table := langs.Default()
	custom := langs.Language{Ext: ".rs", Build: "rustc -O -o bot {src}", Artifact: "bot", Run: "{dir}/bot", Version: "rustc --version"}
	otherJava := table[".java"]
	otherJava.Version = "java -version"
	cases := []struct {
		name   string
		lang   langs.Language
		tc     validate.Toolchain
		found  bool
		status sandbox.Status
		detail string
		fix    string
	}{
		{"a version", table[".c"], validate.Toolchain{Version: "gcc (Debian 14.2.0-19) 14.2.0"}, true, sandbox.OK, "gcc (Debian 14.2.0-19) 14.2.0", ""},
		{"no toolchain", table[".java"], validate.Toolchain{Missing: []string{"javac", "jar", "java"}, Error: "javac -version failed (exit 127): sh: 1: javac: not found"}, true, sandbox.Warn,
			"no javac, jar, java in the image; javac -version failed (exit 127): sh: 1: javac: not found", "its Dockerfile installs default-jdk-headless (javac, jar and java)"},
		{"a version but a program missing", table[".java"], validate.Toolchain{Version: "javac 21.0.8", Missing: []string{"jar"}}, true, sandbox.Warn,
			"no jar in the image; javac 21.0.8", "arena image build"},
		{"a failing version command", table[".js"], validate.Toolchain{Error: "node --version failed (exit 1): node: libicu missing"}, true, sandbox.Warn,
			"node --version failed (exit 1): node: libicu missing", "installs nodejs"},
		{"not asked", table[".py"], validate.Toolchain{}, false, sandbox.Warn, "the image probe did not ask about it", "installs python3"},
		{"a language of the organizer's", custom, validate.Toolchain{Missing: []string{"rustc"}, Error: "rustc --version failed (exit 127)"}, true, sandbox.Warn,
			"no rustc in the image", "install the toolchain (rustc) in the runtime image, e.g. with a Dockerfile FROM it, or drop .rs from the languages file"},
		{"a built-in extension called otherwise", otherJava, validate.Toolchain{Missing: []string{"java"}, Error: "x"}, true, sandbox.Warn,
			"no java", "install the toolchain (java, javac, jar)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := languageRow(c.lang, c.tc, c.found)
			if got.Name != "language "+c.lang.Ext || got.Status != c.status || !strings.Contains(got.Detail, c.detail) || !strings.Contains(got.Fix, c.fix) {
				t.Fatalf("got %s %s %q fix %q; want %s with %q, fix with %q", got.Name, got.Status, got.Detail, got.Fix, c.status, c.detail, c.fix)
			}
			if (got.Status == sandbox.OK) != (got.Fix == "") {
				t.Fatalf("status %s with fix %q", got.Status, got.Fix)
			}
		})
	}
}
