// Package dockertest gives tests the real Docker engine and a runtime image built
// from the agent source under test, or skips them with a message saying how to
// enable them. Under CI (CI=true) or ARENA_REQUIRE_DOCKER=1 a missing engine or
// base image fails the test instead: Docker-backed tests must run there.
package dockertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/arenabots/arena/images"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/sandbox/agent"
	"github.com/arenabots/arena/sandbox/docker"
)

// Image is the start of the tag tests build their runtime image under. The tag
// ends with the agent's protocol and the hash of its binary, so test runs of
// different sources on one engine (two checkouts, a branch and main) each get
// their own image instead of rebuilding one tag under each other's feet.
const Image = "arena-runtime:test"

// Required reports whether Docker tests must run rather than skip.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("ARENA_REQUIRE_DOCKER") == "1"
}

// Tool is the path of the first of names found on PATH (or in Debian's
// /usr/games): a program a test drives, such as chromium or pgn-extract.
// Missing, it fails the test where the tests must all run (Required) and
// skips it elsewhere; what says what the tool is needed for and package is
// the Debian package scripts/test.sh installs it from.
func Tool(tb testing.TB, what, pkg string, names ...string) string {
	tb.Helper()
	for _, name := range names {
		for _, p := range []string{name, filepath.Join("/usr/games", name)} {
			if path, err := exec.LookPath(p); err == nil {
				return path
			}
		}
	}
	if Required() {
		tb.Fatalf("no %s: %s must be tested with it here (scripts/test.sh installs Debian's %s)", names[0], what, pkg)
	}
	tb.Skipf("no %s; install Debian's %s to test %s", names[0], pkg, what)
	return ""
}

func unavailable(tb testing.TB, format string, a ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, a...)
	if Required() {
		tb.Fatalf("docker test cannot run: %s", msg)
	}
	tb.Skipf("docker test skipped: %s (run scripts/test.sh, which starts an engine and builds the test base)", msg)
}

var (
	once    sync.Once
	cli     *client.Client
	tag     string
	setupEr error
)

// Engine returns a client for the engine, and ensures the test runtime image is
// built from the current agent source on the offline test base.
func Engine(tb testing.TB) (*client.Client, string) {
	tb.Helper()
	once.Do(func() { cli, tag, setupEr = setup() })
	if setupEr != nil {
		unavailable(tb, "%v", setupEr)
	}
	return cli, tag
}

// Base is the base image the test runtime image is built on: the test
// base of this checkout's recipe (its tag follows the recipe, so a changed
// package list is never tested on an older image), or ARENA_TEST_BASE.
func Base() string {
	if b := os.Getenv("ARENA_TEST_BASE"); b != "" {
		return b
	}
	return images.TestbaseTag()
}

func setup() (*client.Client, string, error) {
	c, err := docker.Connect(docker.Conn{})
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := docker.Ping(ctx, c); err != nil {
		return nil, "", err
	}
	base := Base()
	if _, err := c.ImageInspect(ctx, base); err != nil {
		return nil, "", fmt.Errorf("base image %s is missing (bash images/testbase/build.sh or arena image testbase builds it): %v", base, err)
	}
	agentBin, err := gobuild.Static("./cmd/arena-agent")
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(agentBin)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	image := fmt.Sprintf("%s-v%d-%s", Image, agent.Version, hex.EncodeToString(sum[:6]))
	// Test packages run in parallel; one builds, the others wait and find it done.
	unlock, err := lockFile(filepath.Join(os.TempDir(), "arena-test-image.lock"))
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	if _, err := images.BuildRuntime(ctx, c, images.RuntimeOptions{Tag: image, Base: base, Agent: agentBin}); err != nil {
		return nil, "", err
	}
	return c, image, nil
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// Labels returns a label unique to the test, to find what it left behind.
func Labels(tb testing.TB) map[string]string {
	return map[string]string{"org.arenabots.arena.test": fmt.Sprintf("%s-%d", tb.Name(), time.Now().UnixNano())}
}

// NoLeftovers fails the test if any container carries the test's label.
func NoLeftovers(tb testing.TB, c *client.Client, labels map[string]string) {
	tb.Helper()
	for k, v := range labels {
		n, err := docker.Count(context.Background(), c, k+"="+v)
		if err != nil {
			tb.Fatalf("count containers: %v", err)
		}
		if n != 0 {
			tb.Errorf("%d containers labelled %s=%s were left behind", n, k, v)
		}
	}
}
