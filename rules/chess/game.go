package chess

import (
	"fmt"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Game is standard chess as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return options.Game }

// Title implements rules.Game.
func (Game) Title() string { return "standard chess (Frieda line protocol)" }

// options is every rule option, stated once.
var options = rules.OptionTable[Options]{Game: "chess", Specs: []rules.OptionSpec[Options]{
	{Name: "fen", Default: "", Kind: rules.Text("a FEN"),
		Field: func(o *Options) any { return &o.FEN },
		Doc:   "starting position (default: the standard one)"},
	{Name: "fiftyMoves", Default: "true", Kind: rules.Bool(),
		Field: func(o *Options) any { return &o.FiftyMoves },
		Doc:   "draw automatically after 50 moves each without a capture or pawn move"},
	{Name: "repetition", Default: "3", Kind: rules.Repetition(10),
		Field: func(o *Options) any { return &o.Repetition },
		Doc:   "draw on this occurrence of the same position (0: off)"},
	{Name: "maxPlies", Default: "400", Kind: rules.Int(0, 10000),
		Field: func(o *Options) any { return &o.MaxPlies },
		Doc:   "draw after this many plies (0: no limit)"},
	{Name: "gameTime", Default: "120s", Kind: rules.Duration(),
		Field: func(o *Options) any { return &o.GameTime },
		Doc:   "each side's time bank for the game"},
	{Name: "moveTime", Default: "10s", Kind: rules.Duration(),
		Field: func(o *Options) any { return &o.MoveTime },
		Doc:   "the longest one move may take (within the bank)"},
}}

// DefaultOptions are the rulings' defaults.
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
	return NewState(o)
}

// FromView implements rules.Game: the view is a FEN (or a whole request line,
// whose last six fields are the FEN).
func (Game) FromView(opts map[string]string, view []byte) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(view))
	if len(f) > 6 {
		f = f[len(f)-6:]
	}
	o.FEN = strings.Join(f, " ")
	if _, err := position(o.FEN); err != nil {
		return nil, fmt.Errorf("not a FEN position: %v", err)
	}
	return NewState(o)
}

// LegalJSON implements rules.Lister.
func (s *State) LegalJSON() ([]byte, error) { return rules.MovesJSON(s) }

// Protocol implements rules.Game.
func (Game) Protocol() rules.Protocol {
	d := DefaultOptions()
	return rules.Protocol{Lines: &rules.LineProtocol{
		MoveTime:       d.MoveTime,
		GameTime:       d.GameTime,
		MoveTimeOption: "moveTime",
		GameTimeOption: "gameTime",
		LateMove:       "forfeit",
		Codec:          codec{},
	}}
}

type codec struct{}

// Start sends each side its colour.
func (codec) Start(rules.State) [2][]string { return rules.Colours() }

// Request is "<move> <time> <time> <state>": the opponent's previous move (NONE
// at the start), the mover's seconds left, the opponent's, and the FEN.
func (codec) Request(st rules.State, _ string, c rules.Clock) ([2][]string, string) {
	s := st.(*State)
	return [2][]string{}, fmt.Sprintf("%s %s %s %s", s.Last(), seconds(c.Mine), seconds(c.Theirs), s.FEN())
}

// Reply is "<status> <time>" to the mover: A (accepted) or D (denied), and
// the seconds left.
func (codec) Reply(_ rules.State, mover rules.Side, accepted bool, c rules.Clock) [2][]string {
	status := "A"
	if !accepted {
		status = "D"
	}
	var out [2][]string
	out[mover] = []string{status + " " + seconds(c.Mine)}
	return out
}

// End sends nothing: the bots are stopped.
func (codec) End(rules.State) [2][]string { return [2][]string{} }

// Explain implements rules.Game.
func (Game) Explain() string { return explanation }

const explanation = `Standard chess (the Frieda competition's protocol)

RULES
  Standard chess with castling, en passant and promotion. Checkmate wins;
  stalemate, insufficient material, the third occurrence of a position
  [repetition, 3], 50 moves each without a capture or pawn move [fiftyMoves,
  true] and 400 plies [maxPlies, 400] are draws, applied automatically.

PROTOCOL
` + rules.LineBotProcess + `
  1. At the start the bot reads its colour: "white" or "black".
  2. On its turn it reads one line:  <move> <time> <time> <state>
       <move>   the opponent's previous move, or NONE when White opens
       <time>   whole seconds left in the bot's own time bank, then the
                opponent's (0-1000, rounded down)
       <state>  the position as FEN (all six fields)
     The specification announces "three space separated strings" and lists
     four; arena sends the four it lists.
  3. It answers with one line: a move of four characters, the from and to
     squares (e2e4), or O-O / O-O-O to castle. A promotion takes a fifth
     letter (e7e8q, e7e8n); four characters promote to a queen. Moves arena
     sends as <move> use the same form. e1g1-style castling, 0-0 and upper
     case are accepted too.
  4. It then reads "<status> <time>": A if the move was accepted, D if it
     was denied, and its seconds left after this move.
  Then it waits for its next turn (step 2). Between its turns the bot is
  paused: it cannot think on the opponent's time, and lines sent to it
  meanwhile wait in its input.

  The end: no line announces it. When the game is over (checkmate, a draw,
  a fault) both bots are stopped; the loser of a checkmate is never sent the
  mating move. A bot must not wait for a closing line.

TIME
  Each side has a bank for the game [gameTime, 120s], and one move may take
  at most [moveTime, 10s] (less when the bank holds less); both are measured
  next to the bot, from writing the question to reading the answer's
  newline.

FAULTS
  A bot that runs out of time, answers with something that is not a move,
  plays an illegal move, writes before it is asked or exits loses the game
  the game: under the default forfeit policy it is sent "D <time>" and the
  game is over. Under --on-fault random-move a random legal move is played
  for it instead, it is sent "D <time>", and the game goes on.

EXAMPLE
  A whole game: 1. f3 e5 2. g4 Qh4#, each answer taking 2.5 s. "W<" is a
  line White's bot reads, "W>" the line it writes; "B" is Black's. Each
  bot sees only its own lines, in this order.
  W< white
  B< black
  W< NONE 120 120 rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
  W> f2f3
  W< A 117
  B< f2f3 120 117 rnbqkbnr/pppppppp/8/8/8/5P2/PPPPP1PP/RNBQKBNR b KQkq - 0 1
  B> e7e5
  B< A 117
  W< e7e5 117 117 rnbqkbnr/pppp1ppp/8/4p3/8/5P2/PPPPP1PP/RNBQKBNR w KQkq e6 0 2
  W> g2g4
  W< A 115
  B< g2g4 117 115 rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2
  B> d8h4
  B< A 115
  Checkmate: both bots are stopped; White is never sent d8h4.
`
