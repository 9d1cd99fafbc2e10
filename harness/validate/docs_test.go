package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
)

func checkNamed(rep *Report, name string) *Check {
	for i := range rep.Checks {
		if rep.Checks[i].Name == name {
			return &rep.Checks[i]
		}
	}
	return nil
}

// A single file where a README is required is told how to package it, with
// the ZIP's layout; a bot with nothing to build is never asked for build
// steps, one with something to build is.
func TestDocChecksSayHowToPackageAndAskForBuildStepsOnlyWhenThereIsABuild(t *testing.T) {
	t.Parallel()
	require := []string{rules.DocReadme}
	rep := &Report{}
	docChecks(rep, []sandbox.File{{Name: "bot.py", Data: []byte("print('e2e4')\n")}}, require, true, true)
	c := checkNamed(rep, "readme")
	if c == nil || c.Status != Fail || !strings.Contains(c.Fix, "upload a ZIP instead") || !strings.Contains(c.Fix, "zip bot.zip bot.py README.md") ||
		!strings.Contains(c.Fix, "no folder around them") || strings.Contains(c.Fix, "build") {
		t.Errorf("a single Python file without a README: %+v", c)
	}
	rep = &Report{}
	docChecks(rep, []sandbox.File{{Name: "bot.c", Data: []byte("int main(){}\n")}}, require, true, false)
	if c := checkNamed(rep, "readme"); c == nil || !strings.Contains(c.Fix, "zip bot.zip bot.c README.md") || !strings.Contains(c.Fix, "how to build it") {
		t.Errorf("a single C file without a README: %+v", c)
	}

	readme := sandbox.File{Name: "README.md", Data: []byte("The bot picks the move that captures the most valuable piece.\n")}
	for _, c := range []struct {
		nothingToBuild bool
		warned         bool
	}{{true, false}, {false, true}} {
		rep := &Report{}
		docChecks(rep, []sandbox.File{{Name: "bot.py"}, readme}, require, false, c.nothingToBuild)
		if got := checkNamed(rep, "readme: build") != nil; got != c.warned {
			t.Errorf("nothing to build %v: warned for build steps %v, want %v (%+v)", c.nothingToBuild, got, c.warned, rep.Checks)
		}
	}
}

// Validate tells a single script from a ZIP: the script's README failure
// says how to package it, and no build steps are asked of it.
func TestASingleScriptIsToldToUploadAZip(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "bot.py")
	if err := os.WriteFile(p, []byte("#!/usr/bin/env python3\nprint('{}')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake(), Require: []string{rules.DocReadme}})
	if err != nil {
		t.Fatal(err)
	}
	if c := checkNamed(rep, "readme"); c == nil || c.Status != Fail || !strings.Contains(c.Fix, "zip bot.zip bot.py README.md") || strings.Contains(c.Fix, "build") {
		t.Errorf("the readme check of a single script: %+v\nall: %+v", c, rep.Checks)
	}
}
