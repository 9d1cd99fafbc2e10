// Package local is the sandbox backend that runs bots as plain processes on this
// host. It is NOT a security boundary: a bot can read and write anything the
// arena user can, reach the network, and a setsid child can outlive its turn.
// It exists for bot authors without Docker and for fast tests.
//
// Within those limits it keeps the contract: a fresh process per turn in its own
// process group, an exact deadline moved past the host's wait (measured on the
// group, proc.GroupMeter), the group killed after every turn, bounded
// output tails, rlimits on core dumps, file size and open files, a private game
// directory and a scratch directory wiped between turns. Memory is measured but
// not enforced.
//
// It must never:
//
//   - start a bot without those rlimits: a limit that cannot be set is a fault,
//     and the bot is killed and reaped before the fault is returned;
//   - start a bot in a box that may hold what an earlier one left: after a turn,
//     a session or a scratch wipe that failed, Run and StartSession fail until
//     Reset has wiped the box and found it empty;
//   - charge its own failure to the bot: only a bot that cannot be executed is a
//     Report.StartError or a *sandbox.StartFailure; anything else is a fault;
//   - claim an isolation it does not have: Describe says "isolation": "none",
//     and its Capabilities are not Isolated.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// Capabilities implements sandbox.Backend: not isolated (plain processes on
// this host), reusable (Reset wipes the box and finds it empty), and memory
// is not enforced, so no out-of-memory kill takes the box.
func (b *Backend) Capabilities() sandbox.Capabilities {
	return sandbox.Capabilities{Reusable: true}
}

// Where implements sandbox.Backend.
func (b *Backend) Where() string {
	return "on this machine, as plain processes (the local sandbox: no isolation)"
}

// Admit implements sandbox.Backend: the host's room is not counted.
func (b *Backend) Admit(ctx context.Context, _ int, _ sandbox.Limits) (context.Context, func(), error) {
	return sandbox.AdmitAtOnce(ctx)
}

// Describe implements sandbox.Backend.
func (b *Backend) Describe(context.Context) (map[string]string, error) {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return nil, fmt.Errorf("local sandbox: uname: %w", err)
	}
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
			return nil, bx.abandon(ctx, sandbox.Faultf("create box directory", err))
		}
	}
	found := false
	for _, f := range spec.Program.Files {
		name := path.Clean(f.Name)
		if name != f.Name || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, bx.abandon(ctx, fmt.Errorf("bot file name %q is not a clean relative path", f.Name))
		}
		p := filepath.Join(bx.botDir(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, bx.abandon(ctx, sandbox.Faultf("place bot", err))
		}
		mode := os.FileMode(0o444)
		if f.Mode&0o111 != 0 || name == spec.Program.Entry {
			mode = 0o555
			found = found || name == spec.Program.Entry
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return nil, bx.abandon(ctx, sandbox.Faultf("place bot", err))
		}
	}
	if !found {
		return nil, bx.abandon(ctx, fmt.Errorf("bot %q has no file named %q to execute", spec.Program.Name, spec.Program.Entry))
	}
	return bx, nil
}

// abandon closes a box that could not be opened and returns why, with why its
// directory could not be removed, if it could not.
func (bx *box) abandon(ctx context.Context, why error) error {
	if err := bx.Close(ctx); err != nil {
		return errors.Join(why, sandbox.Faultf("remove the box that could not be opened", err))
	}
	return why
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
	// unclean is whether the box may still hold what a bot left (a turn or
	// a session that failed, a scratch wipe that failed): until Reset has
	// wiped it and found it empty, no bot runs in it.
	unclean proc.Unclean
}

func (bx *box) botDir() string     { return filepath.Join(bx.root, "bot") }
func (bx *box) scratch() string    { return filepath.Join(bx.root, "tmp") }
func (bx *box) GameDir() string    { return filepath.Join(bx.root, "game") }
func (bx *box) Executable() string { return filepath.Join(bx.botDir(), filepath.FromSlash(bx.exec)) }

// usable says why no bot may be started in the box for op now, if that is so.
func (bx *box) usable(op string) error {
	if bx.closed {
		return sandbox.ErrBoxClosed
	}
	if err := bx.unclean.Refuse("box"); err != nil {
		return &sandbox.Fault{Op: op, Err: err}
	}
	return nil
}

// Run implements sandbox.Box. A turn that fails leaves the box unclean.
func (bx *box) Run(ctx context.Context, t sandbox.Turn) (sandbox.Report, error) {
	if err := bx.usable("turn"); err != nil {
		return sandbox.Report{}, err
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

		GroupMeter: true,
	}, nil, &bx.hashes)
	if err != nil {
		return rep, bx.unclean.Mark(sandbox.Faultf("turn", err))
	}
	if rep.HostStalled {
		return rep, bx.unclean.Mark(sandbox.Faultf("turn", sandbox.HostStalled(rep.HostWait, rep.Wall, timeout)))
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
// scratch directories and checks that both list empty; only then is a box that
// was unclean clean again. The local backend cannot see a setsid child that left
// the group, nor clean /dev/shm, which it shares with the host.
func (bx *box) Reset(context.Context) error {
	if bx.closed {
		return sandbox.ErrBoxClosed
	}
	start := time.Now()
	bx.hashes.Forget()
	var bad []string
	if bx.sess != nil {
		if _, err := bx.sess.stop(); err != nil {
			bad = append(bad, err.Error())
		}
	}
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
	bx.unclean.Clear()
	slog.Debug("local sandbox: box reset", "dir", bx.root, "took", time.Since(start))
	return nil
}

// Close implements sandbox.Box: it stops a running session and removes the
// box's directory, returning everything that failed on the way.
func (bx *box) Close(context.Context) error {
	if bx.closed {
		return nil
	}
	bx.closed = true
	var errs []error
	if bx.sess != nil {
		if _, err := bx.sess.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	// The bot directory is read-only; removeAll would unlock it too, but only
	// after a failed first try.
	if err := os.Chmod(bx.botDir(), 0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := proc.Wipe(bx.root); err != nil {
		errs = append(errs, fmt.Errorf("wipe %s: %w", bx.root, err))
	} else if err := os.Remove(bx.root); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// StartSession implements sandbox.SessionBox. The session it replaces, if any,
// is stopped (and the scratch directory wiped) before the new bot starts. A bot
// that cannot be executed is a *sandbox.StartFailure; any other failure is a
// fault and leaves the box unclean.
func (bx *box) StartSession(ctx context.Context, args []string) (sandbox.Session, error) {
	if err := bx.usable("start session"); err != nil {
		return nil, err
	}
	if bx.sess != nil {
		// The box runs one bot at a time: the session it replaces is over.
		if _, err := bx.sess.stop(); err != nil {
			return nil, err
		}
	}
	argv := []string{bx.Executable()}
	for _, a := range args {
		argv = append(argv, strings.ReplaceAll(a, sandbox.GameDirToken, bx.GameDir()))
	}
	s, err := proc.StartSession(proc.Spec{Path: argv[0], Args: argv, Dir: bx.GameDir(), Env: bx.env(),
		Tail: bx.limits.OutputTail, Reaping: proc.ReapGroup, Rlimits: bx.rlimits(), GroupMeter: true})
	var ee *proc.ExecError
	switch {
	case errors.As(err, &ee):
		return nil, &sandbox.StartFailure{Reason: ee.Error()}
	case err != nil:
		return nil, bx.unclean.Mark(sandbox.Faultf("start session", err))
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
	err     error // what went wrong when it stopped
}

// stop kills the session's processes once, wipes the scratch directory and
// forgets the session; later calls return the first report and error. An
// error leaves the box unclean.
func (s *session) stop() (sandbox.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.report, s.err
	}
	s.stopped = true
	report, err := s.s.Stop()
	s.report = report
	if err = errors.Join(err, proc.WipeScratch([]string{s.bx.scratch()})); err != nil {
		s.err = s.bx.unclean.Mark(sandbox.Faultf("stop session", err))
	}
	if s.bx.sess == s {
		s.bx.sess = nil
	}
	return s.report, s.err
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

// Ask implements sandbox.Session. A bot that could not be resumed or paused
// leaves the box unclean.
func (s *session) Ask(_ context.Context, line string, timeout time.Duration) (sandbox.Exchange, error) {
	if s.over() {
		return sandbox.Exchange{Exited: true}, nil
	}
	ex, err := s.s.Ask(line, timeout)
	if err != nil {
		return ex, s.bx.unclean.Mark(sandbox.Faultf("ask", err))
	}
	if ex.HostStalled {
		return ex, s.bx.unclean.Mark(sandbox.Faultf("ask", sandbox.HostStalled(ex.HostWait, ex.Wall, timeout)))
	}
	return ex, nil
}

func (s *session) Stop(context.Context) (sandbox.Report, error) {
	return s.stop()
}
