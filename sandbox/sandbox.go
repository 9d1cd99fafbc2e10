// Package sandbox is the contract between the match runner and the places where
// untrusted bots run.
//
// A Backend opens one Box per bot per match. A Box runs one turn at a time: it
// places the turn's files in the bot's game directory, starts a fresh bot process,
// enforces the per-turn wall-clock limit, kills every process the bot left behind,
// and reports facts: exit status, timing, memory, output tails, the answer file's
// bytes and the game directory's entries.
//
// A Box may serve more than one match (see Pool), but nothing of one match may
// reach the next: Box.Reset returns a Box to the state of a newly opened one and
// checks that it did, and a Box that cannot be reset is destroyed, never reused.
//
// A Box never judges. Whether an exit code or a second file in game_dir costs the
// bot the game is the harness's decision. Errors returned by a Box are faults of the
// sandbox or the host (the engine went away, a container was refused); they must
// never be charged to a bot. What the bot did, however badly, is a Report.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Limits are the resources a bot gets. Turn-level limits apply to every turn;
// the others are fixed when the Box is opened.
type Limits struct {
	// TurnTimeout is the wall-clock limit for one turn, measured next to the bot.
	TurnTimeout time.Duration `json:"turnTimeout"`
	// Memory is the memory limit in bytes for everything the bot runs, with no swap.
	Memory int64 `json:"memory"`
	// CPUs is the CPU quota in cores (1.5 = one and a half cores).
	CPUs float64 `json:"cpus"`
	// Pids caps the number of processes and threads alive at once.
	Pids int64 `json:"pids"`
	// GameDirBytes caps the size of the game directory.
	GameDirBytes int64 `json:"gameDirBytes"`
	// ScratchBytes caps the size of the scratch directory (/tmp), wiped every turn.
	ScratchBytes int64 `json:"scratchBytes"`
	// OutputTail is how many trailing bytes of stdout and of stderr are kept.
	OutputTail int `json:"outputTail"`
	// OpenFiles caps open file descriptors per process.
	OpenFiles int64 `json:"openFiles"`
	// FileSize caps the size of any single file a bot process writes.
	FileSize int64 `json:"fileSize"`
}

// MiB is one mebibyte.
const MiB = 1 << 20

// DefaultImage is the runtime image a box runs in unless told otherwise,
// as arena image build tags it: the agent as PID 1, the bot user, the
// languages' toolchains.
const DefaultImage = "arena-runtime:latest"

// DefaultLimits are the Code Clash limits: 5 s per turn, 1 GiB of memory without
// swap, one CPU.
func DefaultLimits() Limits {
	return Limits{
		TurnTimeout:  5 * time.Second,
		Memory:       1024 * MiB,
		CPUs:         1,
		Pids:         256,
		GameDirBytes: 64 * MiB,
		ScratchBytes: 512 * MiB,
		OutputTail:   8 * 1024,
		OpenFiles:    1024,
		FileSize:     512 * MiB,
	}
}

// Validate reports the first limit that cannot be enforced as given.
func (l Limits) Validate() error {
	switch {
	case l.TurnTimeout <= 0:
		return fmt.Errorf("turn timeout must be positive, got %v", l.TurnTimeout)
	case l.Memory < 16*MiB:
		return fmt.Errorf("memory limit must be at least 16 MiB, got %d bytes", l.Memory)
	case l.CPUs <= 0:
		return fmt.Errorf("cpus must be positive, got %v", l.CPUs)
	case l.Pids < 8:
		return fmt.Errorf("pids limit must be at least 8, got %d", l.Pids)
	case l.GameDirBytes < MiB:
		return fmt.Errorf("game_dir size must be at least 1 MiB, got %d bytes", l.GameDirBytes)
	case l.ScratchBytes < MiB:
		return fmt.Errorf("scratch size must be at least 1 MiB, got %d bytes", l.ScratchBytes)
	case l.OutputTail < 0:
		return fmt.Errorf("output tail must not be negative, got %d", l.OutputTail)
	case l.OpenFiles < 16:
		return fmt.Errorf("open files limit must be at least 16, got %d", l.OpenFiles)
	case l.FileSize < MiB:
		return fmt.Errorf("file size limit must be at least 1 MiB, got %d bytes", l.FileSize)
	}
	return nil
}

// File is a file handed to a bot.
type File struct {
	Name string      // relative, slash-separated, no ".." elements
	Data []byte      // contents
	Mode fs.FileMode // permission bits; 0 means 0644
	// Owned puts the file in the bot's name, as a file the bot wrote itself:
	// a data file restored for a rerun is as writable by the bot as it was
	// during play. Otherwise the sandbox owns it (the bot may only read it).
	Owned bool
}

// Program is what a bot is made of: its files, placed read-only in the bot
// directory, and the one that is executed.
type Program struct {
	Name  string // shown in logs and container labels
	Files []File
	Entry string // name of the executable within Files
}

// Spec describes the Box to open.
type Spec struct {
	Program Program
	Limits  Limits
	// Labels are attached to everything the Box creates (containers, volumes), in
	// addition to the backend's own ownership label.
	Labels map[string]string
}

// Turn is one bot invocation.
type Turn struct {
	// Clean empties the game directory before Put (used to rebuild a disputed turn).
	Clean bool
	// Remove lists game-directory names to delete before the bot starts (the
	// previous turn's answer file).
	Remove []string
	// Put lists files to write into the game directory before the bot starts.
	Put []File
	// Args follow the executable on the command line. The string GameDirToken is
	// replaced by the game directory's path as the bot sees it.
	Args []string
	// Collect names the answer file to read back after the bot exits.
	Collect string
	// CollectMax caps how many bytes of the answer file are read; a larger file is
	// reported with Truncated set.
	CollectMax int64
	// HashMax caps the size of regular files whose SHA-256 is computed for the
	// listing; larger files are listed without a hash.
	HashMax int64
	// Timeout overrides Limits.TurnTimeout when positive.
	Timeout time.Duration
}

// GameDirToken in Turn.Args stands for the game directory's path inside the box.
const GameDirToken = "{game_dir}"

// EntryType says what kind of file system object an Entry is.
type EntryType string

// Entry types reported for the game directory. A symlink is reported as such and
// never followed.
const (
	TypeFile    EntryType = "file"
	TypeDir     EntryType = "dir"
	TypeSymlink EntryType = "symlink"
	TypeFIFO    EntryType = "fifo"
	TypeOther   EntryType = "other"
)

// Entry is one object found in the game directory after a turn.
type Entry struct {
	Name   string    `json:"name"`
	Type   EntryType `json:"type"`
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256,omitempty"`
	// Mode is the entry's permission bits as the bot left them.
	Mode fs.FileMode `json:"mode,omitempty"`
}

// Collected is the answer file as found after the turn.
type Collected struct {
	Present   bool      `json:"present"`
	Type      EntryType `json:"type,omitempty"` // what the name pointed at; only a file is read
	Data      []byte    `json:"data,omitempty"`
	Size      int64     `json:"size"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Tail is the end of an output stream.
type Tail struct {
	Data  []byte `json:"data,omitempty"`
	Total int64  `json:"total"` // bytes the bot wrote in all
}

// Report holds the facts of one turn. It makes no judgement.
type Report struct {
	// StartError is set when the executable could not be started at all (exec
	// format error, permission denied); nothing else but Wall is then meaningful.
	StartError string        `json:"startError,omitempty"`
	ExitCode   int           `json:"exitCode"` // -1 when killed by a signal
	Signal     int           `json:"signal,omitempty"`
	TimedOut   bool          `json:"timedOut,omitempty"`
	OOMKilled  bool          `json:"oomKilled,omitempty"`
	Wall       time.Duration `json:"wall"` // measured next to the bot
	CPU        time.Duration `json:"cpu"`  // user + system, every process of the turn
	PeakMemory int64         `json:"peakMemory"`
	Survivors  int           `json:"survivors,omitempty"` // processes killed after the bot exited
	Stdout     Tail          `json:"stdout"`
	Stderr     Tail          `json:"stderr"`
	Answer     Collected     `json:"answer"`
	GameDir    []Entry       `json:"gameDir"`
	// HostWait is how long the host kept the bot's tasks waiting for a CPU
	// that others held (never its own quota): the turn's deadline was moved
	// past it. Zero where the backend does not measure it (HostWaitError
	// then says why, when it tried).
	HostWait      time.Duration `json:"hostWait,omitempty"`
	HostWaitError string        `json:"hostWaitError,omitempty"`
	// HostStalled: the turn reached WallCap with the bot's own time short of
	// its limit. The host's fault: a backend returns it as a Fault.
	HostStalled bool `json:"hostStalled,omitempty"`
	// Hashed is how many bytes of the game directory were read to hash it
	// after the turn: a file left unchanged since an earlier turn of the same
	// box is not read again.
	Hashed int64 `json:"hashed,omitempty"`
}

// Box runs one bot's turns for one match. It is not safe for concurrent use.
type Box interface {
	// Run plays one turn. A non-nil error is a sandbox or host fault.
	Run(ctx context.Context, t Turn) (Report, error)
	// ReadFile returns a game-directory file's contents, refusing symlinks and
	// anything larger than max.
	ReadFile(ctx context.Context, name string, max int64) ([]byte, error)
	// GameDir is the game directory's path as the bot sees it.
	GameDir() string
	// Executable is the bot's executable path as the bot sees it.
	Executable() string
	// Reset returns the Box to the state of a newly opened one: every process of
	// the bot killed, a running session included; the game directory, the scratch
	// directory (/tmp) and /dev/shm emptied, and where the Box has IPC of its own
	// (an isolated backend) every message queue and System V IPC object removed;
	// nothing of the bot left but its program files. It then verifies that: it
	// lists each of those places and finds it empty, and, where the Box can see
	// every process (an isolated backend), finds none left but its own
	// supervisor. A Session started before Reset is over. A non-nil error means
	// the Box must not be reused: Close it.
	Reset(ctx context.Context) error
	// Close releases everything the Box holds. It is safe to call more than once.
	Close(ctx context.Context) error
}

// Backend opens Boxes.
type Backend interface {
	Name() string
	Open(ctx context.Context, spec Spec) (Box, error)
	// Describe returns facts about the backend for transcripts (image, versions).
	Describe(ctx context.Context) (map[string]string, error)
	// Capabilities says what the backend's boxes can be held to and how
	// they may be used. A backend that cannot tell yet (it has not asked its
	// engine) claims the least it may turn out to have.
	Capabilities() Capabilities
	// Where says in words, for the organizer's page, where the boxes run:
	// "on this machine, in Docker containers under runsc", "in Pods on the
	// cluster (namespace arena)".
	Where() string
	// Admit waits until there is room for n boxes under lim opened
	// together (a game's two), and holds it for them: they are opened with
	// the context it returns, and release gives the room back once they
	// are closed. So games never each hold part of what they need while
	// waiting on one another for the rest. An Open under that context
	// that finds no room after all (there was less than the backend last
	// knew) fails with ErrNoRoom: its caller closes what it opened,
	// releases, and is admitted again, charged to no one. A backend whose
	// room is its host's own admits at once (AdmitAtOnce).
	Admit(ctx context.Context, n int, lim Limits) (_ context.Context, release func(), err error)
}

// AdmitAtOnce is Admit for a backend that has no room to count: every
// game is admitted at once, and releasing gives nothing back.
func AdmitAtOnce(ctx context.Context) (context.Context, func(), error) {
	return ctx, func() {}, nil
}

// ErrNoRoom is an Open under an admission (Backend.Admit) that found no
// room for its box: no fault of the game's or of the host's, it is
// opened again once there is room.
var ErrNoRoom = errors.New("no room for the box yet")

type roomMakerKey struct{}

// WithRoomMaker is ctx carrying free, which destroys a box its caller keeps
// idle (a Pool's, the one idle the longest) and reports whether there was
// one. A backend whose box finds no room calls MakeRoom before it waits
// for room or gives up.
func WithRoomMaker(ctx context.Context, free func(context.Context) bool) context.Context {
	return context.WithValue(ctx, roomMakerKey{}, free)
}

// MakeRoom destroys an idle box ctx's room maker keeps (WithRoomMaker),
// and reports whether there was one: its room is being freed.
func MakeRoom(ctx context.Context) bool {
	free, _ := ctx.Value(roomMakerKey{}).(func(context.Context) bool)
	return free != nil && free(ctx)
}

// Capabilities are what a Backend declares about its boxes. Nothing else
// says it: the Pool reads Reusable, and the conformance suite
// (sandbox/sandboxtest) holds every backend to what it declares. A backend
// must never declare more than it has.
type Capabilities struct {
	// Isolated: bots cannot reach the host or each other. Memory is
	// enforced, writes outside the game and scratch directories fail, every
	// process of the bot dies after its turn, the box has IPC and a /dev/shm
	// of its own, the network and the engine's or cluster's credentials are
	// out of reach, and a bot that kills everything it sees kills only
	// itself. Docker and Kubernetes are; local (plain processes) is not.
	Isolated bool
	// Reusable: a box may be reset (Box.Reset, which proves it as clean as a
	// new one) and handed out again for another game; otherwise the Pool
	// destroys each box after its game. Docker under runc, Kubernetes without
	// a RuntimeClass and local are; Docker under gVisor is not (a reset
	// cannot see the bot's IPC objects there), nor a Pod under a RuntimeClass
	// of its own.
	Reusable bool
	// OOMTakesTheBox: an out-of-memory kill may take the whole box, not only
	// the bot (under gVisor the host's OOM killer picks gVisor's kernel,
	// which holds the bot's memory). Every later turn of that box is then
	// reported out of memory too, never as a fault of the sandbox.
	OOMTakesTheBox bool
}

// ErrBoxClosed is returned by a Box used after Close or after its runtime died.
var ErrBoxClosed = errors.New("sandbox: box is closed")

// ErrHostStalled is the fault of a turn that reached WallCap because the
// host kept the bot waiting for a CPU.
var ErrHostStalled = errors.New("the host was too busy")

// HostStalled is the ErrHostStalled a backend returns for a turn (or a
// question to a bot that lives for the game) that lasted wall in all: limit
// was the bot's own time, and wait of the turn was the host keeping the bot
// from a CPU.
func HostStalled(wait, wall, limit time.Duration) error {
	return fmt.Errorf("%w: it kept the bot waiting for a CPU for %v of the %v its turn lasted (limit %v)",
		ErrHostStalled, wait.Round(time.Millisecond), wall.Round(time.Millisecond), limit)
}

// Fault is a sandbox or host failure, never the bot's doing.
type Fault struct {
	Op  string
	Err error
}

func (f *Fault) Error() string { return "sandbox: " + f.Op + ": " + f.Err.Error() }
func (f *Fault) Unwrap() error { return f.Err }

// Faultf wraps err as a Fault of operation op.
func Faultf(op string, err error) error {
	if err == nil {
		return nil
	}
	var f *Fault
	if errors.As(err, &f) {
		return err
	}
	return &Fault{Op: op, Err: err}
}

// Exchange is one question to a session bot and its answer.
type Exchange struct {
	Line     string        `json:"line"`            // the answer, without its newline
	Early    string        `json:"early,omitempty"` // output written before the bot was asked
	Late     string        `json:"late,omitempty"`  // answers to earlier questions that timed out, discarded
	TimedOut bool          `json:"timedOut,omitempty"`
	TooLong  bool          `json:"tooLong,omitempty"` // the line exceeded the cap; Line holds its start
	Exited   bool          `json:"exited,omitempty"`  // stdout closed or the process ended before answering
	Wall     time.Duration `json:"wall"`              // from the question to the answer, next to the bot
	// HostWait, HostWaitError and HostStalled are a Report's, for the
	// question: the deadline was moved past the host's wait for a CPU.
	HostWait      time.Duration `json:"hostWait,omitempty"`
	HostWaitError string        `json:"hostWaitError,omitempty"`
	HostStalled   bool          `json:"hostStalled,omitempty"`
}

// Session is one bot process that lives for a whole match and speaks lines on
// stdin and stdout. Between questions the bot is paused, so it cannot use the
// CPU during its opponent's turn.
type Session interface {
	// Send queues one line for the bot's stdin and returns without waiting
	// for the bot: a paused bot, or one that does not read, never blocks the
	// match. Lines reach the bot in order, before the next question.
	Send(ctx context.Context, line string) error
	// Ask resumes the bot, writes line, waits up to timeout for one line of
	// output, and pauses the bot again. Output the bot wrote before it was asked
	// is reported in Early.
	Ask(ctx context.Context, line string, timeout time.Duration) (Exchange, error)
	// Stop kills every process of the bot and reports how it ended.
	Stop(ctx context.Context) (Report, error)
}

// SessionBox is a Box that can also run a long-lived session bot.
type SessionBox interface {
	Box
	// StartSession starts the bot with args (GameDirToken is replaced) in the
	// game directory, stdin and stdout connected to the session.
	StartSession(ctx context.Context, args []string) (Session, error)
}

// MaxLine caps one line from a session bot.
const MaxLine = 64 * 1024

// StartFailure is a session bot that could not be started at all (exec format
// error, permission denied): the bot's fault, not the sandbox's.
type StartFailure struct{ Reason string }

func (s *StartFailure) Error() string { return s.Reason }

// WallCap is the longest a turn with the given time limit may last on the
// wall clock when the host kept the bot waiting for a CPU: its deadline is
// moved past the host's wait (a bot is timed by its own time, not the
// host's load) up to three times the limit and two seconds more. A turn that reaches
// it with the bot's own time still short of the limit is the host's fault
// (Report.HostStalled): the game is played again, never charged to the bot.
func WallCap(limit time.Duration) time.Duration { return 3*limit + 2*time.Second }
