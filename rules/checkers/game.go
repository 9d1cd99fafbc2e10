package checkers

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Adapter is the Python program that runs a team's bot class inside the
// sandbox: it imports the module, and answers each request line by calling
// bot().move(plansza, ruchy) with the board as a numpy array.
//
//go:embed adapter.py
var Adapter []byte

// AdapterName is the adapter's file name in the bot directory.
const AdapterName = "arena_checkers_adapter.py"

// Game is English checkers as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return options.Game }

// Title implements rules.Game.
func (Game) Title() string { return "English checkers (Python bot classes)" }

// options is every rule option, stated once.
var options = rules.OptionTable[Options]{Game: "checkers", Specs: []rules.OptionSpec[Options]{
	{Name: "menCaptureBackward", Default: "true", Kind: rules.Bool(),
		Field: func(o *Options) any { return &o.MenCaptureBackward },
		Doc:   "men capture backwards as well as forwards (the framework's rule); false is standard English checkers"},
	{Name: "noProgressMoves", Default: "20", Kind: rules.Int(0, 200),
		Field: func(o *Options) any { return &o.NoProgressMoves },
		Doc:   "draw after this many moves of each side without a man move or a capture (0: off)"},
	{Name: "repetition", Default: "3", Kind: rules.Repetition(10),
		Field: func(o *Options) any { return &o.Repetition },
		Doc:   "draw on this occurrence of the same position (0: off)"},
	{Name: "maxPlies", Default: "500", Kind: rules.Int(0, 10000),
		Field: func(o *Options) any { return &o.MaxPlies },
		Doc:   "draw after this many turns (0: no limit)"},
	{Name: "gameTime", Default: "60s", Kind: rules.Duration(),
		Field: func(o *Options) any { return &o.GameTime },
		Doc:   "each side's time bank for the game"},
	{Name: "moveTime", Default: "10s", Kind: rules.Duration(),
		Field: func(o *Options) any { return &o.MoveTime },
		Doc:   "the longest one move may take (within the bank)"},
	{Name: "start", Default: "", Kind: rules.Text("moves or a PDN FEN"),
		Field: func(o *Options) any { return &o.Start },
		Doc:   "where the game begins: moves in standard notation from the initial position (9-13 22-18 6-9) or a PDN FEN (B:W21,...:B1,...); empty: the initial position"},
}}

// DefaultOptions are the framework's rules.
func DefaultOptions() Options { return options.Defaults() }

// ParseOptions reads options over the defaults.
func ParseOptions(m map[string]string) (Options, error) { return options.Parse(m) }

// Options implements rules.Game.
func (Game) Options() []rules.Option { return options.Options() }

// OptionTable implements rules.OptionTabler.
func (Game) OptionTable() rules.OptionSet { return options }

// New implements rules.Game.
func (Game) New(opts map[string]string, _ uint64) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return StartAt(o)
}

// FromView implements rules.Game: a request line (or its board alone), taken
// with the mover as the first player. A capture in progress is not visible
// on the board: when the line lists the moves, only those are legal.
func (Game) FromView(opts map[string]string, view []byte) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	board := strings.TrimSpace(string(view))
	moves := ""
	for _, f := range strings.Fields(board) {
		if v, ok := strings.CutPrefix(f, "board="); ok {
			board = v
		}
		if v, ok := strings.CutPrefix(f, "moves="); ok {
			moves = v
		}
	}
	if len(board) != 64 {
		return nil, fmt.Errorf("board: want 64 characters, got %d", len(board))
	}
	s := NewState(o)
	for i := 0; i < 64; i++ {
		r, c := i/8, i%8
		ch := board[i]
		switch {
		case (r+c)%2 == 0 && ch == '-':
		case (r+c)%2 == 1 && ch >= '0' && ch <= '4':
			s.board[r][c] = int8(ch - '0')
		default:
			return nil, fmt.Errorf("board: square %d%d holds %q", r, c, ch)
		}
	}
	if moves != "" {
		list := strings.Split(moves, ",")
		if len(list) == 1 || allFrom(list) {
			if m, err := s.ParseMove([]byte(list[0])); err == nil && m.(Move).jump() && len(list) < len(s.Moves()) {
				q := m.(Move).From
				s.chain = &q
			}
		}
	}
	s.seen = map[string]int{}
	return s, nil
}

func allFrom(list []string) bool {
	for _, m := range list {
		if len(m) < 2 || m[:2] != list[0][:2] {
			return false
		}
	}
	return true
}

// LegalJSON implements rules.Lister.
func (s *State) LegalJSON() ([]byte, error) { return rules.MovesJSON(s) }

// Protocol implements rules.Game.
func (Game) Protocol() rules.Protocol {
	d := DefaultOptions()
	return rules.Protocol{Lines: &rules.LineProtocol{
		MoveTime: d.MoveTime, GameTime: d.GameTime, MoveTimeOption: "moveTime", GameTimeOption: "gameTime", LateMove: "forfeit", AutoSingle: true, Codec: codec{},
	}}
}

type codec struct{}

func (codec) Start(rules.State) [2][]string { return rules.Colours() }

// Request is "board=<64 characters> moves=<r1c1r2c2,...>", both from the
// mover's side (see State.View).
func (codec) Request(st rules.State, _ string, _ rules.Clock) ([2][]string, string) {
	s := st.(*State)
	view, _ := s.View(s.ToMove())
	var moves []string
	for _, m := range s.LegalMoves() {
		moves = append(moves, m.String())
	}
	return [2][]string{}, "board=" + string(view) + " moves=" + strings.Join(moves, ",")
}

func (codec) Reply(rules.State, rules.Side, bool, rules.Clock) [2][]string { return [2][]string{} }

func (codec) End(rules.State) [2][]string { return [2][]string{} }

var classBot = regexp.MustCompile(`(?m)^class\s+bot\b`)

// Package implements rules.Packager: a checkers submission is a Python module
// defining class bot; the adapter is added and runs it. A submission without
// such a module is taken to be an executable that speaks the line protocol.
func (Game) Package(files map[string][]byte) (map[string][]byte, string, error) {
	var modules []string
	for name, data := range files {
		if strings.HasSuffix(name, ".py") && classBot.Match(data) {
			modules = append(modules, name)
		}
	}
	sort.Strings(modules)
	switch len(modules) {
	case 0:
		return nil, "", nil // no bot class: an executable speaking the line protocol itself
	case 1:
	default:
		return nil, "", fmt.Errorf("%d Python files define `class bot` (%s): keep one", len(modules), strings.Join(modules, ", "))
	}
	out := map[string][]byte{AdapterName: Adapter}
	return out, AdapterName, nil
}

// Submission implements rules.Packager.
func (Game) Submission() string {
	return "submit one Python module defining class bot with a move(self, plansza, ruchy) method"
}

// Needs implements rules.Packager: the adapter runs the class under python3
// and hands it the board as a numpy array.
func (Game) Needs() []string { return []string{"python3", "python3-numpy"} }

// Explain implements rules.Game.
func (Game) Explain() string { return explanation }

const explanation = `English checkers (the university tournament framework)

BOARD: 8x8; pieces stand on the dark squares, (row + col) odd. The first player
("white" on arena's command line, the framework's player 1) starts on rows 5-7
and moves up; the second starts on rows 0-2. Every board a bot sees is from
its own side: its pieces at the bottom, moving up.

RULES (the framework's):
  - Men move one square diagonally forward; kings one square in any diagonal
    direction (not flying kings).
  - Captures are mandatory, with a free choice among them (no maximum rule).
    Men capture forwards and backwards [menCaptureBackward, true; false is
    standard English checkers].
  - After a capture, if the same piece can capture again it must: each jump is
    a turn of its own, and the bot is asked again with only those jumps.
  - A man reaching the far row becomes a king; that ends its turn.
  - A side with no legal move loses.
  - A move that is the only legal one is played without asking the bot.
  - Draws: the third occurrence of a position [repetition, 3]; 20 moves of
    each side without a man moving or a capture [noProgressMoves, 20]; 500
    turns [maxPlies, 500].
  - A game may begin elsewhere than the initial position [start, empty]: an
    opening's moves in standard notation (squares 1-32, the first player's
    men on 1-12), such as an ACF three-move ballot, or a PDN FEN. The bots
    are asked from there, as from any position; a tournament or a duel
    plays each opening twice, sides swapped.
  - Not implemented: the framework's overtime (random piece removal after a
    1-1 tie); play it as an extra pairing if the event needs it.

TIME: about a minute per game [gameTime, 60s] and at most [moveTime, 10s] per
move (less when the bank holds less), measured next to the bot from writing
the question to reading the answer's newline. Running out of time, an answer
that is not one of the listed moves, a crash or writing before being asked
loses the game under the default forfeit policy; under --on-fault
random-move a random legal move is played for the bot instead and the game
goes on.

BOTS are Python classes, exactly as in the framework:
    class bot():
        def move(self, plansza, ruchy):   # returns one element of ruchy
plansza is an 8x8 numpy array (dtype object) from the bot's side: None on
light squares, 0 empty, 1 own man, 2 opponent's man, 3 own king, 4 opponent's
king. ruchy is the list of legal moves ((r1, c1), (r2, c2)), in the bot's own
coordinates (row 0 at the far side). Submit the module (one .py file
defining class bot, plus any files it imports); arena adds an adapter that
imports it and speaks the line protocol below, so the class runs unchanged.
The adapter makes one bot() for the whole game and calls its move for each
question, so the object may keep what it learns between moves. Anything the
bot prints goes to stderr; an exception in move is printed there too and
the adapter answers "error", which loses the game as invalid output. The
image needs python3 and python3-numpy (the offline test base has both).

PROTOCOL (what the adapter speaks; a bot may also speak it directly, as an
executable with no class bot in its submission)
  The bot is one process for the whole game, started with no arguments (in
  official matches /bot/<executable>, working directory /game, the
  submission's files read-only in /bot). It reads lines on stdin and writes
  lines on stdout. Every line ends with a newline (a carriage return before
  it is ignored); an answer counts when its newline arrives, so flush stdout
  after each one. The first answer may take 1 s longer than the move time,
  since the program starts inside its clock (the time bank is charged as
  usual). stderr is free for logs (its last 8 KiB are kept).
  1. At the start the bot reads its colour: "white" (the first player) or
     "black".
  2. On its turn it reads one line: "board=<64 characters> moves=<list>".
     The board is row by row from the bot's side, its own pieces moving up
     (towards row 0): '-' a light square, '0' empty, '1' own man, '2' the
     opponent's man, '3' own king, '4' the opponent's king. The list holds
     every legal move, comma-separated, each as four digits r1 c1 r2 c2 in
     the same coordinates: "5041" moves the piece on row 5, column 0 to row
     4, column 1.
  3. It answers with one line: one of the listed moves ("5041"; spaces,
     commas, brackets and '-' between the digits are ignored).
  Nothing is sent back, and the opponent's moves are not announced: the
  board in the next question is the position. A move that is the only legal
  one is played without asking, so a bot is not asked on every turn. In a
  capture chain the same bot is asked again at once with only the jumps of
  the capturing piece. Between its turns the bot is paused: it cannot think
  on the opponent's time.
  The end: no line announces it. When the game is over both bots are
  stopped.

EXAMPLE
  The first nine turns of a game. "W<" is a line White's bot reads, "W>" the
  line it writes; "B" is Black's. Each bot sees only its own lines, in this
  order; "..." means the game goes on. After White's 7263, Black's only
  legal move, the capture 4123, is played without asking it; that man can
  capture again, so Black is asked at once, with only its jumps listed.
  W< white
  B< black
  W< board=-2-2-2-22-2-2-2--2-2-2-20-0-0-0--0-0-0-01-1-1-1--1-1-1-11-1-1-1- moves=5041,5241,5243,5443,5445,5645,5647
  W> 5243
  B< board=-2-2-2-22-2-2-2--2-2-0-20-0-2-0--0-0-0-01-1-1-1--1-1-1-11-1-1-1- moves=5647,5645,5445,5443,5243,5241,5041
  B> 5647
  W< board=-2-2-2-22-2-2-2--0-2-2-22-0-0-0--0-1-0-01-0-1-1--1-1-1-11-1-1-1- moves=4332,4334,5041,5445,5645,5647,6152,6352
  W> 6352
  B< board=-2-2-2-22-2-0-2--2-2-2-20-0-2-0--0-0-0-11-1-1-0--1-1-1-11-1-1-1- moves=6756,6556,5445,5443,5243,5241,5041,4736
  B> 6756
  W< board=-2-2-2-20-2-2-2--2-2-2-22-0-0-0--0-1-0-01-1-1-1--1-0-1-11-1-1-1- moves=4332,4334,5041,5241,5445,5645,5647,7263,7463
  W> 5445
  B< board=-2-2-2-22-2-0-2--2-0-2-20-2-2-0--0-0-0-11-1-1-1--1-1-1-01-1-1-1- moves=7667,5645,5445,5443,5243,5241,5041,4736
  B> 5241
  W< board=-2-2-2-20-2-2-2--2-2-0-22-0-0-2--0-1-1-01-1-0-1--1-0-1-11-1-1-1- moves=4332,4334,4534,5041,5241,5647,6554,7263,7463
  W> 7263
  B< board=-2-2-0-22-2-2-2--2-1-2-20-0-2-0--0-0-0-11-0-1-1--1-1-1-01-1-1-1- moves=2345,2305
  B> 2345
  ...
`
