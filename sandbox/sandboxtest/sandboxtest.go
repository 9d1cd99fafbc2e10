// Package sandboxtest is the conformance suite every sandbox backend must pass:
// a corpus of hostile bots, each with the exact facts its turn must report, and
// proof that nothing of one game reaches the next when a box is reused.
package sandboxtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox"
)

// Backend is what the suite needs from a backend under test. What the suite
// holds the backend to is what Raw declares (sandbox.Capabilities), read once
// a box was opened: an Isolated backend gets the fixtures that need
// containment, a Reusable one must hand the next game the same box reset,
// and one whose OOMTakesTheBox may report every turn after an out-of-memory
// kill out of memory too.
type Backend struct {
	Open func(t *testing.T, p sandbox.Program, l sandbox.Limits) sandbox.Box
	// Raw is the backend itself: its Capabilities say what the suite checks,
	// and the cases that prove nothing of a game reaches the next run its
	// boxes through a sandbox.Pool over it.
	Raw sandbox.Backend
	// Labels, when set, gives the labels of the boxes those cases open, and
	// Leftovers, when set, checks that nothing with them is left once the pool
	// is closed.
	Labels    func(t *testing.T) map[string]string
	Leftovers func(t *testing.T, labels map[string]string)
}

// hostAddresses are this host's own IPv4 addresses, on a port nothing
// listens on: a box that reaches one of them is refused, not blocked.
func hostAddresses() []string {
	var out []string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
			out = append(out, net.JoinHostPort(ip.IP.String(), "1"))
		}
	}
	return out
}

// Hostile returns the fixture bot as a Program.
func Hostile(t testing.TB) sandbox.Program {
	t.Helper()
	bin := gobuild.MustStatic(t, "./internal/testbots/hostile")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.Program{Name: "hostile", Entry: "hostile", Files: []sandbox.File{{Name: "hostile", Data: data, Mode: 0o755}}}
}

// Limits for the suite: short turns, small directories.
func Limits() sandbox.Limits {
	l := sandbox.DefaultLimits()
	l.TurnTimeout = 2 * time.Second
	l.Memory = 256 * sandbox.MiB
	l.Pids = 64
	l.ScratchBytes = 64 * sandbox.MiB
	l.GameDirBytes = 64 * sandbox.MiB
	l.OutputTail = 1024
	return l
}

// turn runs one turn in mode.
func turn(t *testing.T, bx sandbox.Box, mode string, timeout time.Duration) sandbox.Report {
	t.Helper()
	rep, err := bx.Run(context.Background(), sandbox.Turn{
		Remove:     []string{"move.json"},
		Put:        []sandbox.File{{Name: "state.json", Data: []byte(mode)}},
		Args:       []string{sandbox.GameDirToken + "/state.json"},
		Collect:    "move.json",
		CollectMax: 64 * 1024,
		HashMax:    10*sandbox.MiB + 1,
		Timeout:    timeout,
	})
	if err != nil {
		t.Fatalf("turn %q: sandbox fault: %v", mode, err)
	}
	return rep
}

func answer(r sandbox.Report) string { return string(r.Answer.Data) }

func entry(r sandbox.Report, name string) (sandbox.Entry, bool) {
	for _, e := range r.GameDir {
		if e.Name == name {
			return e, true
		}
	}
	return sandbox.Entry{}, false
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Run runs the whole suite against b.
func Run(t *testing.T, b Backend) {
	if b.Raw == nil {
		t.Fatal("the suite needs the raw backend (Backend.Raw): its capabilities, and a pool over it")
	}
	prog := Hostile(t)
	open := func(t *testing.T, l sandbox.Limits) sandbox.Box { return b.Open(t, prog, l) }

	oneTurn(t, open)
	outputAndFiles(t, open)
	limitEdge(t, open)

	t.Run("sessions", func(t *testing.T) { sessions(t, open) })

	t.Run("nothing of a game reaches the next", func(t *testing.T) { nextGame(t, b, prog) })

	t.Run("a game's boxes are admitted together", func(t *testing.T) { admitted(t, b, prog) })

	if b.Labels != nil && b.Leftovers != nil {
		t.Run("an open cancelled at any moment leaves nothing behind", func(t *testing.T) { cancelledOpens(t, b, prog) })
	}

	if !b.Raw.Capabilities().Isolated {
		return
	}

	contained(t, b, open)
}
