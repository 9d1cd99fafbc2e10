package validate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/randombot"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/rules/codeclash"
)

// The full matches' opponent is arena-random, found in PATH when it is not
// beside the running program, installed under the name that says its game:
// a program of a few MB (the whole arena binary, 71 MB, was installed in
// every validation box). Without it, the error says how to build it.
func TestTheOpponentIsTheSmallRandomBot(t *testing.T) {
	random := gobuild.MustStatic(t, "./cmd/arena-random")
	t.Setenv("PATH", t.TempDir())
	if _, err := Opponent(codeclash.Game{}); err == nil || !strings.Contains(err.Error(), "make") {
		t.Fatalf("with no arena-random anywhere: %v, want an error saying how to build it", err)
	}
	t.Setenv("PATH", filepath.Dir(random))
	b, err := Opponent(codeclash.Game{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Program.Entry != randombot.Prefix+"codeclash" || len(b.Program.Files) != 1 || b.Program.Files[0].Name != b.Program.Entry {
		t.Fatalf("the opponent's program: entry %q, files %d", b.Program.Entry, len(b.Program.Files))
	}
	size := len(b.Program.Files[0].Data)
	t.Logf("the opponent installs %.1f MB", float64(size)/1e6)
	if size > 4<<20 {
		t.Fatalf("the opponent installs %d bytes, want at most 4 MiB", size)
	}
}
