package validate

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// A Python bot that an uncaught exception ends exits 1, which the Code Clash
// rules count as rejecting the state: the verdict stays, and the report says
// the bot crashed, quoting the exception, and how to fix it.
func TestValidateSaysAnUncaughtExceptionIsACrash(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	bot := entry{Name: "bot.py", Mode: 0o755, Data: []byte("#!/usr/bin/env python3\nimport json, sys\n\n" +
		"def choose(state):\n    raise RuntimeError(\"boom\")\n\nchoose(json.load(open(sys.argv[1])))\n")}
	zip := zipOf(t, t.TempDir(), "crashes.zip", bot, readme)
	rep, err := Validate(context.Background(), zip, Options{Game: codeclash.Game{}, Intake: defaultIntake(),
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got *Check
	for i, ch := range rep.Checks {
		if ch.Name == "answers as white" {
			got = &rep.Checks[i]
		}
	}
	if rep.Pass || got == nil || got.Status != Fail || got.Evidence == nil {
		t.Fatalf("no failing answers check: %+v", rep.Checks)
	}
	if got.Evidence.Verdict != "bot-rejected-state" || got.Evidence.ExitCode != 1 {
		t.Fatalf("the evidence changed: %+v", got.Evidence)
	}
	for _, want := range []string{`the bot crashed with an uncaught Python exception (RuntimeError: boom)`, `the rules count exit 1 as "rejected the state"`} {
		if !strings.Contains(got.Detail, want) {
			t.Errorf("detail %q does not say %q", got.Detail, want)
		}
	}
	if !strings.Contains(got.Fix, "catch errors and exit 3 (bot error)") || strings.Contains(got.Fix, "read every") {
		t.Errorf("fix %q", got.Fix)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "uncaught Python exception") || !strings.Contains(text.String(), "Traceback (most recent call last)") {
		t.Errorf("report:\n%s", text.String())
	}
}
