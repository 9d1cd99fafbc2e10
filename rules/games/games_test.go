package games_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/rules"
	_ "github.com/arenabots/arena/rules/games"
	"github.com/arenabots/arena/rules/rulestest"
)

// Every game tells a participant the protocol its bot speaks, with an
// example; each game's own tests check that the example is real.
func TestEveryExplanationHasAProtocolWithAnExample(t *testing.T) {
	if len(rules.Names()) < 5 {
		t.Fatalf("only %d games registered: %v", len(rules.Names()), rules.Names())
	}
	for _, name := range rules.Names() {
		t.Run(name, func(t *testing.T) {
			g, err := rules.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			headings := map[string]bool{}
			for _, l := range strings.Split(g.Explain(), "\n") {
				if l != "" && l[0] != ' ' {
					headings[strings.Fields(l)[0]] = true
				}
			}
			if !headings["PROTOCOL"] {
				t.Error("the explanation has no PROTOCOL section")
			}
			if !headings["EXAMPLE"] && !headings["EXAMPLES"] {
				t.Error("the explanation has no EXAMPLE section")
			}
			p := g.Protocol()
			switch {
			case p.Lines != nil && len(rulestest.Answers(rulestest.Example(g.Explain()))) == 0:
				t.Error("a line game's example has no dialogue (rows such as \"W< line\" and \"W> answer\")")
			case p.Files != nil && (!strings.Contains(g.Explain(), "\n  "+p.Files.StateFile+"\n") || !strings.Contains(g.Explain(), "\n  "+p.Files.MoveFile+"\n")):
				t.Errorf("a file game's example shows no %s and %s", p.Files.StateFile, p.Files.MoveFile)
			}
		})
	}
}

// Every line game's explanation states the allowance the referee gives a
// bot's first answer (the texts are constants, so they cannot be built from
// rules.ProgramStart).
func TestEveryLineGameStatesTheProgramStart(t *testing.T) {
	want := map[time.Duration]string{time.Second: "first answer may take 1 s longer"}[rules.ProgramStart]
	for _, name := range rules.Names() {
		g, _ := rules.Lookup(name)
		if g.Protocol().Lines == nil {
			continue
		}
		if text := strings.Join(strings.Fields(g.Explain()), " "); want == "" || !strings.Contains(text, want) {
			t.Errorf("rules.ProgramStart is %v; %s's explanation does not say %q", rules.ProgramStart, name, want)
		}
	}
}

// docs/protocols.md holds each line game's explanation verbatim.
func TestTheProtocolsDocIsWhatExplainPrints(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range rules.Names() {
		g, err := rules.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if g.Protocol().Lines == nil {
			continue
		}
		if !strings.Contains(string(doc), "```text\n"+g.Explain()+"```") {
			t.Errorf("docs/protocols.md and `arena rules explain --game %s` disagree; copy the explanation into the doc", name)
		}
	}
}

func TestLoadOpeningsChecksAndOrdersThem(t *testing.T) {
	checkers, _ := rules.Lookup("checkers")
	standard := map[string]string{"menCaptureBackward": "false"}
	seq, err := rules.LoadOpenings(checkers, "acf3", 0, rules.Sequential, 1, standard)
	if err != nil || len(seq) != 156 || seq[0].Name != "ACF 1" {
		t.Fatalf("%d %v", len(seq), err)
	}
	a, err := rules.LoadOpenings(checkers, "acf3", 0, rules.Random, 7, standard)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rules.LoadOpenings(checkers, "acf3", 0, rules.Random, 7, standard)
	c, _ := rules.LoadOpenings(checkers, "acf3", 0, rules.Random, 8, standard)
	if a[0].Name != b[0].Name || a[0].Name == c[0].Name && a[1].Name == c[1].Name {
		t.Errorf("the same seed, the same order; another, another: %s %s %s", a[0].Name, b[0].Name, c[0].Name)
	}
	if again, _ := rules.LoadOpenings(checkers, "acf3", 0, rules.Sequential, 1, standard); again[0].Name != "ACF 1" {
		t.Error("a shuffle changed the deck")
	}
	codeclash, _ := rules.Lookup("codeclash")
	dir := t.TempDir()
	file := filepath.Join(dir, "openings.txt")
	os.WriteFile(file, []byte("rnqkbs/pppppp/6/6/PPPPPP/RNQKBS b 1\nnot a position\n"), 0o644)
	acm, _ := rules.Lookup("acm6x6")
	for _, c := range []struct {
		g                rules.Game
		spec, order, err string
	}{
		{codeclash, "acf3", rules.Sequential, "start from the seed"},
		{checkers, "acf4", rules.Sequential, "no such file, nor a deck"},
		{checkers, "acf3", "shuffled", "opening order"},
		{acm, file, rules.Sequential, "line 2"},
	} {
		if _, err := rules.LoadOpenings(c.g, c.spec, 0, c.order, 1, nil); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %s: %v, want %q", c.g.Name(), c.spec, err, c.err)
		}
	}
}
