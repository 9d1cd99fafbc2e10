// Package gobuild builds Go programs of this module for tests: static ones
// for a box (the agent, the random bot, the fixture bots) and, for the
// host, arena itself under the race detector when the tests run under it.
// Each program is built once per test process. It must never build into
// the repository.
package gobuild

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
	dir   string
)

// ModuleRoot finds the directory holding go.mod above the working directory.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("go.mod not found above " + wd)
		}
	}
}

// companions are the programs built beside a program, which it finds
// beside itself: arena's built-in random bot (validate.Opponent).
var companions = map[string][]string{"./cmd/arena": {"./cmd/arena-random"}}

// Static builds the package at pkg (a path relative to the module root, such as
// "./cmd/arena-agent") as a static linux/amd64 executable and returns its path.
// Its companions are built beside it.
func Static(pkg string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	for _, c := range companions[pkg] {
		if _, err := build(c, filepath.Base(c), ""); err != nil {
			return "", err
		}
	}
	return build(pkg, filepath.Base(pkg), "")
}

// Tagged builds pkg as Static does, with the build tags (comma-separated),
// into an executable called name: arena's team build is
// Tagged("./cmd/arena", "arena-team", "team").
func Tagged(pkg, name, tags string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	return build(pkg, name, tags)
}

// Host builds pkg, a program a test runs on the host (never in a box), into
// an executable called name beside the programs Static builds (its
// companions among them, built first): under the race detector when the
// test itself runs under it (go test -race), so that a race in the program
// fails the test as one in the test would. A race build links with cgo, as
// the race detector needs; its flags are ARENA_RACE_FLAGS when set
// (scripts/test.sh sets the ones it tests with, so that the build reuses
// what the tests compiled), else -race.
func Host(pkg, name string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	for _, c := range companions[pkg] {
		if _, err := build(c, filepath.Base(c), ""); err != nil {
			return "", err
		}
	}
	if !raceEnabled {
		return build(pkg, name, "")
	}
	key := pkg + " " + name + " race"
	if p, ok := built[key]; ok {
		return p, nil
	}
	flags := strings.Fields(os.Getenv("ARENA_RACE_FLAGS"))
	if len(flags) == 0 {
		flags = []string{"-race"}
	}
	out, err := goBuild(pkg, name, append(flags, "-trimpath"), "CGO_ENABLED=1")
	if err != nil {
		return "", err
	}
	built[key] = out
	return out, nil
}

// build is Static without the companions, mu held.
func build(pkg, name, tags string) (string, error) {
	key := pkg + " " + name + " " + tags
	if p, ok := built[key]; ok {
		return p, nil
	}
	out, err := goBuild(pkg, name, []string{"-trimpath", "-ldflags=-s -w", "-tags=" + tags}, "CGO_ENABLED=0")
	if err != nil {
		return "", err
	}
	built[key] = out
	return out, nil
}

// goBuild builds pkg with flags into the executable name in the shared
// directory, mu held.
func goBuild(pkg, name string, flags []string, cgo string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "arena-gobuild-"); err != nil {
			return "", err
		}
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), cgo, "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-buildvcs=false")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out, nil
}

// MustStatic is Static for TestMain-less callers that have a testing.TB.
func MustStatic(tb interface {
	Helper()
	Fatalf(string, ...any)
}, pkg string) string {
	tb.Helper()
	p, err := Static(pkg)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return p
}
