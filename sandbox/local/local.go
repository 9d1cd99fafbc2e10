// Package local is the sandbox backend that runs bots as plain processes on this
// host. It is NOT a security boundary: a bot can read and write anything the
// arena user can, reach the network, and a setsid child can outlive its turn.
// It exists for bot authors without Docker and for fast tests.
//
// Within those limits it keeps the contract: a fresh process per turn in its own
// process group, an exact deadline, the group killed after every turn, bounded
// output tails, rlimits on core dumps, file size and open files, a private game
// directory and a scratch directory wiped between turns. Memory is measured but
// not enforced.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/proc"
)

// Warning is what a user of this backend must be told.
const Warning = "the local sandbox runs bots as plain processes with no isolation: use it only for bots you trust"

// Backend runs bots as local processes.
type Backend struct {
	// Dir is where each box's directories are created; empty means os.TempDir().
	Dir string
}

// New returns a local backend.
func New() *Backend { return &Backend{} }

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return "local" }

// Describe implements sandbox.Backend.
func (b *Backend) Describe(context.Context) (map[string]string, error) {
	var u syscall.Utsname
	syscall.Uname(&u)
	return map[string]string{"backend": "local", "isolation": "none", "kernel": utsString(u.Release[:])}, nil
}

func utsString(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// Open implements sandbox.Backend.
func (b *Backend) Open(ctx context.Context, spec sandbox.Spec) (sandbox.Box, error) {
	if err := spec.Limits.Validate(); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(b.Dir, "arena-local-")
	if err != nil {
		return nil, sandbox.Faultf("create box directory", err)
	}
	bx := &box{root: root, limits: spec.Limits, exec: spec.Program.Entry}
	for _, d := range []string{bx.botDir(), bx.GameDir(), bx.scratch()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			bx.Close(ctx)
			return nil, sandbox.Faultf("create box directory", err)
		}
	}
	found := false
	for _, f := range spec.Program.Files {
		name := path.Clean(f.Name)
		if name != f.Name || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			bx.Close(ctx)
			return nil, fmt.Errorf("bot file name %q is not a clean relative path", f.Name)
		}
		p := filepath.Join(bx.botDir(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			bx.Close(ctx)
			return nil, sandbox.Faultf("place bot", err)
		}
		mode := os.FileMode(0o444)
		if f.Mode&0o111 != 0 || name == spec.Program.Entry {
			mode = 0o555
			found = found || name == spec.Program.Entry
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			bx.Close(ctx)
			return nil, sandbox.Faultf("place bot", err)
		}
	}
	if !found {
		bx.Close(ctx)
		return nil, fmt.Errorf("bot %q has no file named %q to execute", spec.Program.Name, spec.Program.Entry)
	}
	return bx, nil
}

type box struct {
	root   string
	exec   string
	limits sandbox.Limits
	closed bool
	// sess is the session running in the box, stopped by Reset and Close.
	sess *session
	// hashes remembers the game directory's file hashes between turns.
	hashes proc.Hashes
}

func (bx *box) botDir() string     { return filepath.Join(bx.root, "bot") }
func (bx *box) scratch() string    { return filepath.Join(bx.root, "tmp") }
func (bx *box) GameDir() string    { return filepath.Join(bx.root, "game") }
func (bx *box) Executable() string { return filepath.Join(bx.botDir(), filepath.FromSlash(bx.exec)) }

// Run implements sandbox.Box.
func (bx *box) Run(ctx context.Context, t sandbox.Turn) (sandbox.Report, error) {
	if bx.closed {
		return sandbox.Report{}, sandbox.ErrBoxClosed
	}
	timeout := bx.limits.TurnTimeout
	if t.Timeout > 0 {
		timeout = t.Timeout
	}
	args := []string{bx.Executable()}
	for _, a := range t.Args {
		args = append(args, strings.ReplaceAll(a, sandbox.GameDirToken, bx.GameDir()))
	}
	rep, err := proc.RunTurn(ctx, bx.GameDir(), []string{bx.scratch()}, t, proc.Spec{
		Path:    args[0],
		Args:    args,
		Dir:     bx.GameDir(),
		Env:     bx.env(),
		Timeout: timeout,
		Tail:    bx.limits.OutputTail,
		Reaping: proc.ReapGroup,
		Rlimits: bx.rlimits(),
	}, nil, &bx.hashes)
	if err != nil {
		return rep, sandbox.Faultf("turn", err)
	}
	return rep, nil
}

func (bx *box) env() []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + bx.scratch(),
		"TMPDIR=" + bx.scratch(),
		"LANG=C.UTF-8",
		"PYTHONDONTWRITEBYTECODE=1",
	}
}

func (bx *box) rlimits() []proc.Rlimit {
	return []proc.Rlimit{
		{Resource: syscall.RLIMIT_CORE, Value: 0},
		{Resource: syscall.RLIMIT_FSIZE, Value: uint64(bx.limits.FileSize)},
		{Resource: syscall.RLIMIT_NOFILE, Value: uint64(bx.limits.OpenFiles)},
	}
}

// ReadFile implements sandbox.Box.
func (bx *box) ReadFile(_ context.Context, name string, max int64) ([]byte, error) {
	if bx.closed {
		return nil, sandbox.ErrBoxClosed
	}
	return proc.ReadFile(bx.GameDir(), name, max)
}

// Reset implements sandbox.Box: it stops a running session (killing its process
// group; every turn's group is killed when the turn ends), empties the game and
// scratch directories and checks that both list empty. The local backend cannot
// see a setsid child that left the group, nor clean /dev/shm, which it shares
// with the host.
func (bx *box) Reset(context.Context) error {
	if bx.closed {
		return sandbox.ErrBoxClosed
	}
	start := time.Now()
	bx.hashes.Forget()
	if bx.sess != nil {
		bx.sess.stop()
	}
	var bad []string
	for _, d := range []string{bx.GameDir(), bx.scratch()} {
		if err := proc.Wipe(d); err != nil {
			bad = append(bad, fmt.Sprintf("wipe %s: %v", d, err))
		}
		if err := proc.CheckEmpty(d, false); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return sandbox.Faultf("reset", errors.New(strings.Join(bad, "; ")))
	}
	slog.Debug("local sandbox: box reset", "dir", bx.root, "took", time.Since(start))
	return nil
}

// Close implements sandbox.Box.
func (bx *box) Close(context.Context) error {
	if bx.closed {
		return nil
	}
	bx.closed = true
	if bx.sess != nil {
		bx.sess.stop()
	}
	os.Chmod(bx.botDir(), 0o700)
	if err := proc.Wipe(bx.root); err != nil {
		return err
	}
	return os.Remove(bx.root)
}

// StartSession implements sandbox.SessionBox.
func (bx *box) StartSession(ctx context.Context, args []string) (sandbox.Session, error) {
	if bx.closed {
		return nil, sandbox.ErrBoxClosed
	}
	argv := []string{bx.Executable()}
	for _, a := range args {
		argv = append(argv, strings.ReplaceAll(a, sandbox.GameDirToken, bx.GameDir()))
	}
	s, err := proc.StartSession(proc.Spec{Path: argv[0], Args: argv, Dir: bx.GameDir(), Env: bx.env(),
		Tail: bx.limits.OutputTail, Reaping: proc.ReapGroup, Rlimits: bx.rlimits()})
	if err != nil {
		return nil, &sandbox.StartFailure{Reason: err.Error()}
	}
	if bx.sess != nil {
		// The box runs one bot at a time: the session it replaces is over.
		bx.sess.stop()
	}
	bx.sess = &session{s: s, bx: bx}
	return bx.sess, nil
}

type session struct {
	s  *proc.Session
	bx *box

	mu      sync.Mutex
	stopped bool
	report  sandbox.Report
}

// stop kills the session's processes once, wipes the scratch directory and
// forgets the session; later calls return the first report.
func (s *session) stop() sandbox.Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.report
	}
	s.stopped = true
	s.report = s.s.Stop()
	proc.Wipe(s.bx.scratch())
	if s.bx.sess == s {
		s.bx.sess = nil
	}
	return s.report
}

func (s *session) over() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *session) Send(_ context.Context, line string) error {
	if s.over() {
		return nil // stopped: the bot reads nothing more, as if it had exited
	}
	s.s.Send(line) // queued: a bot that does not read shows it at the next question
	return nil
}

func (s *session) Ask(_ context.Context, line string, timeout time.Duration) (sandbox.Exchange, error) {
	if s.over() {
		return sandbox.Exchange{Exited: true}, nil
	}
	return s.s.Ask(line, timeout), nil
}

func (s *session) Stop(context.Context) (sandbox.Report, error) {
	return s.stop(), nil
}
