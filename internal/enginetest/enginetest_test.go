package enginetest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testbase = "arena-testbase:trixie"

// TestSecondEngine starts a second engine, copies the test base onto it and
// runs a container there, cuts and heals its link to the host, and checks
// that stopping it leaves nothing behind and that the host engine never saw
// any of it.
func TestSecondEngine(t *testing.T) {
	hostBefore, hostErr := hostContainers()
	e := Start(t)
	if hostErr != nil {
		t.Fatalf("host engine: %v", hostErr)
	}
	if _, err := net.InterfaceByName("arena-e2br"); err == nil {
		t.Error("the second engine's bridge arena-e2br is on the host; it belongs in the namespace only")
	}
	hostInfo, err := output(exec.Command("docker", "info", "--format", "{{.ID}} {{.DockerRootDir}}"))
	if err != nil {
		t.Fatalf("host engine: %v", err)
	}
	info, err := output(e.Command("docker", "info", "--format", "{{.ID}} {{.DockerRootDir}}"))
	if err != nil {
		t.Fatalf("second engine: %v", err)
	}
	if id, root, _ := strings.Cut(info, " "); root != filepath.Join(e.Dir, "data") || id == strings.Fields(hostInfo)[0] {
		t.Errorf("second engine: id and data root %q, want an id of its own (the host's is %q) and %s", info, hostInfo, filepath.Join(e.Dir, "data"))
	}
	label := "org.arenabots.arena.enginetest=" + filepath.Base(e.Dir)
	var ran []string // ids of the containers run on the second engine

	t.Run("image", func(t *testing.T) {
		hostID, err := output(exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", testbase))
		if err != nil {
			if Required() {
				t.Fatalf("%s is not on the host engine: %v", testbase, err)
			}
			t.Skipf("%s is not on the host engine (build it with images/testbase/build.sh): %v", testbase, err)
		}
		e.Load(t, testbase)
		id, err := output(e.Command("docker", "image", "inspect", "--format", "{{.Id}}", testbase))
		if err != nil {
			t.Fatalf("second engine: %v", err)
		}
		if id != hostID {
			t.Errorf("%s is %s on the second engine, %s on the host", testbase, id, hostID)
		}
		t0 := time.Now()
		e.Load(t, testbase)
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("loading %s a second time took %v: it should have been skipped", testbase, d)
		}

		cidfile := filepath.Join(e.Dir, "probe.cid")
		if out, err := e.Command("docker", "run", "--rm", "--network", "none", "--label", label, "--cidfile", cidfile, testbase, "true").CombinedOutput(); err != nil {
			t.Fatalf("docker run on the second engine: %v\n%s", err, out)
		}
		cid, err := os.ReadFile(cidfile)
		if err != nil || len(cid) == 0 {
			t.Fatalf("no container id from docker run: %v", err)
		}
		ran = append(ran, string(cid))
		if c := e.Containers(t); len(c) != 0 {
			t.Errorf("containers left on the second engine after docker run --rm: %v", c)
		}
	})

	t.Run("network", func(t *testing.T) { testCutAndHeal(t, e) })

	// The host engine never saw the second engine's containers. Other
	// changes to its list are reported but do not fail the test: other tests
	// may run containers on the host engine at the same time.
	hostAfter, err := hostContainers()
	if err != nil {
		t.Fatalf("host engine: %v", err)
	}
	if labeled, err := output(exec.Command("docker", "ps", "-aq", "--filter", "label="+label)); err != nil || labeled != "" {
		t.Errorf("the host engine lists containers labelled %s: %q (%v)", label, labeled, err)
	}
	for _, id := range ran {
		if slices.Contains(hostAfter, id) || exec.Command("docker", "container", "inspect", id).Run() == nil {
			t.Errorf("container %s, run on the second engine, is on the host engine", id)
		}
	}
	if added, removed := diff(hostBefore, hostAfter); len(added)+len(removed) > 0 {
		t.Logf("the host engine's container list changed meanwhile (none of it the second engine's): added %v, removed %v", added, removed)
	}

	dockerd, _ := os.ReadFile(filepath.Join(e.Dir, "dockerd.pid"))
	containerd, _ := os.ReadFile(filepath.Join(e.Dir, "containerd", "containerd.pid"))
	e.Stop(t)
	if _, err := os.Stat("/run/netns/" + e.Netns); err == nil {
		t.Errorf("network namespace %s is left", e.Netns)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), e.Netns) {
		t.Errorf("ip netns list still lists %s:\n%s", e.Netns, out)
	}
	if _, err := net.InterfaceByName(e.HostVeth); err == nil {
		t.Errorf("interface %s is left", e.HostVeth)
	}
	for what, pid := range map[string][]byte{"dockerd": dockerd, "containerd": containerd} {
		if running(strings.TrimSpace(string(pid))) {
			t.Errorf("%s (pid %s) still runs", what, strings.TrimSpace(string(pid)))
		}
	}
	if p := processesNaming(e.Dir + "/"); len(p) > 0 {
		t.Errorf("processes still name %s: %v", e.Dir, p)
	}
	if m := MountsUnder(e.Dir); len(m) > 0 {
		t.Errorf("still mounted under %s: %v", e.Dir, m)
	}
	// The test's cleanup stops the engine a second time.
}

// testCutAndHeal checks that the namespace reaches a listener on the host,
// that a cut makes new connections hang (not fail) both ways and stalls an
// established one both ways without resetting it, and that after the heal
// the stalled data arrives and new connections work again.
func testCutAndHeal(t *testing.T, e *Engine) {
	probe := listen(t, e.HostIP)
	go func() {
		for {
			c, err := probe.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	probeAddr := probe.Addr().(*net.TCPAddr)
	// connect reports whether a connection from the namespace to the probe
	// listener succeeds within 3 s; an immediate failure is an error.
	connect := func() (bool, error) {
		cmd := e.Command("timeout", "3", "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/%s/%d", probeAddr.IP, probeAddr.Port))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return true, nil
		case errors.As(err, &exit) && exit.ExitCode() == 124:
			return false, nil
		default:
			return false, fmt.Errorf("connect from %s: %v\n%s", e.Netns, err, out)
		}
	}
	// dialNS reports whether a connection from the host to an unused port in
	// the namespace is answered (refused) within 2 s, rather than hanging.
	dialNS := func() (bool, error) {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(e.NSIP, "1"), 2*time.Second)
		if err == nil {
			c.Close()
			return true, nil
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return true, nil
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return false, nil
		}
		return false, err
	}
	if ok, err := connect(); err != nil || !ok {
		t.Fatalf("before the cut, the namespace does not reach %v: %v", probeAddr, err)
	}
	if ok, err := dialNS(); err != nil || !ok {
		t.Fatalf("before the cut, the host does not reach %s: %v", e.NSIP, err)
	}

	// An established connection: a relay in the namespace sends what the
	// test writes to its stdin over the connection, and prints what comes
	// back from it.
	relayLn := listen(t, e.HostIP)
	relayAddr := relayLn.Addr().(*net.TCPAddr)
	relay := e.Command("bash", "-c", fmt.Sprintf(`exec 3<>/dev/tcp/%s/%d || exit 1
cat <&3 &
while IFS= read -r l; do printf '%%s\n' "$l" >&3; done`, relayAddr.IP, relayAddr.Port))
	relay.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	relayIn, err := relay.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	relayOut, err := relay.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	relay.Stderr = os.Stderr
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	relayLn.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	conn, err := relayLn.Accept()
	if err != nil {
		syscall.Kill(-relay.Process.Pid, syscall.SIGKILL)
		relay.Wait()
		t.Fatalf("the relay in the namespace did not connect: %v", err)
	}
	defer func() {
		conn.Close()
		relayIn.Close()
		done := make(chan error, 1)
		go func() { done <- relay.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-relay.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	atNS := lines(relayOut) // what the host sent, as the namespace got it
	atHost := lines(conn)   // what the namespace sent, as the host got it
	send := func(word string) {
		t.Helper()
		if _, err := io.WriteString(conn, word+"-from-host\n"); err != nil {
			t.Fatalf("host writes %s: %v", word, err)
		}
		if _, err := io.WriteString(relayIn, word+"-from-ns\n"); err != nil {
			t.Fatalf("namespace writes %s: %v", word, err)
		}
	}
	expect := func(word string, within time.Duration) {
		t.Helper()
		for _, c := range []struct {
			ch   <-chan string
			want string
		}{{atNS, word + "-from-host"}, {atHost, word + "-from-ns"}} {
			select {
			case got, ok := <-c.ch:
				if !ok || got != c.want {
					t.Fatalf("got %q (open %v), want %q", got, ok, c.want)
				}
			case <-time.After(within):
				t.Fatalf("%q did not arrive within %v", c.want, within)
			}
		}
	}
	send("before")
	expect("before", 5*time.Second)

	e.Cut(t)
	cutAt := time.Now()
	send("during")
	t0 := time.Now()
	if ok, err := connect(); err != nil || ok {
		t.Errorf("with the link cut, a connection from the namespace did not hang: connected %v, %v", ok, err)
	} else if d := time.Since(t0); d < 2*time.Second {
		t.Errorf("with the link cut, a connection from the namespace gave up after %v instead of hanging", d)
	}
	if ok, err := dialNS(); err != nil || ok {
		t.Errorf("with the link cut, a connection from the host did not hang: answered %v, %v", ok, err)
	}
	for _, ch := range []<-chan string{atNS, atHost} {
		select {
		case got, ok := <-ch:
			t.Fatalf("with the link cut, got %q (open %v): the connection should stall", got, ok)
		default:
		}
	}
	e.Heal(t)
	t.Logf("link cut for %v", time.Since(cutAt).Round(time.Millisecond))
	expect("during", 30*time.Second) // retransmitted, not lost: the connection survived
	send("after")
	expect("after", 5*time.Second)
	if ok, err := connect(); err != nil || !ok {
		t.Errorf("after the heal, the namespace does not reach %v: %v", probeAddr, err)
	}
	if ok, err := dialNS(); err != nil || !ok {
		t.Errorf("after the heal, the host does not reach %s: %v", e.NSIP, err)
	}
}

func listen(t *testing.T, ip string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// lines sends each line read from r, and closes the channel at EOF or error.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// hostContainers lists the host engine's containers.
func hostContainers() ([]string, error) {
	out, err := output(exec.Command("docker", "ps", "-aq", "--no-trunc"))
	return strings.Fields(out), err
}

func output(cmd *exec.Cmd) (string, error) {
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(string(exit.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func diff(before, after []string) (added, removed []string) {
	for _, id := range after {
		if !slices.Contains(before, id) {
			added = append(added, id)
		}
	}
	for _, id := range before {
		if !slices.Contains(after, id) {
			removed = append(removed, id)
		}
	}
	return added, removed
}

func running(pid string) bool {
	if _, err := strconv.Atoi(pid); err != nil {
		return false
	}
	_, err := os.Stat("/proc/" + pid)
	return err == nil
}

// processesNaming lists the processes whose command line contains s.
func processesNaming(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, d := range entries {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmd), s) {
			continue
		}
		found = append(found, d.Name()+" "+strings.ReplaceAll(strings.TrimSpace(string(cmd)), "\x00", " "))
	}
	return found
}
