// Package rules is the referee's side of arena: the Game interface every game
// implements, and the verdicts a turn can end in.
//
// A game is two players taking turns. Each turn the mover receives a view of the
// state (possibly fogged), answers in the game's wire format, and the game parses
// the answer, judges it against the true state and applies it. The game owns its
// seeded random source, so a match is replayed exactly from its seed and moves.
//
// Packages under rules are pure: no processes, no files, no clocks. A wrong ruling
// decides a real match, so each game is tested on its own.
package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Side is a player. White (or "first") moves first.
type Side int8

// The sides. NoSide is the winner of a draw.
const (
	White  Side = 0
	Black  Side = 1
	NoSide Side = -1
)

// Sides lists both players in turn order.
var Sides = [2]Side{White, Black}

// Colours is each side's colour as its only line, the opening most line
// games send.
func Colours() [2][]string { return [2][]string{{White.String()}, {Black.String()}} }

// Other is the opponent.
func (s Side) Other() Side { return 1 - s }

func (s Side) String() string {
	switch s {
	case White:
		return "white"
	case Black:
		return "black"
	}
	return "none"
}

// ParseSide reads "white" or "black".
func ParseSide(s string) (Side, error) {
	switch strings.ToLower(s) {
	case "white", "w":
		return White, nil
	case "black", "b":
		return Black, nil
	}
	return NoSide, fmt.Errorf("side: want white or black, got %q", s)
}

// Verdict is how a turn ended, as the harness judges it.
type Verdict string

// The verdicts of the table in docs/codeclash.md, shared by all games.
const (
	OK                Verdict = "ok"
	IllegalMove       Verdict = "illegal-move"
	InvalidOutput     Verdict = "invalid-output"
	BotRejectedState  Verdict = "bot-rejected-state"
	BotError          Verdict = "bot-error"
	Crash             Verdict = "crash"
	OutOfMemory       Verdict = "out-of-memory"
	Timeout           Verdict = "timeout"
	DataFileViolation Verdict = "data-file-violation"
	// BuildError is a bot handed in as source that did not build.
	BuildError Verdict = "build-error"
)

// Outcome is the state of the game's result.
type Outcome struct {
	Over   bool   `json:"over"`
	Winner Side   `json:"winner"` // NoSide for a draw
	Reason string `json:"reason,omitempty"`
}

// Outcome reasons that games share.
const (
	ReasonKingCaptured = "king-captured"
	ReasonMaxPlies     = "max-plies"
	ReasonNoLegalMove  = "no-legal-move"
	ReasonRepetition   = "repetition"
	ReasonCheckmate    = "checkmate"
	ReasonStalemate    = "stalemate"
	ReasonFiftyMoves   = "fifty-move-rule"
	ReasonMaterial     = "insufficient-material"
	ReasonNoProgress   = "no-progress"
)

// Perfter is implemented by games whose move generator can be checked against
// published perft counts: the number of leaf positions depth plies ahead.
type Perfter interface {
	Perft(depth int) int64
}

// Move is a game's own move type. String is a short human-readable form.
type Move interface {
	String() string
}

// State is one position of a game in progress. Apply mutates it; Clone copies.
type State interface {
	// ToMove is the side whose turn it is.
	ToMove() Side
	// Phase names the game's phase ("setup", "play").
	Phase() string
	// Turn counts the turns taken so far, every phase included.
	Turn() int
	// Plies counts the turns of the play phase (the result's "plies").
	Plies() int
	// View is what side receives when asked to move, in the game's wire format.
	View(side Side) ([]byte, error)
	// ParseMove reads the mover's answer. A *FormatError means the answer is not
	// a move at all (invalid-output); an *IllegalError that it is a well-formed
	// move the rules forbid.
	ParseMove(answer []byte) (Move, error)
	// Judge returns nil if m is legal for the side to move, else an *IllegalError.
	Judge(m Move) error
	// Apply judges m and plays it.
	Apply(m Move) error
	// LegalMoves lists every legal move of the side to move, in a fixed order.
	LegalMoves() []Move
	// EncodeMove writes m in the wire format a bot would have sent.
	EncodeMove(m Move) []byte
	// Outcome says whether the game is over and how.
	Outcome() Outcome
	// Clone returns an independent copy.
	Clone() State
}

// Option is one rule a tournament may set differently.
type Option struct {
	Name    string
	Default string
	Values  string // what it accepts, for help text
	Doc     string
}

// Game makes states of one game and says how its bots are run.
type Game interface {
	Name() string
	Title() string
	// Options lists the rule options and their defaults.
	Options() []Option
	// Explain is the rulings, for participants.
	Explain() string
	// New starts a game. opts holds rule options by name; unknown names and bad
	// values are errors. The seed drives every random decision of the game.
	New(opts map[string]string, seed uint64) (State, error)
	// FromView rebuilds a state from what a bot was given, for the side to move;
	// facts the view lacks are decided as the game documents.
	FromView(opts map[string]string, view []byte) (State, error)
	// Protocol says how a bot of this game is run.
	Protocol() Protocol
}

// Protocol says how bots of a game are run. Exactly one field is set.
type Protocol struct {
	Files *FileProtocol
	Lines *LineProtocol
}

// LineProtocol runs one bot process for the whole match, speaking lines on
// stdin and stdout: the harness sends the Start lines, then for each turn a
// Request line that the bot answers with one line, then the Reply lines, and
// the End lines when the game is over.
type LineProtocol struct {
	// MoveTime caps one answer; GameTime is each side's time bank for the whole
	// game (zero: none). Both are measured next to the bot. They are the
	// defaults of the rule options named MoveTimeOption and GameTimeOption
	// (empty: the game has no such option).
	MoveTime       time.Duration
	GameTime       time.Duration
	MoveTimeOption string
	GameTimeOption string
	// LateMove is what happens to a bot that does not answer in time:
	// "forfeit", or "random" (a random legal move is played for it and the game
	// goes on, as ACM's rules say).
	LateMove string
	// AutoSingle plays a move without asking when it is the only legal one.
	AutoSingle bool
	Codec      LineCodec
}

// Clock is the time left in each side's bank when a question is asked.
type Clock struct {
	Mine, Theirs time.Duration
}

// LineCodec writes a game's lines. Each method says which lines go to which
// side; the harness only delivers them, in order, and times nothing but the
// wait for the answer to the question.
type LineCodec interface {
	// Start is what each side is sent when the match starts.
	Start(st State) [2][]string
	// Request is the question to the side to move in st; last is the
	// opponent's previous move in wire form ("" when there is none). before
	// lists lines each side is sent first (news between turns).
	Request(st State, last string, clock Clock) (before [2][]string, question string)
	// Reply is what each side is sent once the mover's answer was judged: st
	// is the state after the move played (unchanged when a fault ended the
	// game); accepted says whether the bot's own answer was the move played;
	// clock is the mover's.
	Reply(st State, mover Side, accepted bool, clock Clock) [2][]string
	// End is what each side is sent when the game is over.
	End(st State) [2][]string
}

// FileProtocol runs a fresh bot process per turn: the view is written to a file
// in the bot's game directory, the path is its only argument, and it answers by
// writing a file there and exiting.
type FileProtocol struct {
	StateFile    string
	MoveFile     string
	MaxMoveBytes int64
	// ExitVerdicts maps non-zero exit codes the game gives a meaning to; exit 0
	// means "judge my move" and any other code is a crash.
	ExitVerdicts map[int]Verdict
	// DataFiles is how many entries besides StateFile and MoveFile may be left in
	// the game directory, each a regular file of at most MaxDataFileBytes.
	DataFiles        int
	MaxDataFileBytes int64
}

// FormatError is an answer that is not a move at all.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return e.Msg }

// IllegalError is a well-formed move the rules forbid.
type IllegalError struct{ Msg string }

func (e *IllegalError) Error() string { return e.Msg }

// Formatf returns a *FormatError.
func Formatf(format string, a ...any) error { return &FormatError{fmt.Sprintf(format, a...)} }

// Illegalf returns an *IllegalError.
func Illegalf(format string, a ...any) error { return &IllegalError{fmt.Sprintf(format, a...)} }

// VerdictOf classifies an error from ParseMove, Judge or Apply.
func VerdictOf(err error) Verdict {
	var fe *FormatError
	var ie *IllegalError
	switch {
	case err == nil:
		return OK
	case errors.As(err, &fe):
		return InvalidOutput
	case errors.As(err, &ie):
		return IllegalMove
	}
	return InvalidOutput
}

var registry = map[string]Game{}

// Register makes a game available by name. Games register themselves in init.
func Register(g Game) {
	if _, dup := registry[g.Name()]; dup {
		panic("rules: game registered twice: " + g.Name())
	}
	registry[g.Name()] = g
}

// Lookup finds a registered game.
func Lookup(name string) (Game, error) {
	if g, ok := registry[name]; ok {
		return g, nil
	}
	return nil, fmt.Errorf("unknown game %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the registered games.
func Names() []string {
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lister is implemented by states that describe their legal moves as JSON, in
// the shape `arena rules legal` prints.
type Lister interface {
	LegalJSON() ([]byte, error)
}

// Renderer is implemented by states that can draw themselves for a terminal.
type Renderer interface {
	Render() string
}

// ParseRuleFlags reads "name=value" pairs into an options map.
func ParseRuleFlags(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("rule option %q: want name=value", p)
		}
		out[k] = v
	}
	return out, nil
}

// Packager is implemented by games whose submissions are not executables but,
// say, a module run by an adapter: Package returns the files to add and the
// name of the file to execute, or an empty entry when the submission should be
// run as an ordinary executable.
type Packager interface {
	Package(files map[string][]byte) (extra map[string][]byte, entry string, err error)
	// Submission tells a participant what to hand in when Package refuses a
	// submission.
	Submission() string
	// Needs lists what the runtime image must offer the adapter, as the image
	// probe names it ("python3", "python3-numpy").
	Needs() []string
}

// Numbered is implemented by states whose wire format numbers turns its own
// way (Code Clash's setupStep and turnNumber); the transcript records those
// numbers beside the ply. Other games record the ply as the turn number.
type Numbered interface {
	SetupStep() int
	TurnNumber() int
}

// Position is a prepared position a submission is checked on.
type Position struct {
	Label string
	State State // the true position; the side to move is asked
}

// Exerciser is implemented by games that offer `arena validate` positions
// covering every kind of turn a bot must answer, for each side.
type Exerciser interface {
	Positions(seed uint64) [2][]Position
}

// MovesJSON is the `arena rules legal` output of a line game: the legal moves
// in wire form.
func MovesJSON(st State) ([]byte, error) {
	moves := []string{}
	for _, m := range st.LegalMoves() {
		moves = append(moves, m.String())
	}
	out, err := json.Marshal(map[string]any{"moves": moves})
	return append(out, '\n'), err
}

// Documents a submission may have to hold beside what runs.
const (
	DocSource = "source" // every source file the bot is built from
	DocReadme = "readme" // a README.md or README.txt
)

// Docs are every document a submission may be asked for.
var Docs = []string{DocSource, DocReadme}

// Documented is implemented by games whose rules ask every submission for
// documents beside what runs (its source, a README). A submission without
// them fails its validation unless an event relaxes that; for other games
// their absence only warns.
type Documented interface {
	Documents() []string
}

// Documents are the documents g's rules ask a submission for.
func Documents(g Game) []string {
	if d, ok := g.(Documented); ok {
		return d.Documents()
	}
	return []string{}
}
