package acm6x6

import (
	"fmt"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Game is ACM 6x6 chess as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return options.Game }

// Title implements rules.Game.
func (Game) Title() string { return "ACM chess 6x6 (Star and Joker)" }

// options is every rule option, stated once.
var options = rules.OptionTable[Options]{Game: "acm6x6", Specs: []rules.OptionSpec[Options]{
	{Name: "doubleStep", Default: "always", Kind: rules.OneOf("always", "first"),
		Field: func(o *Options) any { return &o.DoubleStep },
		Doc:   "when a pawn may move two squares: always, or only from its starting rank"},
	{Name: "maxMoves", Default: "50", Kind: rules.Int(1, 1000),
		Field: func(o *Options) any { return &o.MaxMoves },
		Doc:   "draw when the game does not end within this many moves of each side"},
	{Name: "moveTime", Default: "100ms", Kind: rules.Duration(),
		Field: func(o *Options) any { return &o.MoveTime },
		Doc:   "time per move; a late bot has a random legal move played for it"},
	{Name: "fen", Default: "", Kind: rules.Text("a position"),
		Field: func(o *Options) any { return &o.FEN },
		Doc:   "the starting position, RANKS SIDE PLIES as the bots are sent it (empty: the standard start)"},
}}

// DefaultOptions are the defaults.
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
	if o.FEN != "" {
		return Parse(o, o.FEN)
	}
	return NewState(o), nil
}

// Openings implements rules.Opener: one position per line, as the fen
// option takes it (RANKS SIDE PLIES).
func (Game) Openings(text []byte, _ int) ([]rules.Opening, error) {
	lines, numbers := rules.OpeningLines(text)
	var out []rules.Opening
	for i, l := range lines {
		if _, err := Parse(DefaultOptions(), l); err != nil {
			return nil, fmt.Errorf("line %d: %w", numbers[i], err)
		}
		out = append(out, rules.Opening{Name: fmt.Sprintf("line %d", numbers[i]), Rules: map[string]string{"fen": l}})
	}
	return out, nil
}

// Deck implements rules.Opener: ACM 6x6 has no deck built in.
func (Game) Deck(string) ([]rules.Opening, bool) { return nil, false }

// FromView implements rules.Game: the position (or a whole request line, whose
// last three fields are the position).
func (Game) FromView(opts map[string]string, view []byte) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(view))
	if len(f) > 3 {
		f = f[len(f)-3:]
	}
	return Parse(o, strings.Join(f, " "))
}

// LegalJSON implements rules.Lister.
func (s *State) LegalJSON() ([]byte, error) { return rules.MovesJSON(s) }

// Protocol implements rules.Game.
func (Game) Protocol() rules.Protocol {
	return rules.Protocol{Lines: &rules.LineProtocol{MoveTime: DefaultOptions().MoveTime, MoveTimeOption: "moveTime", LateMove: "random", Codec: codec{}}}
}

type codec struct{}

func (codec) Start(rules.State) [2][]string { return rules.Colours() }

// Request is "<move> <position>": the opponent's last move (NONE at the start)
// and the position.
func (codec) Request(st rules.State, last string, _ rules.Clock) ([2][]string, string) {
	if last == "" {
		last = "NONE"
	}
	return [2][]string{}, last + " " + st.(*State).FEN()
}

func (codec) Reply(rules.State, rules.Side, bool, rules.Clock) [2][]string { return [2][]string{} }

func (codec) End(rules.State) [2][]string { return [2][]string{} }

// Explain implements rules.Game.
func (Game) Explain() string { return explanation }

const explanation = `ACM chess 6x6: how arena referees it

BOARD: 6x6, files a-f, ranks 1-6. Each side has six pawns and, from its own
left: castle (rook), knight, queen, king, bishop, star. The rules' diagram is
marked as wrong about the queen and the king; arena follows the text: the
queen and the king in the centre with the queen on c and the king on d, the
bishop right of the king:
    rank 6   r n q k b s      (Black)
    rank 5   p p p p p p
    rank 2   P P P P P P
    rank 1   R N Q K B S      (White, moves first)

PIECES: castle, knight, bishop, queen and king move as in chess (no castling,
no en passant). Star: one square diagonally, or a jump of exactly two squares
horizontally or vertically, over anything. Joker: one square in any direction,
or a jump of exactly two squares in any direction, over anything. Pawn: one or
two squares straight forward onto empty squares [doubleStep, always: the rules
state no condition; "first" allows two only from the starting rank], captures
one square diagonally forward, and becomes a Joker on the last rank.

END: capturing the king wins (moving into attack is allowed). The game is a
draw when it does not end within 50 moves of each side [maxMoves, 50], or when
the side to move has no legal move.

START: the position above, or one the organizer sets [fen, empty: RANKS
SIDE PLIES as the bots are sent it]; a tournament or a duel plays each
opening twice, sides swapped.

TIME: 0.1 s per move [moveTime, 100ms], measured next to the bot from
writing the question to reading the answer's newline. A bot that does not
answer in time has a random legal move played for it, as the rules say, and
the game goes on (the fault is recorded); its late answer, when it comes, is
discarded, never taken for the answer to its next question. Any other fault
(garbage, an illegal move, a crash, writing before it is asked) follows the
fault policy: the game is lost under the default forfeit, or a random legal
move is played for the bot under --on-fault random-move.

PROTOCOL (the rules name none; this is arena's)
` + rules.LineBotProcess + `  1. At the start the bot reads its colour: "white" or "black".
  2. On its turn it reads one line, "<move> <position>": the opponent's
     previous move (NONE when White opens) and the position as "RANKS SIDE
     PLIES": ranks 6 to 1 separated by '/', upper case White (K Q R N B P S
     J), lower case Black, digits for runs of empty squares, w or b to move,
     the plies played so far.
     Start: "NONE rnqkbs/pppppp/6/6/PPPPPP/RNQKBS w 0".
  3. It answers with one line of four characters, from and to: "a2a4"
     (files a-f, ranks 1-6; upper case is accepted). A pawn reaching the
     last rank becomes a Joker without a fifth letter.
  Nothing is sent back: the next line the bot reads is its next question.
  A move played for it (after a timeout) is not announced either; the
  position in the next question is the truth, so read it every time rather
  than keep your own board. Between its turns the bot is paused: it cannot
  think on the opponent's time.
  The end: no line announces it. When the game is over both bots are
  stopped; the side whose king is captured is never sent the capture.

EXAMPLE
  A whole game: White's king walks into the knight's reach and is taken.
  "W<" is a line White's bot reads, "W>" the line it writes; "B" is
  Black's. Each bot sees only its own lines, in this order.
  W< white
  B< black
  W< NONE rnqkbs/pppppp/6/6/PPPPPP/RNQKBS w 0
  W> d2d4
  B< d2d4 rnqkbs/pppppp/3P2/6/PPP1PP/RNQKBS b 1
  B> b6c4
  W< b6c4 r1qkbs/pppppp/2nP2/6/PPP1PP/RNQKBS w 2
  W> d1d2
  B< d1d2 r1qkbs/pppppp/2nP2/6/PPPKPP/RNQ1BS b 3
  B> c4d2
  The king is captured: both bots are stopped.
`
