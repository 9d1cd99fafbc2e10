package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules/codeclash"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/local"
)

// statuses maps each check of a report to its status.
func statuses(rep *Report) map[string]Check {
	out := map[string]Check{}
	for _, c := range rep.Checks {
		out[c.Name] = c
	}
	return out
}

// A submission that fails a static check is still run: the answers and the
// full matches are in its report, and it fails all the same.
func TestBehaviourIsCheckedAfterAStaticFailure(t *testing.T) {
	t.Parallel()
	p := zipOf(t, t.TempDir(), "noreadme.zip", fixture(t, "legal"), source)
	rep, err := Validate(context.Background(), p, Options{Game: codeclash.Game{}, Intake: defaultIntake(),
		Backend: &local.Backend{Dir: t.TempDir()}, Limits: sandbox.DefaultLimits(), Opponent: opponent(t), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := statuses(rep)
	if got["readme"].Status != Fail || rep.Pass {
		t.Fatalf("want a failing readme check and a failed submission: %+v", rep.Checks)
	}
	for _, name := range []string{"answers as white", "answers as black", "match as white", "match as black"} {
		if got[name].Status != Pass {
			t.Errorf("check %q: %+v, want it run and passed", name, got[name])
		}
	}
	if rep.Usage == nil || rep.Usage.Turns < 16 {
		t.Errorf("no usage of the turns played: %+v", rep.Usage)
	}
}

// A check that cannot run is in the report as skipped, with the reason.
func TestChecksThatCannotRunAreReportedSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sandboxed := Options{Game: codeclash.Game{}, Intake: defaultIntake(), Backend: &local.Backend{Dir: t.TempDir()},
		Limits: sandbox.DefaultLimits(), Seed: 1}
	cases := []struct {
		name, zip string
		o         Options
		check     string
		reason    string
	}{
		{"no opponent", zipOf(t, dir, "alone.zip", fixture(t, "legal"), source, readme), sandboxed, "match as black", "no built-in random bot"},
		{"no executable", zipOf(t, dir, "none.zip", source, readme), sandboxed, "behaviour", "see the executable check"},
		{"no sandbox", zipOf(t, dir, "static.zip", fixture(t, "legal"), source, readme), Options{Game: codeclash.Game{}, Intake: defaultIntake()}, "behaviour", "static checks only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Validate(context.Background(), c.zip, c.o)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := statuses(rep)[c.check]
			if !ok || got.Status != Skip || !strings.Contains(got.Detail, c.reason) {
				t.Fatalf("check %q: %+v, want skipped saying %q; all: %+v", c.check, got, c.reason, rep.Checks)
			}
		})
	}
}
