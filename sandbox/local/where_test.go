package local

import (
	"context"
	"strings"
	"testing"

	"github.com/arenabots/arena/sandbox"
)

// The organizer's page says the local sandbox isolates nothing, and the
// local sandbox refuses another kind's settings rather than ignore them.
func TestTheBackendSaysWhereItPlaysAndTakesNoSettings(t *testing.T) {
	t.Parallel()
	if got, want := New().Where(), "on this machine, as plain processes (the local sandbox: no isolation)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	_, _, err := sandbox.Open(context.Background(), sandbox.Config{Kind: "local", Backend: struct{ Host string }{"x"}, Notify: func(string) {}})
	if err == nil || !strings.Contains(err.Error(), "takes no backend settings") {
		t.Errorf("local with another kind's settings: %v", err)
	}
}
