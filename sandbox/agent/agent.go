// Package agent is the supervisor that runs as PID 1 inside every box (a
// Docker container, a Kubernetes Pod), and the protocol the backends speak
// to it.
//
// The agent reads requests from its stdin and writes replies to its stdout, both
// reached through the engine's attach stream (Docker's attach API, or the
// Kubernetes API server's), so no byte depends on a host path and a remote
// engine or a cluster works the same as a local one. Per turn it prepares the game
// directory, starts the bot as the unprivileged bot user with an exact deadline,
// kills and reaps every process in the container when the bot exits, wipes the
// scratch directories and reports the facts. Between matches it resets the
// container to the state it started in, and proves it (op "reset").
//
// The agent must stay small and must never trust anything the bot can touch: the
// bot cannot signal it (different user, and PID 1 ignores unhandled signals), cannot
// reach its stdin or stdout, and every file it reads in a directory the bot can
// write is opened without following links. It must also never:
//
//   - run a bot it could not set up: a bot whose OOM score cannot be raised above
//     the agent's is killed and reaped, and the failure is an error of the reply;
//   - leave a process of the bot running or unreaped after its turn, its session or
//     a reset;
//   - run a bot in a container that may hold what an earlier one left: after a
//     turn, a session or a scratch wipe that failed, every "turn" and "start" is
//     refused until a "reset" succeeds;
//   - charge its own failure to the bot: only a bot that cannot be executed is a
//     Report.StartError; anything else that fails is the reply's Err.
package agent

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/proc"
)

// Version is the protocol version. The docker backend refuses an image whose agent
// speaks another one.
const Version = 7

// InstallPart is the most of a program one "install" request carries: a
// larger program is sent in parts (Request.More), so that the agent never
// holds the whole of it in memory, which is the box's, and so the bot's.
const InstallPart = 1 << 20

// Paths inside the runtime image.
const (
	Path       = "/usr/local/libexec/arena-agent"
	GameDir    = "/game"
	BotDir     = "/bot"
	ScratchDir = "/tmp"
	ShmDir     = "/dev/shm"
	MQueueDir  = "/dev/mqueue"
	BotUID     = 10001
	BotGID     = 10001
)

// Hello is the first message the agent sends.
type Hello struct {
	Version    int
	PID        int
	OOMCounter string // file the OOM kill count is read from, "" if none
	// NoHostWait says why the host's wait for a CPU is not measured here (a
	// turn's deadline is then the wall clock's alone); "" when it is.
	NoHostWait string
	Err        string // set when the agent cannot serve
}

// Op is what a Request asks of the agent. On the wire it is its name, a
// string.
type Op string

// The agent's operations.
const (
	// OpHello asks for the agent's Hello, where it says hello only once
	// asked (Config.HelloWhenAsked).
	OpHello Op = "hello"
	// OpInstall places the bot's program (or a part of it) in the bot
	// directory.
	OpInstall Op = "install"
	// OpTurn runs one turn.
	OpTurn Op = "turn"
	// OpRead reads a file of the game directory.
	OpRead Op = "read"
	// OpStart starts a session bot.
	OpStart Op = "start"
	// OpSend sends lines to the session bot.
	OpSend Op = "send"
	// OpAsk asks the session bot a question.
	OpAsk Op = "ask"
	// OpStop stops the session bot.
	OpStop Op = "stop"
	// OpReset returns the container to the state it started in, and proves it.
	OpReset Op = "reset"
	// OpBye ends the conversation.
	OpBye Op = "bye"
)

// Request is one message to the agent.
type Request struct {
	Op   Op
	Turn sandbox.Turn
	// Exec is the executable's name inside the bot directory.
	Exec string
	// Timeout and Tail are the turn's limits.
	Timeout time.Duration
	Tail    int
	// Name and Max are for "read".
	Name string
	Max  int64
	// Lines are sent to the bot, in order, for "send" and, before the
	// question, for "ask"; Line is the question of "ask"; Args are for "start"
	// (after the executable).
	Lines []string
	Line  string
	Args  []string
	// Program is "install"'s: the bot's files as a tar (ProgramTar), for a
	// box whose runtime cannot copy them in before it starts (a Pod), or a
	// part of it (InstallPart bytes at most) when More is set.
	Program []byte
	// More is "install"'s: more parts of the tar follow, each in an
	// "install" of its own; the last one, without More, carries Rlimits
	// and BotID and is answered once the whole program is in place. The
	// parts are unpacked as they come.
	More bool
	// Rlimits are "install"'s: set on the agent, and so on every bot it
	// starts, where the runtime cannot set them on the whole box (a Pod has
	// no ulimits): what Docker's ulimits do.
	Rlimits []proc.Rlimit
	// BotID is "install"'s, when set: the user and group the bot runs as in
	// this box, instead of BotUID's. One of its own, whose processes the
	// kernel counts apart, lets RLIMIT_NPROC hold the box's bot alone
	// where the runtime has no pids limit for the box (a Pod).
	BotID int
}

// Reply answers one Request.
type Reply struct {
	Report   sandbox.Report
	Exchange sandbox.Exchange
	Data     []byte
	Err      string
}

// Config says where things are; the defaults match the runtime image.
type Config struct {
	Game, Bot string
	Scratch   []string
	// MQueue is where the container's POSIX message queues are listed; the bot
	// can create them, so a reset empties it, with the System V IPC objects.
	MQueue   string
	UID, GID int
	Env      []string
	// Cgroup is the container's own cgroup directory, where the host's wait
	// for a CPU is measured from (with /proc); "" measures nothing.
	Cgroup string
	// HelloWhenAsked: the agent says hello only once asked (a request of op
	// "hello"), for a runtime whose attach stream may begin after the
	// agent started (a Pod's), where an earlier hello would be lost.
	HelloWhenAsked bool
}

// DefaultConfig is the configuration used inside the runtime image.
func DefaultConfig() Config {
	return Config{
		Game:    GameDir,
		Bot:     BotDir,
		Scratch: []string{ScratchDir, ShmDir},
		MQueue:  MQueueDir,
		UID:     BotUID,
		GID:     BotGID,
		Cgroup:  "/sys/fs/cgroup",
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"HOME=" + ScratchDir,
			"TMPDIR=" + ScratchDir,
			"LANG=C.UTF-8",
			"LC_ALL=C.UTF-8",
			"PYTHONDONTWRITEBYTECODE=1",
		},
	}
}

// Serve speaks the protocol on r and w until "bye" or the end of r.
func Serve(r io.Reader, w io.Writer, cfg Config) (err error) {
	reserveThreads(spareThreads)
	bw := bufio.NewWriter(w)
	enc := gob.NewEncoder(bw)
	dec := gob.NewDecoder(bufio.NewReader(r))
	send := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		return bw.Flush()
	}
	hello := Hello{Version: Version, PID: os.Getpid(), OOMCounter: oomCounterFile()}
	var meter *proc.Meter
	if cfg.Cgroup == "" {
		hello.NoHostWait = "no cgroup to measure from"
	} else if m, err := proc.OpenMeter(cfg.Cgroup, "/proc", os.Getpid()); err != nil {
		hello.NoHostWait = err.Error()
	} else {
		meter = m
	}
	if err := prepareGameDir(cfg); err != nil {
		hello.Err = err.Error()
	}
	if cfg.HelloWhenAsked {
		var req Request
		if err := dec.Decode(&req); err != nil {
			return fmt.Errorf("waiting to be asked for a hello: %w", err)
		}
		if req.Op != OpHello {
			return fmt.Errorf("asked %q before hello", req.Op)
		}
	}
	if err := send(hello); err != nil {
		return err
	}
	if hello.Err != "" {
		return errors.New(hello.Err)
	}
	sv := &server{cfg: cfg, oomFile: hello.OOMCounter, hashes: &proc.Hashes{}, meter: meter}
	defer func() {
		if sv.session != nil {
			_, serr := sv.stopSession()
			err = errors.Join(err, serr)
		}
	}()
	for {
		var req Request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		if req.Op == OpBye {
			return send(Reply{})
		}
		if err := send(sv.handle(req)); err != nil {
			return err
		}
	}
}

// server is the state the agent keeps between requests.
type server struct {
	cfg     Config
	oomFile string // the OOM kill counter, "" if none
	meter   *proc.Meter
	session *proc.Session
	// hashes remembers the game directory's file hashes from turn to turn
	// (one box, one game; a reset forgets them).
	hashes *proc.Hashes
	// started: a bot has been started in this box ("install" comes first).
	started bool
	// installing is the install under way, sent in parts; nil when none.
	installing *installing
	// unclean is whether the container may still hold what a bot left there
	// (a turn or session that failed, a wipe that failed): until a reset
	// proves it clean, no bot runs.
	unclean proc.Unclean
}

// handle answers one request other than "bye".
func (sv *server) handle(req Request) Reply {
	if sv.installing != nil && req.Op != OpInstall {
		return Reply{Err: fmt.Sprintf("%q while the program is being installed: its last part must come first", req.Op)}
	}
	switch req.Op {
	case OpInstall:
		return Reply{Err: errString(sv.install(req))}
	case OpTurn:
		return sv.turn(req)
	case OpRead:
		data, err := proc.ReadFile(sv.cfg.Game, req.Name, req.Max)
		return Reply{Data: data, Err: errString(err)}
	case OpStart:
		return sv.start(req)
	case OpSend, OpAsk, OpStop:
		return sv.sessionOp(req)
	case OpReset:
		return sv.reset()
	}
	return Reply{Err: fmt.Sprintf("unknown op %q", req.Op)}
}

// errString is err's message, or "" for no error.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// turn runs one turn. A turn that failed leaves the container unclean: its
// scratch directories may not have been wiped.
func (sv *server) turn(req Request) Reply {
	if err := sv.unclean.Refuse("container"); err != nil {
		return Reply{Err: err.Error()}
	}
	sv.started = true
	report, err := runTurn(sv.cfg, req, sv.oomFile, sv.hashes, sv.meter)
	if err != nil {
		sv.unclean.Mark(err)
	}
	return Reply{Report: report, Err: errString(err)}
}

// start starts a session. A bot that cannot be executed is its own fault
// (Report.StartError); any other failure is ours (Err).
func (sv *server) start(req Request) Reply {
	if sv.session != nil {
		return Reply{Err: "a session is already running"}
	}
	if err := sv.unclean.Refuse("container"); err != nil {
		return Reply{Err: err.Error()}
	}
	args := botArgs(sv.cfg, req.Exec, req.Args)
	sv.started = true
	s, err := proc.StartSession(proc.Spec{Path: args[0], Args: args, Dir: sv.cfg.Game, Env: sv.cfg.Env,
		Cred: botCredential(sv.cfg),
		Tail: req.Tail, Reaping: proc.ReapAll, Started: favourForOOM, Meter: sv.meter})
	var ee *proc.ExecError
	switch {
	case errors.As(err, &ee):
		return Reply{Report: sandbox.Report{StartError: ee.Error(), ExitCode: -1}}
	case err != nil:
		sv.unclean.Mark(err)
		return Reply{Err: "start session: " + err.Error()}
	}
	sv.session = s
	return Reply{}
}

// sessionOp is "send", "ask" or "stop" to the running session.
func (sv *server) sessionOp(req Request) Reply {
	if sv.session == nil {
		return Reply{Err: "no session is running"}
	}
	var rep Reply
	switch req.Op {
	case OpSend:
		for _, l := range req.Lines {
			sv.session.Send(l)
		}
	case OpAsk:
		for _, l := range req.Lines {
			sv.session.Send(l)
		}
		before := readOOMCount(sv.oomFile)
		ex, err := sv.session.Ask(req.Line, req.Timeout)
		rep.Exchange = ex
		rep.Report.OOMKilled = sv.oomFile != "" && readOOMCount(sv.oomFile) > before
		if err != nil {
			sv.unclean.Mark(err)
			rep.Err = err.Error()
		}
	case OpStop:
		report, err := sv.stopSession()
		rep.Report, rep.Err = report, errString(err)
	}
	return rep
}

// stopSession stops the running session and wipes the scratch directories. A
// failure leaves the container unclean.
func (sv *server) stopSession() (sandbox.Report, error) {
	report, err := sv.session.Stop()
	sv.session = nil
	if err = errors.Join(err, proc.WipeScratch(sv.cfg.Scratch)); err != nil {
		err = fmt.Errorf("stop session: %w", err)
		sv.unclean.Mark(err)
	}
	return report, err
}

// reset stops the session, if any, and returns the container to the state it
// started in. Only a reset that succeeds makes an unclean container clean.
func (sv *server) reset() Reply {
	sv.hashes.Forget()
	var stopErr error
	if sv.session != nil {
		if _, err := sv.session.Stop(); err != nil {
			stopErr = fmt.Errorf("stop session: %w", err)
		}
		sv.session = nil
	}
	killed, err := reset(sv.cfg)
	if err = errors.Join(stopErr, err); err != nil {
		return Reply{Report: sandbox.Report{Survivors: killed}, Err: err.Error()}
	}
	sv.unclean.Clear()
	return Reply{Report: sandbox.Report{Survivors: killed}}
}

func prepareGameDir(cfg Config) error {
	if err := os.Chown(cfg.Game, cfg.UID, cfg.GID); err != nil {
		return fmt.Errorf("chown %s: %w", cfg.Game, err)
	}
	return os.Chmod(cfg.Game, 0o700)
}

// reset returns the container to the state it started in: every process but
// ours killed and reaped, the game and scratch directories emptied, the game
// directory given back to the bot user, every message queue and System V IPC
// object (which outlive their makers) removed. Then it checks all of that:
// each directory lists empty, no IPC object is left and /proc shows no process
// but PID 1. It returns how many processes it killed.
func reset(cfg Config) (int, error) {
	if os.Getpid() != 1 {
		// kill(-1) from anything but PID 1 of a namespace reaches the host's processes.
		return 0, errors.New("reset needs the agent to run as PID 1")
	}
	var bad []string
	killed, err := killEveryone()
	if err != nil {
		bad = append(bad, err.Error())
	}
	dirs := append([]string{cfg.Game}, cfg.Scratch...)
	if cfg.MQueue != "" {
		dirs = append(dirs, cfg.MQueue)
	}
	for _, d := range dirs {
		if err := proc.Wipe(d); err != nil && !(d != cfg.Game && errors.Is(err, fs.ErrNotExist)) {
			bad = append(bad, fmt.Sprintf("wipe %s: %v", d, err))
		}
	}
	if err := prepareGameDir(cfg); err != nil {
		bad = append(bad, err.Error())
	}
	for _, d := range dirs {
		if err := proc.CheckEmpty(d, d != cfg.Game); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if fi, err := os.Lstat(cfg.Game); err != nil {
		bad = append(bad, err.Error())
	} else if st, _ := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || fi.Mode().Perm() != 0o700 || st == nil || int(st.Uid) != cfg.UID || int(st.Gid) != cfg.GID {
		bad = append(bad, fmt.Sprintf("%s is %v, not a directory of mode 0700 owned by the bot user", cfg.Game, fi.Mode()))
	}
	// A listing that fails here fails again just below, where it is reported.
	if objs, err := sysvObjects(); err == nil && len(objs) > 0 {
		if err := removeSysV(objs); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if objs, err := sysvObjects(); err != nil {
		bad = append(bad, "list System V IPC objects: "+err.Error())
	} else if len(objs) > 0 {
		bad = append(bad, fmt.Sprintf("System V IPC objects left: %v", objs))
	}
	if pids, err := otherProcesses(); err != nil {
		bad = append(bad, "list processes: "+err.Error())
	} else if len(pids) > 0 {
		bad = append(bad, "processes left: "+strings.Join(pids, ", "))
	}
	if len(bad) > 0 {
		return killed, fmt.Errorf("reset: %s", strings.Join(bad, "; "))
	}
	return killed, nil
}

// killEveryone kills every process but ours and reaps them all, and returns
// how many there were. Only PID 1 of a namespace may call it.
func killEveryone() (int, error) {
	killed := 0
	err := killAllOthers()
	for {
		var ws syscall.WaitStatus
		_, werr := syscall.Wait4(-1, &ws, 0, nil)
		if werr == syscall.EINTR {
			continue
		}
		if werr == syscall.ECHILD { // nobody left
			return killed, err
		}
		if werr != nil {
			return killed, errors.Join(err, fmt.Errorf("reap: %w", werr))
		}
		killed++
		// A fork racing the first kill can leave a child behind it.
		err = errors.Join(err, killAllOthers())
	}
}

// killAllOthers sends SIGKILL to every process but ours; nobody left is no
// error.
func killAllOthers() error {
	if err := syscall.Kill(-1, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("kill every process: %w", err)
	}
	return nil
}

// otherProcesses lists the PIDs in /proc other than our own.
func otherProcesses() ([]string, error) {
	des, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := strconv.Itoa(os.Getpid())
	var pids []string
	for _, de := range des {
		if _, err := strconv.Atoi(de.Name()); err == nil && de.Name() != self {
			pids = append(pids, de.Name())
		}
	}
	return pids, nil
}

// botCredential is the bot user with no supplementary groups: the agent's own
// (root's group among them) must not be inherited.
func botCredential(cfg Config) *syscall.Credential {
	return &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID), Groups: []uint32{}}
}

func botArgs(cfg Config, exec string, rest []string) []string {
	args := []string{filepath.Join(cfg.Bot, exec)}
	for _, a := range rest {
		args = append(args, strings.ReplaceAll(a, sandbox.GameDirToken, cfg.Game))
	}
	return args
}

func runTurn(cfg Config, req Request, oomFile string, hashes *proc.Hashes, meter *proc.Meter) (sandbox.Report, error) {
	args := botArgs(cfg, req.Exec, req.Turn.Args)
	var oomKills func() int64
	if oomFile != "" {
		oomKills = func() int64 { return readOOMCount(oomFile) }
	}
	return proc.RunTurn(context.Background(), cfg.Game, cfg.Scratch, req.Turn, proc.Spec{
		Path:    args[0],
		Args:    args,
		Dir:     cfg.Game,
		Env:     cfg.Env,
		Cred:    botCredential(cfg),
		Timeout: req.Timeout,
		Tail:    req.Tail,
		Reaping: proc.ReapAll,
		Started: favourForOOM,
		Meter:   meter,
	}, oomKills, hashes)
}

// favourForOOM makes the bot, not the agent, the OOM killer's first choice.
// Raising a score needs no privilege; children inherit it. A bot whose score
// cannot be raised does not run: the kernel could take the agent for it.
func favourForOOM(pid int) error {
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte("1000"), 0); err != nil {
		return fmt.Errorf("make the bot the OOM killer's first choice: %w", err)
	}
	return nil
}

// oomCounterFile finds the container's cgroup OOM kill counter (v2, then v1).
func oomCounterFile() string {
	for _, f := range []string{"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"} {
		if readOOMCount(f) >= 0 {
			return f
		}
	}
	return ""
}

func readOOMCount(file string) int64 {
	if file == "" {
		return -1
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
