package tiles

import "github.com/arenabots/arena/rules"

// Explain implements rules.Game.
func (Game) Explain() string { return explanation }

const explanation = `Prince Rupert's Tiles

Two bots walk an n x n board laying tiles. Consecutive tiles that touch
(orthogonally) form a chain; the first tile of a chain, index 1, is its
tail. A chain is destroyed whole by a DESTROY on its tail, and scores while
it survives. Rule options are shown as [name, default]. Cells are written
"r c", 1-based, rows top to bottom.

BOARD
  n x n cells [size, 12]. Each cell is empty (E), a hidden chain-terminating
  tile (T) or a visible chain amplifier (A). The map is generated from the
  match seed [terminators, 10] [amplifiers, 6] on distinct cells, never on a
  start cell; or it is given [map, empty]: the reference engine's CSV, a
  header row then n rows of E, T and A (a map that is not square or holds
  another letter is refused before the match). Start cells come from the
  seed: the first player's on a random row in columns 1..3, the second
  player's on a random row in columns n-2..n, never the same cell. With a
  given map a start cell may be a T or an A.

PROTOCOL
` + rules.LineBotProcess + `  The engine leads the dialogue: the OPENING below; then for each of the
  bot's turns any UPDATE TILE lines due, TURN, the bot's one line, the
  replies to it and TURNOVER; GAMEOVER at the end. Lines about the
  opponent (UPDATE TILE, UPDATE DESTROYED) arrive between the bot's turns
  and wait in its input. Only TURN asks for an answer: read every line in
  order and answer each TURN with exactly one line. The opponent's moves
  are never announced except through those UPDATE lines. Between its turns
  the bot is paused: it cannot think on the opponent's time. After
  GAMEOVER the bot is stopped; it need not exit by itself.

OPENING (one message per line) [greeting, engine]
  START
  SIZE n
  r c            this bot's start cell
  AMPLIFIERS L
  r c            L lines: the amplifier cells in reading order
  LAID           its first tile, laid on its start cell automatically
  TERMINATED     only when the start cell was a T (or an A, with
                 amplifierEndsChain=true)
  greeting=seed sends n alone instead of START and SIZE n (the rest is the
  same), as the event's bot interface describes it.

TURNS
  Bots alternate, the first player first; the game lasts [turns, 210] turns,
  both bots' counted (the reference engine used 150). Before turn t (t
  counts the turns already played), when t > 0 and t mod k = 0 [k, 10], each
  bot is sent "UPDATE TILE r c" for every opponent tile it does not know yet,
  in reading order. A bot knows an opponent tile once it was told of it by an
  UPDATE, stepped on it (TILE after MOVE) or tried to lay on it (TILE
  TERMINATED after LAY); a destroyed tile is forgotten (its destroyer was told
  its cells). On its turn a bot is sent TURN and answers one line within
  [turnTimeout, 2s]. After its line is played it is sent its replies, then
  TURNOVER.

THE LINE
  Either INFO alone, DESTROY alone, or one or more of these commands in this
  order, each at most once:
    TERMINATE  TELEPORT i  MOVE U|D|L|R  LAY
  Tokens are separated by one or more spaces; spaces around the line and a
  carriage return at its end are ignored. Commands are upper case; i is
  written in digits. Anything else is invalid output.

COMMANDS (replies in quotes)
  TERMINATE   ends the active chain. Invalid without an active chain. No reply.
  TELEPORT i  the bot must stand on one of its own tiles; it moves to tile i
              (1-based) of that tile's chain. Once per chain. Invalid
              otherwise (also for an i the chain does not have). No reply.
              The chain stays active if it was.
  MOVE d      one cell up, down, left or right. Invalid off the board.
              Onto an empty, T or A cell: "EMPTY". Onto its own tile: no
              reply. Onto an opponent tile: "TILE", then "TERMINATED" if the
              bot had an active chain (it ends). If the bot did not know that
              tile, it knows it now and the rest of the line (a LAY) is
              ignored.
  LAY         lays a tile on the bot's cell. On an empty, T or A cell:
              "LAID"; the tile extends the active chain if the cell touches
              that chain's last tile, else it starts a new chain (the old one
              ends). On a T then "TERMINATED": the chain ends and the T is
              used up. With [amplifierEndsChain, false] laying on an A also
              ends the chain ("TERMINATED"), the A staying an amplifier.
              On an opponent tile the bot did not know: "TILE" then
              "TERMINATED", nothing is laid, the active chain (if any) ends
              and the bot knows the tile. On its own tile or an opponent tile
              it knew: invalid.
  INFO        on an opponent tile: "HINT i", i the tile's index in its chain.
              Costs 4 points. Invalid elsewhere.
  DESTROY     on an opponent tile. On the chain's tail (index 1) the whole
              chain is removed (its cells become empty; amplifiers stay
              amplifiers; a used T stays used); the destroyer scores 3 x L and
              is sent "DESTROYED L" then L lines "r c", the chain's cells in
              reading order; the owner is sent "UPDATE DESTROYED r c", the
              cell of the chain's tail, and its active chain ends if it was
              that one. Not on the tail: "FAILED", minus 8 points. Invalid
              elsewhere.
  Chains are numbered per bot from 1 in the order they were started; a
  destroyed chain's number is not reused. Bots do not block each other: a bot
  may stand on any cell, and the opponent may lay a tile under it.

END AND RESULT
  The game ends after [turns] turns, or at once when a bot has no tile left
  (its last chain was destroyed). Both bots are sent GAMEOVER and are then
  stopped. Points: the action points (INFO -4, DESTROY +3L or -8), plus 2 per
  surviving tile, plus L for each surviving chain of length L whose tail lies
  on an amplifier. More points wins; equal points are a draw. The result's
  reason is "points" after the last turn, "no-tiles" when a bot lost its last
  tile (the winner is still decided by points).

FAULTS
  An invalid line (invalid-output), a line the rules forbid (illegal-move), a
  timeout, a crash or a closed output is the bot's fault: it loses the game,
  or under --on-fault random-move a random valid line is played for it and it
  is sent that line's replies, then TURNOVER. A fault that ends the game is
  followed by GAMEOVER alone. The reference engine aborted such games.

EXAMPLE
  A whole game on a generated 4 x 4 board [size=4, terminators=2,
  amplifiers=1, k=4, turns=10]: the amplifier is on 2 1, the two
  terminators are hidden. "W<" is a line the first player's bot reads,
  "W>" the line it writes; "B" is the second player's. Each bot sees only
  its own lines, in this order.
  W< START
  W< SIZE 4
  W< 3 3
  W< AMPLIFIERS 1
  W< 2 1
  W< LAID
  B< START
  B< SIZE 4
  B< 4 3
  B< AMPLIFIERS 1
  B< 2 1
  B< LAID
  W< TURN
  W> MOVE L LAY
  W< EMPTY
  W< LAID
  W< TURNOVER
  B< TURN
  B> MOVE U
  B< TILE
  B< TERMINATED
  B< TURNOVER
  W< TURN
  W> MOVE L LAY
  W< EMPTY
  W< LAID
  W< TURNOVER
  B< TURN
  B> INFO
  B< HINT 1
  B< TURNOVER
  W< UPDATE TILE 4 3
  B< UPDATE TILE 3 1
  B< UPDATE TILE 3 2
  W< TURN
  W> MOVE U LAY
  W< EMPTY
  W< LAID
  W< TURNOVER
  B< TURN
  B> DESTROY
  W< UPDATE DESTROYED 3 3
  B< DESTROYED 4
  B< 2 1
  B< 3 1
  B< 3 2
  B< 3 3
  B< TURNOVER
  W< GAMEOVER
  B< GAMEOVER
  The first player has no tile left, so the game ends at once: it has 0
  points, the second player 3 x 4 - 4 + 2 = 10 (the DESTROY, the INFO, its
  one tile on 4 3).

The reference engine's slips are not copied: chains are looked up by their
exact number (chain 1 is not chain 11), every tile of every chain is scored,
MOVE cannot appear twice, the victim of a DESTROY is told its chain's tail,
and equal points are a draw.

SUBMISSIONS
  One source file built as the event built them: .py run by python3 (pandas,
  numpy and tabulate available), .cpp by g++ -std=c++17, .c by gcc, .java by
  javac then java, .js by node. arena builds a source file in the sandbox
  when it is handed in (arena languages prints how); a source that does not
  build loses its games with the verdict build-error.
`
