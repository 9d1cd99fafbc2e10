package clustertest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A node without the CNI plugins reports Ready and runs no Pod: the
// cluster's script checks them before it starts anything and says which
// package is missing and where it looked, instead of a node that never
// starts a Pod.
func TestTheClusterScriptSaysWhatTheNodeLacks(t *testing.T) {
	t.Parallel()
	hidden := t.TempDir() // no plugin in it
	cmd := exec.Command("bash", script(), "tools")
	cmd.Env = append(os.Environ(), "ARENA_NO_INSTALL=1", "ARENA_CNI_BIN="+hidden)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the plugins hidden: %v, want exit 1\n%s", err, out)
	}
	want := "missing: containernetworking-plugins (the bridge, host-local and loopback plugins, not all in " + hidden + ")"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "install them (Debian's package names) and start again") {
		t.Errorf("the plugins hidden, it said:\n%s\nwant %q", out, want)
	}
}
