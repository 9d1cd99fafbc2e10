// Package enginetest gives a test a second, fully separate Docker engine on
// this machine, in a network namespace of its own whose link to the host the
// test can cut and heal: for tests in which two workers each drive their own
// engine and one of them loses its network for a while.
//
// It drives scripts/second-engine.sh, which keeps everything of the engine
// under a directory of its own (socket, data, exec root, its own containerd)
// and in a namespace, veth pair and bridge named after it. The package must
// never touch the host engine's containers, images or networks, the host's
// docker0 or its iptables: it only reads from the host engine (to copy images
// over), and Stop removes only what the script created for this engine.
//
// Starting an engine needs root. Without root the test is skipped, unless
// Docker tests are required (ARENA_REQUIRE_DOCKER=1 or CI=true): then, as on
// any failure, it fails with the script's output.
package enginetest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Engine is a running second engine.
type Engine struct {
	Dir      string // its directory: socket, data, logs
	Host     string // the DOCKER_HOST value that reaches it (unix://Dir/docker.sock)
	Netns    string // the network namespace it and its containers run in
	HostIP   string // the host's end of the link, reachable from the namespace
	NSIP     string // the namespace's end, reachable from the host
	HostVeth string // the host-side interface of the link

	script string
	mu     sync.Mutex
}

// Required reports whether a test must fail rather than skip when it cannot
// start an engine.
func Required() bool {
	return os.Getenv("ARENA_REQUIRE_DOCKER") == "1" || os.Getenv("CI") == "true"
}

// Start starts a second engine in a new directory under /tmp (unix socket
// paths must stay under 108 bytes, which a t.TempDir path may exceed) and
// stops it, and removes the directory, when the test ends.
func Start(t testing.TB) *Engine {
	t.Helper()
	return start(t)
}

// GVisor is the runtime name StartGVisor registers gVisor's runsc under.
const GVisor = "runsc"

// StartGVisor starts a second engine as Start does, with gVisor's runsc
// (built by scripts/runsc.sh from the pinned version, or found in its
// cache) registered as the runtime GVisor beside runc.
func StartGVisor(t testing.TB) *Engine {
	t.Helper()
	needRoot(t)
	runsc, err := tool("runsc.sh")
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	t0 := time.Now()
	cmd := exec.Command(runsc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("enginetest: %s: %v\n%s", runsc, err, stderr.String())
	}
	path := strings.TrimSpace(stdout.String())
	t.Logf("enginetest: runsc at %s (%v)", path, time.Since(t0).Round(time.Millisecond))
	return start(t, GVisor+"="+path)
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if Required() {
			t.Fatal("enginetest: a second Docker engine needs root (network namespaces, dockerd), and Docker tests are required here")
		}
		t.Skip("enginetest: a second Docker engine needs root (network namespaces, dockerd); run the test as root")
	}
}

// start starts the engine with the runtimes NAME=PATH registered.
func start(t testing.TB, runtimes ...string) *Engine {
	t.Helper()
	needRoot(t)
	script, err := Script()
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	dir, err := os.MkdirTemp("/tmp", "e2-")
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	e := &Engine{Dir: dir, script: script}
	t.Cleanup(func() { e.cleanup(t) })
	t0 := time.Now()
	out, err := e.run(append([]string{"start", dir}, runtimes...)...)
	if err != nil {
		t.Fatalf("enginetest: start: %v", err)
	}
	vars := parseEnv(out)
	e.Host, e.Netns, e.HostIP, e.NSIP, e.HostVeth = vars["DOCKER_HOST"], vars["NETNS"], vars["HOST_IP"], vars["NS_IP"], vars["HOST_VETH"]
	if e.Host == "" || e.Netns == "" || e.HostIP == "" || e.NSIP == "" || e.HostVeth == "" {
		t.Fatalf("enginetest: start printed no complete environment:\n%s", out)
	}
	t.Logf("enginetest: engine %s started in %v (namespace %s, host %s, namespace side %s)", e.Host, time.Since(t0).Round(time.Millisecond), e.Netns, e.HostIP, e.NSIP)
	return e
}

// Load copies images from the host engine to this one; an image the engine
// already has is skipped.
func (e *Engine) Load(t testing.TB, images ...string) {
	t.Helper()
	t0 := time.Now()
	if _, err := e.run(append([]string{"load", e.Dir}, images...)...); err != nil {
		t.Fatalf("enginetest: load: %v", err)
	}
	t.Logf("enginetest: loaded %s in %v", strings.Join(images, " "), time.Since(t0).Round(time.Millisecond))
}

// Cut drops every packet between the host and the engine's namespace, both
// ways, silently: established connections stall and new ones hang, until Heal.
func (e *Engine) Cut(t testing.TB) {
	t.Helper()
	if _, err := e.run("cut", e.Dir); err != nil {
		t.Fatalf("enginetest: cut: %v", err)
	}
}

// Heal restores the link Cut cut.
func (e *Engine) Heal(t testing.TB) {
	t.Helper()
	if _, err := e.run("heal", e.Dir); err != nil {
		t.Fatalf("enginetest: heal: %v", err)
	}
}

// Stop stops the engine and removes its network; the test's cleanup stops it
// again (which does nothing) and removes its directory.
func (e *Engine) Stop(t testing.TB) {
	t.Helper()
	t0 := time.Now()
	if _, err := e.run("stop", e.Dir); err != nil {
		t.Fatalf("enginetest: stop: %v", err)
	}
	t.Logf("enginetest: engine %s stopped in %v", e.Host, time.Since(t0).Round(time.Millisecond))
}

// Command prepares name with args to run inside the engine's network
// namespace, with DOCKER_HOST set to the engine: a worker started this way
// loses its network when the test cuts the link.
func (e *Engine) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", e.Netns, name}, args...)...)
	cmd.Env = e.Env()
	return cmd
}

// Env is the test process's environment with DOCKER_HOST set to the engine
// (and DOCKER_CONTEXT, which would override it, left out).
func (e *Engine) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DOCKER_HOST=") || strings.HasPrefix(kv, "DOCKER_CONTEXT=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DOCKER_HOST="+e.Host)
}

// Containers returns the ids of every container on the engine, running or
// not.
func (e *Engine) Containers(t testing.TB) []string {
	t.Helper()
	cmd := exec.Command("docker", "ps", "-aq", "--no-trunc")
	cmd.Env = e.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("enginetest: docker ps on %s: %v\n%s", e.Host, err, stderr.String())
	}
	return strings.Fields(string(out))
}

// cleanup stops the engine (again, after an explicit Stop) and removes its
// directory, unless something is still mounted under it: removing through a
// mount could reach files outside it.
func (e *Engine) cleanup(t testing.TB) {
	if _, err := e.run("stop", e.Dir); err != nil {
		t.Errorf("enginetest: stop at cleanup: %v (directory %s kept)", err, e.Dir)
		return
	}
	if m := MountsUnder(e.Dir); len(m) > 0 {
		t.Errorf("enginetest: still mounted under %s: %v (directory kept)", e.Dir, m)
		return
	}
	if err := os.RemoveAll(e.Dir); err != nil {
		t.Errorf("enginetest: %v", err)
	}
}

// run runs the script and returns its standard output; an error carries both
// outputs.
func (e *Engine) run(args ...string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cmd := exec.Command(e.script, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v\n--- stdout\n%s--- stderr\n%s", filepath.Base(e.script), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

func parseEnv(out string) map[string]string {
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			vars[k] = v
		}
	}
	return vars
}

// Script returns the path of scripts/second-engine.sh, found by walking up
// from the working directory to the module's go.mod.
func Script() (string, error) { return tool("second-engine.sh") }

// tool returns the path of scripts/NAME, found by walking up from the
// working directory to the module's go.mod.
func tool(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "scripts", name)
			if _, err := os.Stat(p); err != nil {
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory, so no scripts/" + name)
		}
		dir = parent
	}
}

// MountsUnder returns the mount points at or under dir, as this process's
// mount table lists them.
func MountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var mounts []string
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		m := unescapeMount(f[4])
		if m == dir || strings.HasPrefix(m, dir+"/") {
			mounts = append(mounts, m)
		}
	}
	return mounts
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
