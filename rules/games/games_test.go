package games_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
