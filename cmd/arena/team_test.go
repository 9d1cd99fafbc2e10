package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The arena a team downloads (-tags team) carries neither the event server
// nor the cluster's client: none of the organizer's packages, no k8s.io.
func TestTheTeamsArenaCarriesNoServerAndNoCluster(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-tags", "team", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 || !contains(deps, "github.com/arenabots/arena/harness/validate") {
		t.Fatalf("go list -deps lists %d packages, without the validator: %.300s", len(deps), out)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/") ||
			strings.HasPrefix(p, "github.com/arenabots/arena/harness/server") ||
			strings.HasPrefix(p, "github.com/arenabots/arena/harness/web") ||
			strings.HasPrefix(p, "github.com/arenabots/arena/harness/services") ||
			p == "github.com/arenabots/arena/sandbox/kubernetes" {
			t.Errorf("the team's arena carries %s", p)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
