package readmetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules/tiles"
)

// Every example, as make builds it into a complete submission, passes
// arena validate for its game: run as its README says, it passes with no
// warning and no check skipped. Every submission the Makefile makes is
// validated by its example's README.
func TestExampleSubmissionsPassValidate(t *testing.T) {
	t.Parallel()
	_, image := dockertest.Engine(t)
	root := repo(t)
	readmes, err := filepath.Glob(filepath.Join(root, "examples", "*", "README.md"))
	if err != nil || len(readmes) == 0 {
		t.Fatalf("no example READMEs: %v", err)
	}
	// The built-in random bot is the line games' example.
	readmes = append(readmes, filepath.Join(root, "cmd", "arena-random", "README.md"))
	var mu sync.Mutex
	validated := map[string]bool{}
	t.Run("readme", func(t *testing.T) {
		for _, readme := range readmes {
			rel, _ := filepath.Rel(root, readme)
			for _, c := range commands(t, root, rel, false) {
				if !isArena(c.text) {
					continue // make: built above as make builds it
				}
				if f := strings.Fields(c.text); f[1] != "validate" {
					t.Errorf("%s: %q: an example's README checks its submission with arena validate", c.where, c.text)
					continue
				}
				t.Run(c.where, func(t *testing.T) {
					t.Parallel()
					out := run(t, workDir(t), image, shorter(withFlags(c.text, "--json")))
					var reports []validate.Report
					if err := json.Unmarshal([]byte(out), &reports); err != nil || len(reports) == 0 {
						t.Fatalf("%s: the JSON reports do not read (%v):\n%s", c.text, err, out)
					}
					for _, r := range reports {
						mu.Lock()
						validated[filepath.ToSlash(filepath.Clean(r.Path))] = true
						mu.Unlock()
						bad := !r.Pass || r.Warnings > 0
						for _, ch := range r.Checks {
							bad = bad || ch.Status == validate.Skip
						}
						if bad {
							var b strings.Builder
							r.WriteText(&b)
							t.Errorf("%s: want a pass with no warning and nothing skipped:\n%s", c.text, b.String())
						}
					}
				})
			}
		}
	})
	subs, err := makefileSubmissions(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		if !validated[s.path] {
			t.Errorf("%s (make examples) is validated by no example's README", s.path)
		}
	}
}

// The maps shipped with the examples are valid maps of the reference
// engine's CSV.
func TestExampleMapsAreValid(t *testing.T) {
	t.Parallel()
	maps, err := filepath.Glob(filepath.Join(repo(t), "examples", "*", "maps", "*.csv"))
	if err != nil || len(maps) == 0 {
		t.Fatalf("no example maps: %v", err)
	}
	for _, p := range maps {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tiles.ParseMap(string(data)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
