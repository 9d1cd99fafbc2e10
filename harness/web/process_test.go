package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// liveEvent is an event directory with teams A and B and the organizer's
// token, served by the real arena binary on the real engine.
type liveEvent struct {
	dir   string
	image string
	a, b  event.NewTeam
	admin string
	srv   *arenaServer
}

// newLiveEvent writes an event of toml (with extra teams named) and starts
// `arena serve` on it.
func newLiveEvent(t *testing.T, toml string, teams ...string) *liveEvent {
	t.Helper()
	return newLiveEventWith(t, toml, nil, teams...)
}

// newLiveEventWith is newLiveEvent that lets prepare set the store up (the
// teams made, in order) before the server starts.
func newLiveEventWith(t *testing.T, toml string, prepare func(*event.Store, []event.NewTeam), teams ...string) *liveEvent {
	t.Helper()
	_, image := dockertest.Engine(t)
	e := writeEvent(t, toml, prepare, teams...)
	e.image = image
	e.srv = startArena(t, e.dir, image)
	return e
}

// writeEvent writes the event directory of newLiveEventWith, not served.
func writeEvent(t *testing.T, toml string, prepare func(*event.Store, []event.NewTeam), teams ...string) *liveEvent {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, event.ConfigFile), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := event.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := &liveEvent{dir: dir}
	if teams == nil {
		teams = []string{"Alpha", "Beta"}
	}
	var made []event.NewTeam
	for i, name := range teams {
		nt, err := st.AddTeam(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, nt)
		switch i {
		case 0:
			e.a = nt
		case 1:
			e.b = nt
		}
	}
	if e.admin, err = st.NewAdminToken(ctx); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(st, made)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

// passedBots is a prepare of writeEvent: team i gets the example pkgs[i
// mod len(pkgs)], built static, as a submission that passed; made, when not
// nil, is set to the teams made.
func passedBots(t *testing.T, made *[]event.NewTeam, pkgs ...string) func(*event.Store, []event.NewTeam) {
	return func(st *event.Store, teams []event.NewTeam) {
		cfg, err := event.LoadConfig(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if made != nil {
			*made = teams
		}
		for i, team := range teams {
			data, err := os.ReadFile(gobuild.MustStatic(t, pkgs[i%len(pkgs)]))
			if err != nil {
				t.Fatal(err)
			}
			sub, err := st.AddSubmission(context.Background(), cfg, team.ID, "bot", bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetState(context.Background(), sub.ID, event.Passed, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// arenaServer is a running `arena serve`.
type arenaServer struct {
	cmd  *exec.Cmd
	URL  string
	mu   sync.Mutex
	logs strings.Builder
	done chan struct{}
}

var servingAt = regexp.MustCompile(`serving the event in .* at (https?://\S+)`)

// startArena runs the arena binary's `serve` on dir with the test image and
// waits until it listens; the test's end stops it (SIGTERM).
func startArena(t *testing.T, dir, image string) *arenaServer {
	t.Helper()
	return startServe(t, dir, "--image", image, "--validators", "2", "--build-cache", filepath.Join(t.TempDir(), "builds"))
}

// startServe is startArena with serve's options args.
func startServe(t *testing.T, dir string, args ...string) *arenaServer {
	t.Helper()
	return startServeWith(t, dir, nil, args...)
}

// startServeWith is startServe with arena's global options (those given
// before serve: --kube-config, --kube-namespace...).
func startServeWith(t *testing.T, dir string, global []string, args ...string) *arenaServer {
	t.Helper()
	arena := gobuild.MustStatic(t, "./cmd/arena")
	line := append(append([]string{"--log-level", "info"}, global...), "serve", "--event", dir, "--http", "127.0.0.1:0")
	cmd := exec.Command(arena, append(line, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &arenaServer{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := servingAt.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		cmd.Wait()
	}()
	select {
	case s.URL = <-addr:
	case <-s.done:
		t.Fatalf("arena serve ended before it listened:\n%s", s.Logs())
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("arena serve did not listen within 2 minutes:\n%s", s.Logs())
	}
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Logs is what the server wrote on stderr so far.
func (s *arenaServer) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Stop stops the server as Ctrl-C does and waits for it. A server that
// lost SQLite's lock on a database while it ran says so as it closes it:
// that fails the test whatever it was about.
func (s *arenaServer) Stop(t *testing.T) {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		<-s.done
		t.Errorf("arena serve did not stop within a minute of SIGTERM:\n%s", s.Logs())
	}
	if strings.Contains(s.Logs(), sqlitedb.ErrLockLost.Error()) {
		t.Errorf("arena serve lost SQLite's lock on a database while it ran:\n%s", s.Logs())
	}
}

// Kill kills the server with SIGKILL: no cleanup at all.
func (s *arenaServer) Kill() {
	s.cmd.Process.Kill()
	<-s.done
}
