package chess

import (
	"fmt"
	"strings"
	"time"

	cc "github.com/corentings/chess/v2"

	"github.com/arenabots/arena/rules"
)

// Game is standard chess as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return "chess" }

// Title implements rules.Game.
func (Game) Title() string { return "standard chess (Frieda line protocol)" }

// Options implements rules.Game.
func (Game) Options() []rules.Option {
	return []rules.Option{
		{Name: "fen", Default: "", Values: "a FEN", Doc: "starting position (default: the standard one)"},
		{Name: "fiftyMoves", Default: "true", Values: "true|false", Doc: "draw automatically after 50 moves each without a capture or pawn move"},
		{Name: "repetition", Default: "3", Values: "0 or 2-10", Doc: "draw on this occurrence of the same position (0: off)"},
		{Name: "maxPlies", Default: "400", Values: "0-10000", Doc: "draw after this many plies (0: no limit)"},
		{Name: "gameTime", Default: "120s", Values: "a duration", Doc: "each side's time bank for the game"},
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
		case "fen":
			o.FEN = v
		case "fiftyMoves":
			if o.FiftyMoves, err = rules.BoolOption(k, v); err != nil {
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
	if _, err := cc.FEN(o.FEN); err != nil {
		return nil, fmt.Errorf("not a FEN position: %v", err)
	}
	return NewState(o)
}

// LegalJSON implements rules.Lister.
func (s *State) LegalJSON() ([]byte, error) { return rules.MovesJSON(s) }

// Protocol implements rules.Game.
func (Game) Protocol() rules.Protocol {
	return rules.Protocol{Lines: &rules.LineProtocol{
		MoveTime:       10 * time.Second,
		GameTime:       120 * time.Second,
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

The bot is one process for the whole game. It reads stdin and writes stdout;
it must not print anything before it is asked.

  1. It receives its colour: "white" or "black".
  2. On its turn it receives one line:  <move> <time> <time> <state>
       <move>   the opponent's previous move, or NONE when White opens
       <time>   whole seconds left in the bot's own time bank, then the
                opponent's (0-1000)
       <state>  the position as FEN (all six fields)
     The specification announces "three space separated strings" and lists
     four; arena sends the four it lists.
  3. It answers with one line: a move of four characters, the from and to
     squares (e2e4), or O-O / O-O-O to castle. A promotion takes a fifth
     letter (e7e8q, e7e8n); four characters promote to a queen. Moves arena
     sends as <move> use the same form. e1g1-style castling and 0-0 are
     accepted too.
  4. It then receives "<status> <time>": A if the move was accepted, D if it
     was denied, and its seconds left.

Rules: standard chess with castling, en passant and promotion. Checkmate wins;
stalemate, insufficient material, the third occurrence of a position
[repetition, 3], 50 moves each without a capture or pawn move [fiftyMoves,
true] and 400 plies [maxPlies, 400] are draws, applied automatically.

Time: each side has a bank for the game [gameTime, 120s], and one move may
take at most [moveTime, 10s]; both measured next to the bot. A bot that runs
out of time, answers with something that is not a move, plays an illegal move,
prints before it is asked or exits loses the game (under the forfeit policy;
random-move plays a random legal move for it instead, and a denied move gets D).
`
