package checkers

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

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
func (Game) Name() string { return "checkers" }

// Title implements rules.Game.
func (Game) Title() string { return "English checkers (Python bot classes)" }

// Options implements rules.Game.
func (Game) Options() []rules.Option {
	return []rules.Option{
		{Name: "menCaptureBackward", Default: "true", Values: "true|false", Doc: "men capture backwards as well as forwards (the framework's rule); false is standard English checkers"},
		{Name: "noProgressMoves", Default: "20", Values: "0-200", Doc: "draw after this many moves of each side without a man move or a capture (0: off)"},
		{Name: "repetition", Default: "3", Values: "0 or 2-10", Doc: "draw on this occurrence of the same position (0: off)"},
		{Name: "maxPlies", Default: "500", Values: "0-10000", Doc: "draw after this many turns (0: no limit)"},
		{Name: "gameTime", Default: "60s", Values: "a duration", Doc: "each side's time bank for the game"},
		{Name: "moveTime", Default: "10s", Values: "a duration", Doc: "the longest one move may take (within the bank)"},
	}
}

// ParseOptions reads options over the defaults.
func ParseOptions(m map[string]string) (Options, error) {
	o := DefaultOptions()
	if err := rules.CheckOptions(Game{}, m); err != nil {
		return o, err
	}
	var err error
	for k, v := range m {
		switch k {
		case "menCaptureBackward":
			if o.MenCaptureBackward, err = rules.BoolOption(k, v); err != nil {
				return o, err
			}
		case "noProgressMoves":
			if o.NoProgressMoves, err = rules.IntOption(k, v, 0, 200); err != nil {
				return o, err
			}
		case "repetition":
			if o.Repetition, err = rules.RepetitionOption(k, v, 10); err != nil {
				return o, err
			}
		case "maxPlies":
			if o.MaxPlies, err = rules.IntOption(k, v, 0, 10000); err != nil {
				return o, err
			}
		case "gameTime", "moveTime":
			if err := rules.CheckDuration(k, v); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// New implements rules.Game.
func (Game) New(opts map[string]string, _ uint64) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewState(o), nil
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
	return rules.Protocol{Lines: &rules.LineProtocol{
		MoveTime: 10 * time.Second, GameTime: 60 * time.Second, MoveTimeOption: "moveTime", GameTimeOption: "gameTime", LateMove: "forfeit", AutoSingle: true, Codec: codec{},
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
  - Not implemented: the framework's overtime (random piece removal after a
    1-1 tie); play it as an extra pairing if the event needs it.

TIME: about a minute per game [gameTime, 60s] and at most [moveTime, 10s] per
move, measured next to the bot.

BOTS are Python classes, exactly as in the framework:
    class bot():
        def move(self, plansza, ruchy):   # returns one element of ruchy
plansza is an 8x8 numpy array (dtype object) from the bot's side: None on
light squares, 0 empty, 1 own man, 2 opponent's man, 3 own king, 4 opponent's
king. ruchy is the list of legal moves ((r1, c1), (r2, c2)). Submit the module
(one .py file defining class bot, plus any files it imports); arena adds an
adapter that imports it and speaks the line protocol below, so the class runs
unchanged. Anything the bot prints goes to stderr. The image needs python3 and
python3-numpy (the offline test base has both).

LINE PROTOCOL (what the adapter speaks; a bot may also speak it directly):
  1. "white" or "black".
  2. On its turn: "board=<64 characters> moves=<r1c1r2c2,...>": the board row
     by row from the bot's side ('-' light square, '0'-'4' as above) and the
     legal moves as four digits each.
  3. The answer: four digits, e.g. "5041" (separators are ignored).
`
