// Package codeclash is the referee of Code Clash 5x5 chess: setup by alternating
// placements, play with kings, queens, rooks, bishops and pawns on a 5x5 board,
// the fog, shield and pawnReset abilities, king capture to win; state.json and
// move.json exactly as the bot guide describes them, with every ruling of
// docs/codeclash.md.
package codeclash

import (
	"fmt"
	"strconv"

	"github.com/arenabots/arena/rules"
)

// Options are the rulings a tournament may set differently.
type Options struct {
	// BlockedTilesInPlay keeps blocked tiles blocked after setup: no piece may
	// move onto or through them. Default false: in play they are empty squares.
	BlockedTilesInPlay bool
	// NoMoveResult is the result when the side to move has no legal move:
	// "draw" (default) or "loss" for that side.
	NoMoveResult string
	// MaxPlies ends the game in a draw after this many play plies (default 200).
	MaxPlies int
	// Repetition, when above 0, draws the game when the same position (board,
	// side to move, abilities) occurs that many times. Default 0: off.
	Repetition int
}

// DefaultOptions are the rulings' defaults.
func DefaultOptions() Options {
	return Options{NoMoveResult: "draw", MaxPlies: 200}
}

// ParseOptions reads options by name over the defaults.
func ParseOptions(m map[string]string) (Options, error) {
	o := DefaultOptions()
	if err := rules.CheckOptions(Game{}, m); err != nil {
		return o, err
	}
	var err error
	for k, v := range m {
		switch k {
		case "blockedTilesInPlay":
			if o.BlockedTilesInPlay, err = rules.BoolOption(k, v); err != nil {
				return o, err
			}
		case "noMoveResult":
			if v != "draw" && v != "loss" {
				return o, fmt.Errorf("noMoveResult: want draw or loss, got %q", v)
			}
			o.NoMoveResult = v
		case "maxPlies":
			if o.MaxPlies, err = rules.IntOption(k, v, 1, 100000); err != nil {
				return o, err
			}
		case "repetition":
			if o.Repetition, err = rules.RepetitionOption(k, v, 100); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// Map returns the options by name, as transcripts record them.
func (o Options) Map() map[string]string {
	return map[string]string{
		"blockedTilesInPlay": strconv.FormatBool(o.BlockedTilesInPlay),
		"noMoveResult":       o.NoMoveResult,
		"maxPlies":           strconv.Itoa(o.MaxPlies),
		"repetition":         strconv.Itoa(o.Repetition),
	}
}

// Game is Code Clash as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return "codeclash" }

// Title implements rules.Game.
func (Game) Title() string { return "Code Clash 5x5 chess" }

// Options implements rules.Game.
func (Game) Options() []rules.Option {
	return []rules.Option{
		{Name: "blockedTilesInPlay", Default: "false", Values: "true|false", Doc: "blocked tiles stay blocked after setup (no piece moves onto or through them)"},
		{Name: "noMoveResult", Default: "draw", Values: "draw|loss", Doc: "result when the side to move has no legal move"},
		{Name: "maxPlies", Default: "200", Values: "1-100000", Doc: "draw after this many play plies without a king capture"},
		{Name: "repetition", Default: "0", Values: "0 or 2-100", Doc: "draw when a position occurs this many times (0: no repetition rule)"},
	}
}

// New implements rules.Game.
func (Game) New(opts map[string]string, seed uint64) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewState(o, seed), nil
}

// FromView implements rules.Game.
func (Game) FromView(opts map[string]string, view []byte) (rules.State, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return FromView(o, view)
}

// Protocol implements rules.Game: the guide's file-per-turn protocol.
func (Game) Protocol() rules.Protocol {
	return rules.Protocol{Files: &rules.FileProtocol{
		StateFile:    "state.json",
		MoveFile:     "move.json",
		MaxMoveBytes: MaxMoveBytes,
		ExitVerdicts: map[int]rules.Verdict{
			1: rules.BotRejectedState,
			2: rules.IllegalMove,
			3: rules.BotError,
		},
		DataFiles:        1,
		MaxDataFileBytes: 10 * 1024 * 1024,
	}}
}

// Explain implements rules.Game.
func (Game) Explain() string { return explanation }

const explanation = `Code Clash 5x5 chess: how arena referees it

The bot guide is the specification. Where it is silent or contradicts itself,
these rulings hold. Options are marked [option name, default].

BOARD AND SIDES
  5x5, [row, col], 0-based, rows top to bottom. White owns rows 0-1 and moves
  down (towards row 4); Black owns rows 3-4 and moves up. Pawns promote on the
  far row (White row 4, Black row 0), always to a queen.

INVOCATION
  /bot/<executable> /game/state.json, working directory /game. The bot writes
  move.json there and exits. 5 s wall clock per turn by default.

SETUP (18 turns, one placement each, White first)
  W king, B king, W block, B block, W rook, B rook, W rook, B rook, then W and B
  alternate five times placing 2 bishops and 3 pawns in any order.
  - state.json shows the whole board to both sides. setupStep is the step of
    the player asked (1-4); turnNumber is 0 throughout setup.
  - Steps 1 and 3 (king, rooks): "to" is an empty, unblocked square in your own
    back two rows. "from" is ignored, whatever it holds.
  - Step 2 (block): "to" is an empty, unblocked square in the opponent's back
    two rows. "from" is ignored.
  - Step 4: "from" must be [0,3] (bishop) or [0,4] (pawn); a third bishop or a
    fourth pawn is illegal. "to" as in step 1.
  - blockedTiles lists every blocked square, both sides', in every phase.
  - Abilities cannot be used during setup.

PLAY
  - White moves first. turnNumber is 1 for White's first play move and counts
    plies (Black's reply is 2, ...). setupStep is 0 during play.
  - Every turn moves exactly one own piece. King: one square in any direction.
    Rook, bishop, queen: standard sliding, blocked by any piece. Pawn: one
    square straight forward onto an empty square, or one square diagonally
    forward to capture. No double step, no en passant, no castling, no knights.
  - A king may move into attack. Capturing the opponent's king wins at once.
  - Blocked tiles are ordinary empty squares in play
    [blockedTilesInPlay, false: true keeps them blocked].
  - A side to move with no legal move: draw [noMoveResult, draw: or loss].
  - Draw after maxPlies play plies without a king capture [maxPlies, 200].
  - No repetition rule [repetition, 0: N draws on the N-th occurrence].
  - Moves are judged against the true board, fog or not.

ABILITIES (each once per game, at most one per turn, after the turn's move)
  "ability" absent, null, {} or {"name": null} means none. An unknown name or
  an ability already used makes the whole turn illegal.
  - fog (target ignored): the opponent's next 3 turns are fogged. A fogged
    state.json shows {"type": "F", "color": "fog"} on every square the player
    cannot see, empty or not. Visible: squares with the player's own pieces and
    every square one of them could move to or capture on (sliding rays up to and
    including the first occupied square; a pawn's forward and both forward
    diagonal squares; a king's eight neighbours). The opponent sees
    {"name": "fog", "turnsLeft": N, "target": null} with N = 3, 2, 1.
  - shield (target = a square holding one of your pieces after the move): that
    piece cannot be captured during the opponent's next turn. The opponent sees
    {"name": "shield", "turnsLeft": 1, "target": [r, c]}. The king may be
    shielded.
  - pawnReset (target ignored): acts on your own pawns. Pawns standing on a
    square where one of your pawns stood at the end of setup stay. The others
    are shuffled with the match's seeded random generator and moved one by one
    to the empty such squares in row-major order, until either runs out.
    Promoted pawns are queens and do not move. The opponent sees
    {"name": "pawnReset", "turnsLeft": 0, "target": null} on its next turn.

MOVE.JSON
  UTF-8, optional BOM, any whitespace, unknown fields ignored, at most 64 KiB.
  Coordinates are JSON integers 0-4 in two-element arrays; anything else is
  invalid output.

VERDICTS (the bot's exit code is its claim; arena judges the move itself)
  exit 0, legal move                        ok
  exit 0, legal JSON but illegal move       illegal-move
  exit 0, move.json missing/not JSON/wrong shape/too big   invalid-output
  exit 1 (bot says the state was malformed) bot-rejected-state (flagged for review)
  exit 2 (bot says its own move is illegal) illegal-move
  exit 3 (bot's internal error)             bot-error
  any other exit code, or a signal          crash
  killed for memory                         out-of-memory
  still running at the time limit           timeout
  data-file rule broken after the turn      data-file-violation
  Each costs the game under the default fault policy (forfeit). Faults of the
  harness or host end the match as aborted, charged to nobody.

THE DATA FILE
  After every turn game_dir may hold state.json, move.json and at most one
  other entry: a regular file of at most 10 MiB (10,485,760 bytes). A second
  entry, a directory, a symlink, a FIFO or a bigger file is a
  data-file-violation. The data file persists between your turns of one match
  and never reaches the opponent. Everything else you write (/tmp, where
  one-file PyInstaller executables unpack) is scratch, wiped between turns.
`
