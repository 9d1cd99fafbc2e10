package randombot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games"
)

// The random bot answers a file game's turn with a legal move, the same one
// for the same state (a rerun reproduces it), and says what it could not
// read with the exit code the game reads as a rejected state.
func TestRandomBotPlaysAFileTurn(t *testing.T) {
	t.Parallel()
	g, err := rules.Lookup("codeclash")
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.New(nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	view, err := st.View(rules.White)
	if err != nil {
		t.Fatal(err)
	}
	files := g.Protocol().Files
	turn := func(t *testing.T, state []byte) (int, []byte, string) {
		dir := t.TempDir()
		path := filepath.Join(dir, files.StateFile)
		if err := os.WriteFile(path, state, 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		code := Main("codeclash", []string{path}, nil, nil, &stderr)
		move, _ := os.ReadFile(filepath.Join(dir, files.MoveFile))
		return code, move, stderr.String()
	}
	code, move, errs := turn(t, view)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	seen, err := g.FromView(nil, view)
	if err != nil {
		t.Fatal(err)
	}
	m, err := seen.ParseMove(move)
	if err == nil {
		err = seen.Judge(m)
	}
	if err != nil {
		t.Fatalf("the random bot's move %s is not legal: %v", move, err)
	}
	if _, again, _ := turn(t, view); !bytes.Equal(again, move) {
		t.Fatalf("the same state got %s, then %s", move, again)
	}
	if code, _, errs := turn(t, []byte("{")); code != 1 || !strings.Contains(errs, "malformed state") {
		t.Fatalf("a malformed state: exit %d, %q", code, errs)
	}
	if code := Main("go", nil, nil, nil, &bytes.Buffer{}); code != 2 {
		t.Fatalf("an unknown game: exit %d", code)
	}
	for argv0, want := range map[string]string{"/bin/" + Prefix + "chess": "chess", "bin/examples/checkers" + Suffix: "checkers", Program: "", "/bin/" + Prefix: "", Suffix: "", "greedy": ""} {
		if game, ok := GameOf(argv0); ok != (want != "") || game != want {
			t.Errorf("GameOf(%q): %q %v, want %q", argv0, game, ok, want)
		}
	}
}

// A line game's random bot answers each position it is sent, whatever its
// line ending, with a legal move of it, and nothing else it hears (its
// colour, the time left) with anything.
func TestRandomBotAnswersEachPositionOfALineGame(t *testing.T) {
	t.Parallel()
	g, err := rules.Lookup("chess")
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.New(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	view, err := st.View(rules.White)
	if err != nil {
		t.Fatal(err)
	}
	in := "white\r\n" + string(view) + "\r\nA 118\n" + string(view) + "\n"
	var out, stderr bytes.Buffer
	if code := Main("chess", nil, strings.NewReader(in), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	answers := strings.Fields(out.String())
	if len(answers) != 2 {
		t.Fatalf("answers %q to two positions among four lines", answers)
	}
	for _, a := range answers {
		m, err := st.ParseMove([]byte(a))
		if err == nil {
			err = st.Judge(m)
		}
		if err != nil {
			t.Errorf("the random bot's move %q is not legal: %v", a, err)
		}
	}
}
