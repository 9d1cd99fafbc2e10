package event

import (
	"os/exec"
	"strings"
	"testing"
)

// The event's storage plays nothing: neither it nor the tournament store
// it reads imports a package that runs a bot, builds one, replays or
// validates a game, or talks to a worker, so that a newcomer may change
// how games are played without touching how they are kept.
func TestStorageImportsNothingThatPlays(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".", "../tournament").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps lists %d packages: %.300s", len(deps), out)
	}
	const arena = "github.com/arenabots/arena/"
	plays := []string{"harness/match", "harness/build", "harness/replay", "harness/validate", "harness/runner",
		"harness/distrib", "harness/services", "harness/duel", "sandbox/"}
	for _, p := range deps {
		for _, play := range plays {
			if strings.HasPrefix(p, arena+play) {
				t.Errorf("storage imports %s", p)
			}
		}
	}
}
