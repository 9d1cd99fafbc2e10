package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/enginetest"
	"github.com/arenabots/arena/sandbox/docker"
)

// syncBuffer is an output several goroutines write and the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Two workers, each driving its own Docker engine (the second in a network
// namespace of its own), play a 6-bot round robin. The second worker's link
// is cut for a while after it takes a game: that game goes to the first
// worker, nothing is lost or counted twice, the late result is not counted
// again, and no container is left on either engine.
func TestTwoWorkersOnTwoEnginesSurviveACutLink(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a second Docker engine: not in -short")
	}
	cli, image := dockertest.Engine(t)
	e := enginetest.Start(t)
	e.Load(t, image)

	// The binary and the bots live on the host's file system, which the
	// namespace shares.
	arena, bots := arenaWithBots(t, "slow-20", "slow-30", "slow-40", "slow-50", "slow-60", "slow-70")
	dir := t.TempDir()
	out := filepath.Join(dir, "t")
	for _, w := range []string{"near", "far"} {
		if o, err := exec.Command(arena, "enroll", "--out", out, "--creds", filepath.Join(dir, w+".creds"), w).CombinedOutput(); err != nil {
			t.Fatalf("enroll %s: %v\n%s", w, err, o)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(e.HostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	env := append(os.Environ(), "ARENA_SIGNING_KEY=none")
	coord := exec.Command(arena, "tournament", "--out", out, "--listen", addr, "--ack-wait", "3s", "--games-per-pair", "1",
		"--sandbox", "docker", "--image", image, "--seed", "5", "--rule", "maxPlies=30", "--min-free", "0", bots)
	coord.Env = env
	var coordErr syncBuffer
	coord.Stderr = &coordErr
	stdout, err := coord.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := coord.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coord.Process.Kill() })
	var coordOut syncBuffer
	playing := make(chan int, 64) // games the far worker takes
	coordDone := make(chan error, 1)
	farTakes := regexp.MustCompile(`^game (\d+): far plays it`)
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stdout, &coordOut))
		for sc.Scan() {
			if m := farTakes.FindStringSubmatch(sc.Text()); m != nil {
				var g int
				fmt.Sscan(m[1], &g)
				select {
				case playing <- g:
				default:
				}
			}
		}
		coordDone <- coord.Wait()
	}()
	url := "tls://" + addr

	start := func(w string, cmd *exec.Cmd) (*exec.Cmd, *syncBuffer, chan error) {
		var o syncBuffer
		cmd.Stdout, cmd.Stderr = &o, &o
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, &o, done
	}
	workerArgs := func(w string) []string {
		return []string{"worker", "--creds", filepath.Join(dir, w+".creds"), "--join", url, "--sandbox", "docker", "--image", image, "--bench-runs", "10"}
	}
	// Both workers start at once: each plays some of the games, however
	// long a loaded host takes to check and measure either.
	farCmd := e.Command(arena, workerArgs("far")...)
	farCmd.Env = append(e.Env(), "ARENA_SIGNING_KEY=none")
	far, farOut, farDone := start("far", farCmd)
	nearCmd := exec.Command(arena, workerArgs("near")...)
	nearCmd.Env = env
	near, nearOut, nearDone := start("near", nearCmd)
	nextTake := func(what string) int {
		t.Helper()
		select {
		case g := <-playing:
			return g
		case err := <-coordDone:
			t.Fatalf("the tournament ended before the far worker %s (%v):\n%s\nfar:\n%s", what, err, coordOut.String(), farOut.String())
		case <-time.After(3 * time.Minute):
			t.Fatalf("the far worker never %s:\n%s\nfar:\n%s", what, coordOut.String(), farOut.String())
		}
		return 0
	}
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(nearOut.String(), "arena: worker near plays"); {
		if time.Now().After(deadline) {
			t.Fatalf("the near worker did not join:\n%s", nearOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// With both workers playing, the far worker's next game is cut off for
	// longer than the ack wait: it is handed to the near worker.
	for len(playing) > 0 {
		<-playing
	}
	held := nextTake("took a game after the near worker joined")
	// Cut off until the coordinator hands the held game to the near worker:
	// for longer than the ack wait, however long that takes here.
	e.Cut(t)
	handed := fmt.Sprintf("game %d: near plays it", held)
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(coordOut.String(), handed); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("game %d, held by the far worker whose link is cut, was not handed to the near worker:\n%s", held, coordOut.String())
		}
	}
	e.Heal(t)

	select {
	case err := <-coordDone:
		if err != nil {
			t.Fatalf("the coordinator: %v\n%s\n%s", err, coordOut.String(), coordErr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the tournament did not finish:\n%s\nnear:\n%s\nfar:\n%s", coordOut.String(), nearOut.String(), farOut.String())
	}
	// The workers stop when told the tournament is over; one that was still
	// cut off when it ended is stopped with Ctrl-C and hands its game back.
	for _, w := range []struct {
		name string
		cmd  *exec.Cmd
		out  *syncBuffer
		done chan error
	}{{"near", near, nearOut, nearDone}, {"far", far, farOut, farDone}} {
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("worker %s: %v\n%s", w.name, err, w.out.String())
			}
		case <-time.After(20 * time.Second):
			w.cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-w.done:
				if err != nil {
					t.Fatalf("worker %s after Ctrl-C: %v\n%s", w.name, err, w.out.String())
				}
			case <-time.After(time.Minute):
				t.Fatalf("worker %s does not stop on Ctrl-C:\n%s", w.name, w.out.String())
			}
		}
	}

	st, err := tournament.Load(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Summary.Total != 15 || st.Summary.Done != 15 {
		t.Fatalf("%d of %d games played:\n%s", st.Summary.Done, st.Summary.Total, coordOut.String())
	}
	games := 0
	for _, r := range st.Summary.Standings {
		games += r.Games
	}
	if games != 30 {
		t.Fatalf("the standings count %d bot-games, want 30 (15 games, each once)", games)
	}
	by := map[string]int{}
	for _, g := range st.Games {
		by[g.Worker]++
	}
	if by["near"] == 0 || by["far"] == 0 || by["near"]+by["far"] != 15 {
		t.Fatalf("games by worker: %v", by)
	}
	// The game the far worker held went to the near one (whichever result
	// came first counts; the other is not counted again).
	if !strings.Contains(coordOut.String(), fmt.Sprintf("game %d: near plays it", held)) {
		t.Fatalf("game %d, which the far worker held when its link was cut, was not handed to the near worker:\n%s", held, coordOut.String())
	}
	for _, w := range st.Workers {
		if len(w.Machine.Bench) == 0 || w.Machine.ImageID == "" {
			t.Fatalf("worker %s did not describe its machine: %+v", w.Name, w)
		}
	}
	t.Logf("games by worker: %v; the far worker held game %d when its link was cut", by, held)

	// Nothing left on either engine.
	if left := e.Containers(t); len(left) > 0 {
		t.Errorf("%d containers left on the second engine", len(left))
	}
	owner := fmt.Sprintf("/%d/", near.Process.Pid)
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelOwner))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if o := c.Labels[docker.LabelOwner]; strings.Contains(o, owner) {
			t.Errorf("a container of the near worker is left on the host engine: %s (%s)", c.ID, o)
		}
	}
}
