package submission_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/submission/submissiontest"
	"github.com/arenabots/arena/sandbox"
)

// declaredKinds lists every ErrorKind constant declared in submission.go, so
// that a new kind without a test case fails here.
func declaredKinds(t *testing.T) []submission.ErrorKind {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "submission.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []submission.ErrorKind
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "ErrorKind" {
				continue
			}
			for _, val := range v.Values {
				lit, ok := val.(*ast.BasicLit)
				if !ok {
					t.Fatalf("an ErrorKind constant that is not a literal: %#v", val)
				}
				out = append(out, submission.ErrorKind(strings.Trim(lit.Value, `"`)))
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %d ErrorKind constants in submission.go: %v", len(out), out)
	}
	return out
}

func refusal(t *testing.T, err error) *submission.Error {
	t.Helper()
	var se *submission.Error
	if !errors.As(err, &se) {
		t.Fatalf("want a *submission.Error, got %T %v", err, err)
	}
	if se.Kind == "" {
		t.Fatalf("refusal %q has no kind", se)
	}
	return se
}

func TestEveryRefusalHasItsKind(t *testing.T) {
	lim := submissiontest.Limits()
	seen := map[submission.ErrorKind]bool{}
	for _, c := range submissiontest.Cases(t, t.TempDir()) {
		t.Run(c.Name, func(t *testing.T) {
			files, _, err := submission.ReadAny(c.Path, lim)
			if err == nil {
				t.Fatalf("accepted: %d files", len(files))
			}
			se := refusal(t, err)
			if se.Kind != c.Kind || se.Entry != c.Entry || !strings.Contains(se.Rule, c.Rule) {
				t.Fatalf("refusal %q (kind %q, entry %q), want kind %q, entry %q and %q", se, se.Kind, se.Entry, c.Kind, c.Entry, c.Rule)
			}
			if c.Zip != nil {
				// ReadZip on the bytes refuses alike.
				_, err := submission.ReadZip(c.Zip, lim)
				if se2 := refusal(t, err); se2.Kind != c.Kind || se2.Error() != se.Error() {
					t.Fatalf("ReadZip: %q (%q), ReadAny: %q (%q)", se2, se2.Kind, se, se.Kind)
				}
			}
			seen[c.Kind] = true
		})
	}

	// The refusals of Package and Extract, which do not read submissions.
	t.Run("a name the adapter needs", func(t *testing.T) {
		files := []sandbox.File{{Name: "bot.py", Data: []byte("x=1")}, {Name: "run.py", Data: []byte("mine")}}
		_, _, err := submission.Package(files, packager{})
		if se := refusal(t, err); se.Kind != submission.KindNameClash || se.Entry != "run.py" || !strings.Contains(se.Rule, "clashes") {
			t.Fatalf("refusal %q (%q)", se, se.Kind)
		}
		seen[submission.KindNameClash] = true
	})
	t.Run("a file that cannot be written out", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "bot"), []byte("there"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := submission.Extract([]sandbox.File{{Name: "bot", Data: submissiontest.ELF, Mode: 0o755}}, dir)
		if se := refusal(t, err); se.Kind != submission.KindExtract || se.Entry != "bot" || !strings.Contains(se.Rule, "cannot be extracted") {
			t.Fatalf("refusal %q (%q)", se, se.Kind)
		}
		err = submission.Extract([]sandbox.File{{Name: "../bot", Data: submissiontest.ELF}}, dir)
		if se := refusal(t, err); se.Kind != submission.KindPathEscape {
			t.Fatalf("refusal %q (%q)", se, se.Kind)
		}
		seen[submission.KindExtract] = true
	})
	t.Run("Load of a file over the limits", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "huge")
		if err := os.WriteFile(p, submissiontest.Noise(2<<20+1), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := submission.Load(p, submission.LoadOptions{Limits: lim})
		if se := refusal(t, err); se.Kind != submission.KindTooLarge || se.Entry != "huge" {
			t.Fatalf("refusal %q (%q)", se, se.Kind)
		}
	})

	for _, k := range declaredKinds(t) {
		if !seen[k] {
			t.Errorf("no case produces kind %q", k)
		}
	}
}

// packager is a game adapter that adds run.py.
type packager struct{}

func (packager) Package(map[string][]byte) (map[string][]byte, string, error) {
	return map[string][]byte{"run.py": []byte("#!/usr/bin/env python3\n")}, "run.py", nil
}
func (packager) Submission() string { return "one Python module" }
func (packager) Needs() []string    { return nil }
