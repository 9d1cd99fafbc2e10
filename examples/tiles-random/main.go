// Command tiles-random is an example bot for Prince Rupert's Tiles: on every
// TURN it answers one random line that is always valid. It uses nothing but
// Go's standard library, so it can be copied as the start of a real bot.
//
// The bot reads the dialogue on stdin, one message per line, and keeps what
// it was told:
//
//   - the opening, in either form: the engine's (START, SIZE n, r c,
//     AMPLIFIERS L, L cells, LAID, maybe TERMINATED) or the bot interface's
//     (n, r c, AMPLIFIERS L, L cells, LAID, maybe TERMINATED);
//   - its own cell, moved by its own MOVE commands;
//   - its own chains: LAID extends the active chain when the cell is next to
//     that chain's last tile and starts a new chain otherwise; TERMINATED ends
//     the active chain; UPDATE DESTROYED r c removes the chain whose tail
//     (first tile) is r c;
//   - the opponent tiles it knows: UPDATE TILE r c, a TILE reply (the bot
//     stands on one), and DESTROYED L with its L cells (gone again).
//
// That is all a valid line depends on: MOVE must stay on the board; LAY is
// refused on the bot's own tile and on an opponent tile it knows; TERMINATE
// needs an active chain; TELEPORT i needs the bot on one of its tiles, i one
// of that chain's indexes, and the chain not teleported on before; DESTROY
// needs an opponent tile. The bot answers with MOVE d, MOVE d LAY or LAY,
// sometimes after TERMINATE and TELEPORT i, or, standing on an opponent tile
// it knows, DESTROY, and flushes every answer. It exits on GAMEOVER or at the
// end of its input.
package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// cell is a board cell, 1-based: row r from the top, column c from the left.
type cell struct{ r, c int }

// bot is everything the bot knows.
type bot struct {
	n      int  // the board is n x n; 0 until the opening says
	pos    cell // where the bot stands
	placed bool // pos is known (the opening's r c was read)
	// chains are the bot's own chains in the order they were started, each
	// its tiles from the tail (index 1) on; a destroyed chain is nil.
	chains     [][]cell
	teleported []bool       // by chain: TELEPORT was used on it
	active     int          // index of the active chain in chains, or -1
	own        map[cell]int // the bot's tiles: the index of their chain
	// theirs are the opponent tiles the bot knows of.
	theirs     map[cell]bool
	amplifiers map[cell]bool
	// cells is how many "r c" lines are still to come, and what they are:
	// amplifiers after AMPLIFIERS L, destroyed tiles after DESTROYED L.
	cells    int
	cellKind string
}

func newBot() *bot {
	return &bot{active: -1, own: map[cell]int{}, theirs: map[cell]bool{}, amplifiers: map[cell]bool{}}
}

func main() {
	b := newBot()
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "GAMEOVER" {
			return
		}
		if line != "TURN" {
			b.read(line)
			continue
		}
		answer := b.choose()
		fmt.Fprintln(out, answer)
		if err := out.Flush(); err != nil {
			return
		}
	}
}

// read takes in one line the bot was sent (anything but TURN and GAMEOVER).
func (b *bot) read(line string) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return
	}
	if at, ok := b.parseCell(f); ok {
		b.readCell(at)
		return
	}
	switch {
	case f[0] == "START":
		*b = *newBot()
	case f[0] == "SIZE" && len(f) == 2:
		b.n, _ = strconv.Atoi(f[1])
	case len(f) == 1 && b.n == 0 && isNumber(f[0]):
		b.n, _ = strconv.Atoi(f[0]) // the bot interface's opening: n alone
	case f[0] == "AMPLIFIERS" && len(f) == 2:
		b.cells, _ = strconv.Atoi(f[1])
		b.cellKind = "amplifier"
	case f[0] == "DESTROYED" && len(f) == 2:
		b.cells, _ = strconv.Atoi(f[1])
		b.cellKind = "destroyed"
	case f[0] == "LAID":
		b.laid()
	case f[0] == "TERMINATED":
		b.active = -1
	case f[0] == "TILE":
		b.theirs[b.pos] = true // the bot stands on an opponent tile
	case f[0] == "UPDATE" && len(f) == 4 && f[1] == "TILE":
		if at, ok := b.parseCell(f[2:]); ok {
			b.theirs[at] = true
		}
	case f[0] == "UPDATE" && len(f) == 4 && f[1] == "DESTROYED":
		if at, ok := b.parseCell(f[2:]); ok {
			b.lostChain(at)
		}
	}
	// EMPTY, HINT i, FAILED and TURNOVER change nothing the bot keeps.
}

// readCell takes an "r c" line: an amplifier, a destroyed opponent tile, or
// the start cell.
func (b *bot) readCell(at cell) {
	switch {
	case b.cells > 0 && b.cellKind == "amplifier":
		b.amplifiers[at] = true
		b.cells--
	case b.cells > 0 && b.cellKind == "destroyed":
		delete(b.theirs, at)
		b.cells--
	case !b.placed:
		b.pos, b.placed = at, true
	}
}

// laid records the tile the bot laid on its cell.
func (b *bot) laid() {
	if b.active < 0 || !adjacent(last(b.chains[b.active]), b.pos) {
		b.chains = append(b.chains, nil)
		b.teleported = append(b.teleported, false)
		b.active = len(b.chains) - 1
	}
	b.chains[b.active] = append(b.chains[b.active], b.pos)
	b.own[b.pos] = b.active
}

// lostChain removes the bot's chain whose tail is at.
func (b *bot) lostChain(at cell) {
	for i, chain := range b.chains {
		if len(chain) == 0 || chain[0] != at {
			continue
		}
		for _, t := range chain {
			delete(b.own, t)
		}
		b.chains[i] = nil
		if b.active == i {
			b.active = -1
		}
		return
	}
}

// choose picks a random valid line and moves the bot as it says.
func (b *bot) choose() string {
	if b.theirs[b.pos] && rand.IntN(2) == 0 {
		return "DESTROY" // valid on any opponent tile; it scores on a tail
	}
	var words []string // TERMINATE and TELEPORT i, when the line has them
	if b.active >= 0 && rand.IntN(10) == 0 {
		words = append(words, "TERMINATE")
		b.active = -1
	}
	if i, mine := b.own[b.pos]; mine && !b.teleported[i] && rand.IntN(4) == 0 {
		k := rand.IntN(len(b.chains[i]))
		words = append(words, "TELEPORT "+strconv.Itoa(k+1))
		b.teleported[i] = true
		b.pos = b.chains[i][k]
	}
	// The rest of the line, from where the bot stands now.
	var rests []string
	if len(words) > 0 {
		rests = append(rests, "") // TERMINATE or TELEPORT i alone is a line
	}
	for _, d := range []string{"U", "D", "L", "R"} {
		to, ok := b.step(b.pos, d)
		if !ok {
			continue
		}
		rests = append(rests, "MOVE "+d)
		if b.mayLay(to) {
			rests = append(rests, "MOVE "+d+" LAY")
		}
	}
	if b.mayLay(b.pos) {
		rests = append(rests, "LAY")
	}
	rest := rests[rand.IntN(len(rests))]
	if _, d, ok := strings.Cut(rest, "MOVE "); ok {
		b.pos, _ = b.step(b.pos, d[:1]) // the referee moves the bot whatever it finds there
	}
	return strings.TrimSpace(strings.Join(append(words, rest), " "))
}

// mayLay reports whether LAY is valid on at: neither the bot's own tile nor
// an opponent tile it knows of. (On an opponent tile it does not know, LAY is
// valid and is answered TILE.)
func (b *bot) mayLay(at cell) bool {
	_, mine := b.own[at]
	return !mine && !b.theirs[at]
}

// step is the cell one step from at in direction d, if it is on the board.
func (b *bot) step(at cell, d string) (cell, bool) {
	switch d {
	case "U":
		at.r--
	case "D":
		at.r++
	case "L":
		at.c--
	case "R":
		at.c++
	}
	return at, at.r >= 1 && at.c >= 1 && at.r <= b.n && at.c <= b.n
}

// parseCell reads "r c" on the board.
func (b *bot) parseCell(f []string) (cell, bool) {
	if len(f) != 2 || !isNumber(f[0]) || !isNumber(f[1]) {
		return cell{}, false
	}
	r, _ := strconv.Atoi(f[0])
	c, _ := strconv.Atoi(f[1])
	return cell{r, c}, r >= 1 && c >= 1 && r <= b.n && c <= b.n
}

func last(chain []cell) cell { return chain[len(chain)-1] }

func adjacent(a, b cell) bool {
	dr, dc := a.r-b.r, a.c-b.c
	return dr*dr+dc*dc == 1
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
