package transcript

import (
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// Format is the transcript format version written in every header.
const Format = 1

// Bot identifies one side's bot.
type Bot struct {
	Name             string `json:"name"`
	SHA256           string `json:"sha256"` // of the executable that ran
	SubmissionSHA256 string `json:"submissionSha256,omitempty"`
	Source           string `json:"source,omitempty"`
	Entry            string `json:"entry,omitempty"` // executable's name in the submission
	// Language and Toolchain say how a bot handed in as source was built:
	// the source's extension and the compiler's or runtime's version.
	Language  string `json:"language,omitempty"`
	Toolchain string `json:"toolchain,omitempty"`
}

// Header is the first record: everything needed to re-run the match.
type Header struct {
	Format       int               `json:"format"`
	ArenaVersion string            `json:"arenaVersion"`
	Game         string            `json:"game"`
	Rules        map[string]string `json:"rules"`
	Seed         uint64            `json:"seed"`
	White        Bot               `json:"white"`
	Black        Bot               `json:"black"`
	OnFault      string            `json:"onFault"`
	Protocol     string            `json:"protocol"`
	Limits       sandbox.Limits    `json:"limits"`  // durations in nanoseconds
	Sandbox      map[string]string `json:"sandbox"` // backend, image, imageId, engine
	Host         map[string]string `json:"host"`
	StartedAt    string            `json:"startedAt"`
	// TimeControl is the line protocol's clock (line games only).
	TimeControl *TimeControl `json:"timeControl,omitempty"`
	// Evidence is the data-file storage policy the match ran under (file
	// games that keep data files).
	Evidence *Evidence `json:"evidence,omitempty"`
	// Opening is what each side of a line game was sent when it started.
	Opening *Lines `json:"opening,omitempty"`
	// SigningKey is the hex ed25519 public key that signs the footer, if any.
	SigningKey string `json:"signingKey,omitempty"`
	// Job names the game and attempt of a tournament this match was played
	// for, when it was: a transcript then cannot be handed in for another.
	Job *Job `json:"job,omitempty"`
}

// Job identifies one attempt at one game of one tournament.
type Job struct {
	Tournament string `json:"tournament,omitempty"` // a distributed tournament's name
	Game       int    `json:"game"`
	Attempt    int    `json:"attempt"`
	// Pair is the side-swapped pair of games the game belongs to (its two
	// games share the seed and the opening), and Opening the name of the
	// opening it started from; the rules hold the position itself.
	Pair    int    `json:"pair,omitempty"`
	Opening string `json:"opening,omitempty"`
}

// Lines is what each side of a line game was sent at one point, in order.
type Lines struct {
	White []string `json:"white,omitempty"`
	Black []string `json:"black,omitempty"`
}

// LinesOf records per-side lines, or nil when no side is sent any.
func LinesOf(sent [2][]string) *Lines {
	if len(sent[0]) == 0 && len(sent[1]) == 0 {
		return nil
	}
	return &Lines{White: sent[0], Black: sent[1]}
}

// Sides returns the lines per side, White first; nil holds none.
func (l *Lines) Sides() [2][]string {
	if l == nil {
		return [2][]string{}
	}
	return [2][]string{l.White, l.Black}
}

// DataFile is a game-directory file the bot kept, stored in blobs/ by hash
// unless NotKept: the evidence policy recorded its hash only.
type DataFile struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	NotKept bool   `json:"notKept,omitempty"`
	// Mode is the file's permission bits as the bot left them (octal, as
	// "0644"); a rerun restores the file with them, in the bot's name.
	Mode string `json:"mode,omitempty"`
}

// FileMode is the data file's recorded permission bits, 0644 when none were
// recorded (a transcript from before they were) or they do not parse.
func (d DataFile) FileMode() fs.FileMode {
	m, err := strconv.ParseUint(d.Mode, 8, 32)
	if err != nil || m == 0 || m > 0o777 {
		return 0o644
	}
	return fs.FileMode(m)
}

// ModeString writes permission bits as a DataFile records them.
func ModeString(m fs.FileMode) string {
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("%04o", uint32(m.Perm()))
}

// Turn is one bot invocation: what it was given, what it did, how it was judged.
type Turn struct {
	Ply        int    `json:"ply"` // 1-based over every turn, setup included
	Side       string `json:"side"`
	Phase      string `json:"phase"`
	SetupStep  int    `json:"setupStep,omitempty"`
	TurnNumber int    `json:"turnNumber"`

	State       string `json:"state"` // the exact state file given
	StateSHA256 string `json:"stateSha256"`
	// Answer is the exact answer file read back (nil when there was none).
	// Bytes that are not UTF-8 are kept in AnswerBase64 instead.
	Answer          *string `json:"answer"`
	AnswerBase64    string  `json:"answerBase64,omitempty"`
	AnswerType      string  `json:"answerType,omitempty"` // set when not a regular file
	AnswerSize      int64   `json:"answerSize"`
	AnswerTruncated bool    `json:"answerTruncated,omitempty"`

	// Early is what a line-protocol bot wrote before it was asked; Exited and
	// TooLong that it ended or answered with an overlong line; Auto that the
	// move was the only legal one and was played without asking.
	Early   string `json:"early,omitempty"`
	Late    string `json:"late,omitempty"` // late answers to earlier questions, discarded
	Exited  bool   `json:"exited,omitempty"`
	TooLong bool   `json:"tooLong,omitempty"`
	Auto    bool   `json:"auto,omitempty"`
	// Before is what each side of a line game was sent ahead of the question
	// (State holds the question); After what each was sent once the turn was
	// judged, the closing lines included.
	Before *Lines `json:"before,omitempty"`
	After  *Lines `json:"after,omitempty"`

	StartError string `json:"startError,omitempty"`
	ExitCode   int    `json:"exitCode"`
	Signal     int    `json:"signal,omitempty"`
	TimedOut   bool   `json:"timedOut,omitempty"`
	OOMKilled  bool   `json:"oomKilled,omitempty"`

	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Review  bool   `json:"review,omitempty"` // a claim that the state was malformed
	Move    string `json:"move,omitempty"`   // the bot's move as read
	// Played is the move applied, in the bot wire format; with Substituted it
	// is the random legal move the fault policy played for the bot.
	Played      string `json:"played,omitempty"`
	Substituted bool   `json:"substituted,omitempty"`

	WallMs float64 `json:"wallMs"` // measured next to the bot
	// HostWaitMs is how much of WallMs the host kept the bot waiting for a
	// CPU others held: the turn's deadline was moved past it, so the bot's
	// own time (WallMs - HostWaitMs) is what met or missed the limit.
	HostWaitMs float64 `json:"hostWaitMs,omitempty"`
	HarnessMs  float64 `json:"harnessMs"` // measured by the harness around the turn
	CPUMs      float64 `json:"cpuMs"`
	PeakMemory int64   `json:"peakMemory"`
	Survivors  int     `json:"survivors,omitempty"`

	DataFiles   []DataFile      `json:"dataFiles,omitempty"`
	GameDir     []sandbox.Entry `json:"gameDir"`
	StdoutBytes int64           `json:"stdoutBytes"`
	StderrBytes int64           `json:"stderrBytes"`
	StdoutTail  string          `json:"stdoutTail,omitempty"`
	StderrTail  string          `json:"stderrTail,omitempty"`
}

// Fault is a turn a bot got wrong.
type Fault struct {
	Ply     int    `json:"ply"`
	Side    string `json:"side"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Review  bool   `json:"review,omitempty"`
}

// BotRef names a bot in a result.
type BotRef struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Result is result.json, repeated in the footer.
type Result struct {
	Game   string  `json:"game"`
	White  BotRef  `json:"white"`
	Black  BotRef  `json:"black"`
	Winner string  `json:"winner"` // white, black, draw or none
	Reason string  `json:"reason"`
	Plies  int     `json:"plies"` // play plies
	Turns  int     `json:"turns"` // every turn, setup included
	Seed   uint64  `json:"seed"`
	Faults []Fault `json:"faults"`
	// Points is each side's score, White first, in games decided on points.
	Points      []int   `json:"points,omitempty"`
	AbortReason string  `json:"abortReason,omitempty"`
	DurationMs  float64 `json:"durationMs"`
}

// Forfeit is the fault that ended the game, if one did: a fault on the
// turn after the last one applied (the move of a bot that faulted is not
// played; a fault forgiven with a substitute move is applied and ends
// nothing).
func (r Result) Forfeit() (Fault, bool) {
	for i := len(r.Faults) - 1; i >= 0; i-- {
		if r.Faults[i].Ply > r.Turns {
			return r.Faults[i], true
		}
	}
	return Fault{}, false
}

// TurnsPlayed counts the turns the bots were asked for, as the transcript
// records them: every turn applied (Turns), and the one a forfeit ended
// the game on.
func (r Result) TurnsPlayed() int {
	if f, ok := r.Forfeit(); ok {
		return max(r.Turns, f.Ply)
	}
	return r.Turns
}

// Footer is the last record.
type Footer struct {
	Result     Result `json:"result"`
	FinishedAt string `json:"finishedAt"`
	// Sessions says how each side's bot process ended (line protocol only).
	Sessions []SessionEnd `json:"sessions,omitempty"`
	// Pruned lists the data-file blobs removed at the end of the match under
	// the "final" evidence policy (earlier versions of each side's file).
	Pruned []string `json:"pruned,omitempty"`
}

// SessionEnd is how a long-lived bot process ended.
type SessionEnd struct {
	Side       string  `json:"side"`
	ExitCode   int     `json:"exitCode"` // -1: still running, stopped by arena (or killed)
	Signal     int     `json:"signal,omitempty"`
	CPUMs      float64 `json:"cpuMs"`
	PeakMemory int64   `json:"peakMemory"`
	StderrTail string  `json:"stderrTail,omitempty"`
}

// Winners and the reason of an aborted match.
const (
	WinnerWhite   = "white"
	WinnerBlack   = "black"
	WinnerDraw    = "draw"
	WinnerNone    = "none"
	ReasonAborted = "aborted"
)

// TimeControl is a line game's clock and what a late bot costs.
type TimeControl struct {
	MoveTime time.Duration `json:"moveTime"` // nanoseconds
	GameTime time.Duration `json:"gameTime"` // nanoseconds; 0: no bank
	// StartTime is added to each side's first answer (nanoseconds): its
	// program starts inside that answer's clock.
	StartTime  time.Duration `json:"startTime,omitempty"`
	LateMove   string        `json:"lateMove"`
	AutoSingle bool          `json:"autoSingle,omitempty"`
}
