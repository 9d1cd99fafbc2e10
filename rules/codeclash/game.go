// Package codeclash is the referee of Code Clash 5x5 chess: setup by alternating
// placements, play with kings, queens, rooks, bishops and pawns on a 5x5 board,
// the fog, shield and pawnReset abilities, king capture to win; state.json and
// move.json exactly as the bot guide describes them, with every ruling of
// docs/codeclash.md.
package codeclash

import "github.com/arenabots/arena/rules"

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

// options is every rule option, stated once.
var options = rules.OptionTable[Options]{Game: "codeclash", Specs: []rules.OptionSpec[Options]{
	{Name: "blockedTilesInPlay", Default: "false", Kind: rules.Bool(),
		Field: func(o *Options) any { return &o.BlockedTilesInPlay },
		Doc:   "blocked tiles stay blocked after setup (no piece moves onto or through them)"},
	{Name: "noMoveResult", Default: "draw", Kind: rules.OneOf("draw", "loss"),
		Field: func(o *Options) any { return &o.NoMoveResult },
		Doc:   "result when the side to move has no legal move"},
	{Name: "maxPlies", Default: "200", Kind: rules.Int(1, 100000),
		Field: func(o *Options) any { return &o.MaxPlies },
		Doc:   "draw after this many play plies without a king capture"},
	{Name: "repetition", Default: "0", Kind: rules.Repetition(100),
		Field: func(o *Options) any { return &o.Repetition },
		Doc:   "draw when a position occurs this many times (0: no repetition rule)"},
}}

// DefaultOptions are the rulings' defaults.
func DefaultOptions() Options { return options.Defaults() }

// ParseOptions reads options by name over the defaults.
func ParseOptions(m map[string]string) (Options, error) { return options.Parse(m) }

// Map returns the options by name, as transcripts record them.
func (o Options) Map() map[string]string { return options.Map(o) }

// Game is Code Clash as a rules.Game.
type Game struct{}

func init() { rules.Register(Game{}) }

// Name implements rules.Game.
func (Game) Name() string { return options.Game }

// Title implements rules.Game.
func (Game) Title() string { return "Code Clash 5x5 chess" }

// Documents implements rules.Documented: the event's rules ask every
// submission for all its source files and a README (the algorithm, the
// build steps, the data file's name, format and purpose).
func (Game) Documents() []string { return []string{rules.DocSource, rules.DocReadme} }

// Options implements rules.Game.
func (Game) Options() []rules.Option { return options.Options() }

// OptionTable implements rules.OptionTabler.
func (Game) OptionTable() rules.OptionSet { return options }

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

PROTOCOL
  Every turn arena starts the bot afresh with the path of state.json; the
  bot reads it, writes move.json beside it and exits with a code that says
  what it did. RUNNING THE BOT, STATE.JSON, MOVE.JSON, EXIT CODES and LIMITS
  give each part; EXAMPLES at the end shows real turns of a game.

RUNNING THE BOT
  - A fresh process for each of the bot's turns, and only on its turns:
    <executable> <game_dir>/state.json, with game_dir as the working
    directory. In official matches that is /bot/<executable>
    /game/state.json, run in /game. (Take the path from the argument or use
    the working directory: with --sandbox local game_dir is elsewhere.)
  - The bot reads state.json, writes move.json in game_dir and exits.
  - Before each turn arena writes a new state.json and removes the previous
    move.json, so a stale move.json is never read. Only the data file (THE
    DATA FILE) carries anything from one turn to the next.
  - stdin is empty (/dev/null). stdout and stderr are free for logs; the
    last 8 KiB of each are kept with the match.
  - The submission's files are in /bot, read-only: find them beside the
    executable, not in the working directory. HOME and TMPDIR are /tmp.
    There is no network. When the bot exits, every process it started is
    killed.
  - A side is run only when it has a legal move (a side without one ends
    the game first).

STATE.JSON
  One JSON object on one line, UTF-8 without a BOM, ending in a newline.
  Every field is always present, in this order:
  phase               string: "setup" during the 18 placement turns, then
                      "play".
  playerColor         string: "white" or "black", the side the bot plays,
                      which is also the side to move.
  board               array of 5 rows (row 0 first, top to bottom), each an
                      array of 5 cells (column 0 first): board[row][col]. A
                      cell is null (empty), a piece {"type": T, "color":
                      "white" or "black"}, or, while the bot is fogged,
                      {"type": "F", "color": "fog"} for a square it cannot
                      see. A blocked tile is null here and listed in
                      blockedTiles.
  abilitiesRemaining  object of three booleans, {"fog": B, "pawnReset": B,
                      "shield": B}: true for each of the bot's own abilities
                      still unused (all true during setup). The opponent's
                      are not shown.
  abilitiesActivated  array of objects: the opponent's abilities in effect
                      against the bot on this turn, oldest first; [] when
                      none. turnsLeft is an integer, target null or [r, c]:
                        {"name": "fog", "turnsLeft": 3, 2 or 1, "target": null}
                        {"name": "shield", "turnsLeft": 1, "target": [r, c]}
                        {"name": "pawnReset", "turnsLeft": 0, "target": null}
  turnNumber          integer: 0 during setup; in play 1 for White's first
                      move, then one more per move of either side (odd:
                      White, even: Black).
  setupStep           integer: 1-4 during setup (see SETUP), 0 in play.
  blockedTiles        array of [row, col] integer pairs: every blocked
                      square, both sides', in reading order; [] before the
                      first block. Still listed in play, where they are
                      ordinary empty squares [blockedTilesInPlay, false].
  Piece types: K king, Q queen (only by promotion), R rook, B bishop, P
  pawn; F is a fogged square. The guide's piece-type codes, used as "from"
  in setup step 4: [0,3] bishop, [0,4] pawn ([0,0] king, [0,1] queen and
  [0,2] rook are never needed).

MOVE.JSON
  One JSON object, written to move.json in game_dir before exiting:
  setup steps 1 (king), 2 (block), 3 (rook); a "from" is ignored:
    {"move": {"to": [r, c]}}
  setup step 4, a bishop or a pawn:
    {"move": {"from": [0, 3], "to": [r, c]}}
    {"move": {"from": [0, 4], "to": [r, c]}}
  play:
    {"move": {"from": [r, c], "to": [r, c]}}
  play, with one ability used after the move:
    {"move": {...}, "ability": {"name": "fog", "target": null}}
    {"move": {...}, "ability": {"name": "pawnReset", "target": null}}
    {"move": {...}, "ability": {"name": "shield", "target": [r, c]}}
  No ability: leave "ability" out, or write null, {} or {"name": null,
  "target": null}. UTF-8, optional BOM, any whitespace, unknown fields
  ignored, at most 64 KiB. Coordinates are JSON integers 0-4 in
  two-element arrays ([1, 2]; not [1.0, 2], ["1", 2] or {"row": 1}); anything
  else is invalid output.

EXIT CODES
  The exit code is the bot's own claim about its turn; arena judges the move
  itself (VERDICTS):
    0  "here is my move": move.json is read and judged.
    1  "state.json is malformed": bot-rejected-state, flagged for review.
    2  "my move is illegal": illegal-move.
    3  "internal error": bot-error.
    any other code, or killed by a signal: crash.
  A non-zero exit decides the turn whatever move.json holds, and under the
  default fault policy it loses the game. Beware: an uncaught exception
  ends a Python, Java or node program with exit code 1, which the guide
  reserves for a malformed state, so a bot that simply crashed is recorded
  as having rejected the state. Catch every error at the top of the program
  and exit 3 (Python: try/except Exception around main, then sys.exit(3);
  Java: catch Throwable in main, then System.exit(3); node:
  process.on("uncaughtException", ...) calling process.exit(3)), or better,
  fall back to writing any legal move and exit 0.

LIMITS (the defaults; an event may set others)
  time      5 s wall clock per turn, from the start of the process to its
            exit: start-up counts (an interpreter starting, a one-file
            executable unpacking itself into /tmp). Still running at the
            limit: timeout.
  memory    1 GiB for all of the bot's processes together, no swap; a bot
            killed for going over it: out-of-memory.
  CPU       one core; at most 256 processes and threads, 1024 open files.
  disk      game_dir 64 MiB; /tmp 512 MiB and /dev/shm 64 MiB, both emptied
            after every turn; everything else is read-only.
  data file one regular file in game_dir of at most 10 MiB, kept between
            the bot's turns (THE DATA FILE).

BOARD AND SIDES
  5x5, [row, col], 0-based, rows top to bottom. White owns rows 0-1 and moves
  down (towards row 4); Black owns rows 3-4 and moves up. Pawns promote on the
  far row (White row 4, Black row 0), always to a queen.

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

CHECKING A STATE BY HAND (arena rules legal, arena rules check)
  A state.json does not hold everything, so when one is read on its own:
  - a fogged square is taken to be empty, so moves into the fog are listed;
  - the opponent's unused abilities are unknown and do not matter here;
  - during setup, the placement is inferred from setupStep and the player's
    pieces already on the board (in step 4 "from" is the piece-type code
    [0,3] or [0,4]).

EXAMPLES
  Real turns of one game, as the referee wrote state.json and read
  move.json. state.json is written on one line; here it is spread over
  several, which JSON allows.

  1. White's first setup turn (step 1): it places its king on [0,2].
  state.json
    {
      "phase": "setup",
      "playerColor": "white",
      "board": [
        [null, null, null, null, null],
        [null, null, null, null, null],
        [null, null, null, null, null],
        [null, null, null, null, null],
        [null, null, null, null, null]
      ],
      "abilitiesRemaining": {"fog": true, "pawnReset": true, "shield": true},
      "abilitiesActivated": [],
      "turnNumber": 0,
      "setupStep": 1,
      "blockedTiles": []
    }
  move.json
    {"move": {"to": [0, 2]}}

  2. Black in setup step 4, with its king and rooks placed and White's first
     bishop on [0,1]: it places a bishop on [4,1]. "from" is the bishop's
     type code [0,3], the same for both colours.
  state.json
    {
      "phase": "setup",
      "playerColor": "black",
      "board": [
        [{"type": "R", "color": "white"}, {"type": "B", "color": "white"},
         {"type": "K", "color": "white"}, null,
         {"type": "R", "color": "white"}],
        [null, null, null, null, null],
        [null, null, null, null, null],
        [null, null, null, null, null],
        [{"type": "R", "color": "black"}, null,
         {"type": "K", "color": "black"}, null,
         {"type": "R", "color": "black"}]
      ],
      "abilitiesRemaining": {"fog": true, "pawnReset": true, "shield": true},
      "abilitiesActivated": [],
      "turnNumber": 0,
      "setupStep": 4,
      "blockedTiles": [[1, 4], [3, 0]]
    }
  move.json
    {"move": {"from": [0, 3], "to": [4, 1]}}

  3. White's first play move (turnNumber 1). Either answer is legal: the
     pawn on [1,0] to [2,0], alone or followed by fog. The game goes on with
     fog.
  state.json
    {
      "phase": "play",
      "playerColor": "white",
      "board": [
        [{"type": "R", "color": "white"}, {"type": "B", "color": "white"},
         {"type": "K", "color": "white"}, {"type": "B", "color": "white"},
         {"type": "R", "color": "white"}],
        [{"type": "P", "color": "white"}, {"type": "P", "color": "white"},
         {"type": "P", "color": "white"}, null, null],
        [null, null, null, null, null],
        [null, {"type": "P", "color": "black"},
         {"type": "P", "color": "black"}, {"type": "P", "color": "black"},
         null],
        [{"type": "R", "color": "black"}, {"type": "B", "color": "black"},
         {"type": "K", "color": "black"}, {"type": "B", "color": "black"},
         {"type": "R", "color": "black"}]
      ],
      "abilitiesRemaining": {"fog": true, "pawnReset": true, "shield": true},
      "abilitiesActivated": [],
      "turnNumber": 1,
      "setupStep": 0,
      "blockedTiles": [[1, 4], [3, 0]]
    }
  move.json
    {"move": {"from": [1, 0], "to": [2, 0]}}
  move.json
    {"move": {"from": [1, 0], "to": [2, 0]},
     "ability": {"name": "fog", "target": null}}

  4. Black, fogged (turnsLeft 3): it sees its own pieces and the squares
     they reach, among them White's pawn on [2,0] and, up the open column 4,
     White's rook on [0,4]. It moves its pawn [3,3] to [2,3] and shields its
     king on [4,2].
  state.json
    {
      "phase": "play",
      "playerColor": "black",
      "board": [
        [{"type": "F", "color": "fog"}, {"type": "F", "color": "fog"},
         {"type": "F", "color": "fog"}, {"type": "F", "color": "fog"},
         {"type": "R", "color": "white"}],
        [{"type": "F", "color": "fog"}, {"type": "F", "color": "fog"},
         {"type": "F", "color": "fog"}, {"type": "F", "color": "fog"},
         null],
        [{"type": "P", "color": "white"}, null, null, null, null],
        [null, {"type": "P", "color": "black"},
         {"type": "P", "color": "black"}, {"type": "P", "color": "black"},
         null],
        [{"type": "R", "color": "black"}, {"type": "B", "color": "black"},
         {"type": "K", "color": "black"}, {"type": "B", "color": "black"},
         {"type": "R", "color": "black"}]
      ],
      "abilitiesRemaining": {"fog": true, "pawnReset": true, "shield": true},
      "abilitiesActivated": [
        {"name": "fog", "turnsLeft": 3, "target": null}
      ],
      "turnNumber": 2,
      "setupStep": 0,
      "blockedTiles": [[1, 4], [3, 0]]
    }
  move.json
    {"move": {"from": [3, 3], "to": [2, 3]},
     "ability": {"name": "shield", "target": [4, 2]}}

  5. White, facing the shield: Black's king on [4,2] cannot be captured on
     this turn. White moves its king [0,2] to [1,3] and uses pawnReset: its
     pawn on [2,0] goes back to [1,0], where it stood at the end of setup.
  state.json
    {
      "phase": "play",
      "playerColor": "white",
      "board": [
        [{"type": "R", "color": "white"}, {"type": "B", "color": "white"},
         {"type": "K", "color": "white"}, {"type": "B", "color": "white"},
         {"type": "R", "color": "white"}],
        [null, {"type": "P", "color": "white"},
         {"type": "P", "color": "white"}, null, null],
        [{"type": "P", "color": "white"}, null, null,
         {"type": "P", "color": "black"}, null],
        [null, {"type": "P", "color": "black"},
         {"type": "P", "color": "black"}, null, null],
        [{"type": "R", "color": "black"}, {"type": "B", "color": "black"},
         {"type": "K", "color": "black"}, {"type": "B", "color": "black"},
         {"type": "R", "color": "black"}]
      ],
      "abilitiesRemaining": {"fog": false, "pawnReset": true, "shield": true},
      "abilitiesActivated": [
        {"name": "shield", "turnsLeft": 1, "target": [4, 2]}
      ],
      "turnNumber": 3,
      "setupStep": 0,
      "blockedTiles": [[1, 4], [3, 0]]
    }
  move.json
    {"move": {"from": [0, 2], "to": [1, 3]},
     "ability": {"name": "pawnReset", "target": null}}
`
