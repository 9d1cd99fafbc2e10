package event

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/internal/golden"
)

// What the API serves of the event is camelCase JSON, every field tagged:
// the board (its rows, rounds and upcoming pairings), games, disputes,
// teams, workers and submissions.
func TestTheAPIsKeysAreCamelCase(t *testing.T) {
	t.Parallel()
	for _, v := range []any{Board{}, Game{}, Dispute{}, Team{}, EventWorker{}, api.Submission{}} {
		if bad := golden.BadKeys(reflect.TypeOf(v)); len(bad) > 0 {
			t.Errorf("%T: %s", v, strings.Join(bad, "; "))
		}
	}
}
