package build

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/sandbox"
)

func TestTheScriptAndTheLauncher(t *testing.T) {
	t.Parallel()
	java := langs.Default()[".java"]
	if got := langs.Expand(java.Run, "Main.java", 512); got != "java -Xmx512m -XX:+UseSerialGC -cp {dir}/bot.jar Main" {
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
	table := langs.Default()
	s := script(botOf("New folder/Main.java"), table[".java"])
	for _, want := range []string{"cd 'New folder' ||", "javac -d classes Main.java && jar cf bot.jar", `cp -p bot.jar "$top"/` + collectedName} {
		if !strings.Contains(s, want) {
			t.Errorf("the build script lacks %q:\n%s", want, s)
		}
	}
	if got := langs.Expand(table[".java"].Run, "New folder/Main.java", 512); !strings.HasSuffix(got, "bot.jar Main") {
		t.Errorf("java runs %q", got)
	}
	if got := langs.Expand(table[".py"].Run, "New folder/bot.py", 0); got != "python3 {dir}/'New folder/bot.py'" {
		t.Errorf("python runs %q", got)
	}
	if c := collected(botOf("bot/walker.js"), table[".js"]); c != collectedName {
		t.Errorf("a source in a folder is collected as %q", c)
	}
	if c := collected(botOf("walker.js"), table[".js"]); c != "walker.js" {
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
