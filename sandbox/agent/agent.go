// Package agent is the supervisor that runs as PID 1 inside every bot container,
// and the protocol the docker backend speaks to it.
//
// The agent reads requests from its stdin and writes replies to its stdout, both
// reached through the Docker attach API, so no byte depends on a host path and a
// remote engine works the same as a local one. Per turn it prepares the game
// directory, starts the bot as the unprivileged bot user with an exact deadline,
// kills and reaps every process in the container when the bot exits, wipes the
// scratch directories and reports the facts. Between matches it resets the
// container to the state it started in, and proves it (op "reset").
//
// The agent must stay small and must never trust anything the bot can touch: the
// bot cannot signal it (different user, and PID 1 ignores unhandled signals), cannot
// reach its stdin or stdout, and every file it reads is opened without following
// links.
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
const Version = 4

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
	Err        string // set when the agent cannot serve
}

// Request is one message to the agent.
type Request struct {
	// Op is "turn", "read", "start", "send", "ask", "stop", "reset" or "bye".
	Op   string
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
func Serve(r io.Reader, w io.Writer, cfg Config) error {
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
	if err := prepareGameDir(cfg); err != nil {
		hello.Err = err.Error()
	}
	if err := send(hello); err != nil {
		return err
	}
	if hello.Err != "" {
		return errors.New(hello.Err)
	}
	var session *proc.Session
	// hashes remembers the game directory's file hashes from turn to turn
	// (one box, one game; a reset forgets them).
	hashes := &proc.Hashes{}
	defer func() {
		if session != nil {
			session.Stop()
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
		var rep Reply
		switch req.Op {
		case "turn":
			report, err := runTurn(cfg, req, hello.OOMCounter, hashes)
			rep.Report = report
			if err != nil {
				rep.Err = err.Error()
			}
		case "read":
			data, err := proc.ReadFile(cfg.Game, req.Name, req.Max)
			rep.Data = data
			if err != nil {
				rep.Err = err.Error()
			}
		case "start":
			if session != nil {
				rep.Err = "a session is already running"
				break
			}
			args := botArgs(cfg, req.Exec, req.Args)
			s, err := proc.StartSession(proc.Spec{Path: args[0], Args: args, Dir: cfg.Game, Env: cfg.Env,
				Cred: botCredential(cfg),
				Tail: req.Tail, Reaping: proc.ReapAll, Started: favourForOOM})
			if err != nil {
				rep.Report = sandbox.Report{StartError: err.Error(), ExitCode: -1}
				break
			}
			session = s
		case "send", "ask", "stop":
			if session == nil {
				rep.Err = "no session is running"
				break
			}
			switch req.Op {
			case "send":
				for _, l := range req.Lines {
					session.Send(l)
				}
			case "ask":
				for _, l := range req.Lines {
					session.Send(l)
				}
				before := readOOMCount(hello.OOMCounter)
				rep.Exchange = session.Ask(req.Line, req.Timeout)
				rep.Report.OOMKilled = hello.OOMCounter != "" && readOOMCount(hello.OOMCounter) > before
			case "stop":
				rep.Report = session.Stop()
				session = nil
				for _, d := range cfg.Scratch {
					proc.Wipe(d)
				}
			}
		case "reset":
			hashes.Forget()
			if session != nil {
				session.Stop()
				session = nil
			}
			killed, err := reset(cfg)
			rep.Report.Survivors = killed
			if err != nil {
				rep.Err = err.Error()
			}
		case "bye":
			return send(rep)
		default:
			rep.Err = fmt.Sprintf("unknown op %q", req.Op)
		}
		if err := send(rep); err != nil {
			return err
		}
	}
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
	killed := 0
	syscall.Kill(-1, syscall.SIGKILL)
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil { // ECHILD: nobody left
			break
		}
		killed++
		// A fork racing the first kill can leave a child behind it.
		syscall.Kill(-1, syscall.SIGKILL)
	}
	var bad []string
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
	if fi, err := os.Lstat(cfg.Game); err == nil {
		st, _ := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 || st == nil || int(st.Uid) != cfg.UID || int(st.Gid) != cfg.GID {
			bad = append(bad, fmt.Sprintf("%s is %v, not a directory of mode 0700 owned by the bot user", cfg.Game, fi.Mode()))
		}
	}
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

func runTurn(cfg Config, req Request, oomFile string, hashes *proc.Hashes) (sandbox.Report, error) {
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
	}, oomKills, hashes)
}

// favourForOOM makes the bot, not the agent, the OOM killer's first choice.
// Raising a score needs no privilege; children inherit it.
func favourForOOM(pid int) {
	os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte("1000"), 0)
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
