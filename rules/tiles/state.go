// Package tiles is the referee of Prince Rupert's Tiles: two bots walk an
// n x n board laying tiles in chains, and score by keeping chains and by
// destroying the opponent's chains at their tails. docs/tiles-rules.md (the
// event's rules, the reference engine's wire, and every ruling) is the
// authority; Explain repeats it for participants.
//
// The package is pure: no files, no processes, no clocks and no global
// mutable state. Every random decision (the start cells, a generated map)
// comes from the match seed through a math/rand/v2 PCG, so a match is
// replayed exactly from its seed and its lines.
//
// The wire is a rules.LineCodec (Codec). Everything a bot is told is data of
// the State: Apply records each side's replies to the move it played (the
// outbox), and at the end of a turn whose count is a positive multiple of k it
// also records, and marks as known, the UPDATE TILE lines due before the next
// question. Codec's methods only read those records, so they may be called on
// a Clone, and what a bot is told always matches the knowledge the referee
// judges its next line by.
package tiles

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Outcome reasons of this game. The winner is decided by points either way.
const (
	// ReasonPoints: the game lasted its turns.
	ReasonPoints = "points"
	// ReasonNoTiles: a bot's last chain was destroyed.
	ReasonNoTiles = "no-tiles"
)

// cell is one square of the board.
type cell struct {
	terrain byte  // Empty, Terminator or Amplifier; a terminator laid on is used up (Empty)
	owner   int8  // the side whose tile lies here, or -1
	chain   int32 // the tile's chain: an index into State.chains[owner]
	idx     int32 // the tile's 1-based index in its chain (1 is the tail)
}

// chain is one chain of a side. Its number on the wire is its index in
// State.chains[side] plus one; chains are never renumbered.
type chain struct {
	cells      []int32 // the tiles' cells, index 1 (the tail) first
	teleported bool    // TELEPORT was used on this chain
	destroyed  bool
}

// State is a game of tiles in progress.
type State struct {
	opts   Options
	n      int
	orig   Map // the terrain at the start, never changed
	board  []cell
	amps   []int // amplifier cells in reading order
	starts [2]int
	// startEnded: laying the first tile ended its chain (a terminator, or an
	// amplifier under amplifierEndsChain): the opening's TERMINATED.
	startEnded [2]bool
	pos        [2]int
	chains     [2][]chain
	active     [2]int // the active chain's index, or -1
	tiles      [2]int // surviving tiles
	// known[side][cell]: side knows the opponent's tile on cell.
	known  [2][]bool
	action [2]int // points from INFO and DESTROY
	turn   int
	over   rules.Outcome
	// out is what each side is told about the last move (the mover's replies
	// without TURNOVER, the owner's UPDATE DESTROYED); mover is who played it
	// (NoSide before the first move).
	out   [2][]string
	mover rules.Side
	// updates is what each side is told before the next question (UPDATE
	// TILE lines), already marked known.
	updates [2][]string
}

// NewState starts a game: the start cells from the seed, the map from the
// options or from the seed, and each bot's first tile on its start cell.
func NewState(o Options, seed uint64) (*State, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	rng := newRNG(seed)
	n := o.Size
	if o.Map != nil {
		n = o.Map.N
	}
	starts := startCells(rng, n)
	var m Map
	if o.Map != nil {
		m = Map{N: n, Cells: slices.Clone(o.Map.Cells)}
	} else {
		m = generate(rng, n, o.Terminators, o.Amplifiers, starts)
	}
	return newState(o, m, starts), nil
}

// newState sets the board up from its terrain and start cells.
func newState(o Options, m Map, starts [2]int) *State {
	n := m.N
	s := &State{opts: o, n: n, orig: m, board: make([]cell, n*n), starts: starts, active: [2]int{-1, -1}, mover: rules.NoSide,
		over: rules.Outcome{Winner: rules.NoSide}}
	for i, t := range m.Cells {
		s.board[i] = cell{terrain: t, owner: -1}
		if t == Amplifier {
			s.amps = append(s.amps, i)
		}
	}
	for _, side := range rules.Sides {
		s.known[side] = make([]bool, n*n)
		s.pos[side] = starts[side]
		var out []string
		s.lay(side, &out)
		s.startEnded[side] = len(out) == 2 // LAID TERMINATED
	}
	return s
}

// N is the board's size.
func (s *State) N() int { return s.n }

// Map is the board's terrain as it was at the start.
func (s *State) Map() Map { return Map{N: s.n, Cells: slices.Clone(s.orig.Cells)} }

// Options are the game's rule options.
func (s *State) Options() Options { return s.opts }

// Start is side's start cell.
func (s *State) Start(side rules.Side) (r, c int) { return s.rc(s.starts[side]) }

// Pos is the cell side stands on.
func (s *State) Pos(side rules.Side) (r, c int) { return s.rc(s.pos[side]) }

// Amplifiers lists the amplifier cells in reading order.
func (s *State) Amplifiers() [][2]int {
	out := make([][2]int, len(s.amps))
	for i, a := range s.amps {
		out[i][0], out[i][1] = s.rc(a)
	}
	return out
}

// Chains lists side's surviving chains by number (1-based; a destroyed
// chain's number is not reused), each as its cells in index order, the tail
// first.
func (s *State) Chains(side rules.Side) map[int][][2]int {
	out := map[int][][2]int{}
	for i, ch := range s.chains[side] {
		if ch.destroyed {
			continue
		}
		cells := make([][2]int, len(ch.cells))
		for j, c := range ch.cells {
			cells[j][0], cells[j][1] = s.rc(int(c))
		}
		out[i+1] = cells
	}
	return out
}

// Active is the number of side's active chain, or 0.
func (s *State) Active(side rules.Side) int { return s.active[side] + 1 }

// Knows reports whether side knows the opponent's tile on r c.
func (s *State) Knows(side rules.Side, r, c int) bool { return s.known[side][(r-1)*s.n+c-1] }

func (s *State) rc(i int) (int, int) { return i/s.n + 1, i%s.n + 1 }

func (s *State) cellName(i int) string {
	r, c := s.rc(i)
	return strconv.Itoa(r) + " " + strconv.Itoa(c)
}

// ToMove implements rules.State: the first player on even turns.
func (s *State) ToMove() rules.Side { return rules.Side(s.turn % 2) }

// Phase implements rules.State.
func (s *State) Phase() string { return "play" }

// Turn implements rules.State.
func (s *State) Turn() int { return s.turn }

// Plies implements rules.State: every turn is a play turn.
func (s *State) Plies() int { return s.turn }

// View implements rules.State: the question a bot is asked, TURN. The
// position is in no one line; it is what the bot was told since the start.
func (s *State) View(rules.Side) ([]byte, error) { return []byte("TURN"), nil }

// Outcome implements rules.State.
func (s *State) Outcome() rules.Outcome { return s.over }

// Points is each side's score as it stands: the action points (INFO -4, a
// failed DESTROY -8, a successful one +3 per tile), 2 per surviving tile, and
// the length of every surviving chain whose tail lies on an amplifier.
func (s *State) Points() [2]int {
	var p [2]int
	for _, side := range rules.Sides {
		p[side] = s.action[side] + 2*s.tiles[side]
		for _, ch := range s.chains[side] {
			if !ch.destroyed && s.isAmp(int(ch.cells[0])) {
				p[side] += len(ch.cells)
			}
		}
	}
	return p
}

func (s *State) isAmp(i int) bool {
	_, found := slices.BinarySearch(s.amps, i)
	return found
}

// Clone implements rules.State.
func (s *State) Clone() rules.State {
	c := *s
	c.board = slices.Clone(s.board)
	for _, side := range rules.Sides {
		// One array holds every chain's cells; each chain's slice is capped
		// so that growing it copies it rather than writing over the next.
		total := 0
		for _, ch := range s.chains[side] {
			total += len(ch.cells)
		}
		all := make([]int32, 0, total)
		c.chains[side] = make([]chain, len(s.chains[side]))
		for i, ch := range s.chains[side] {
			from := len(all)
			all = append(all, ch.cells...)
			ch.cells = all[from:len(all):len(all)]
			c.chains[side][i] = ch
		}
		c.known[side] = slices.Clone(s.known[side])
		c.out[side] = slices.Clone(s.out[side])
		c.updates[side] = slices.Clone(s.updates[side])
	}
	return &c
}

// ParseMove implements rules.State; see the package's ParseMove.
func (s *State) ParseMove(answer []byte) (rules.Move, error) {
	m, err := ParseMove(answer)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// EncodeMove implements rules.State: the canonical line.
func (s *State) EncodeMove(m rules.Move) []byte {
	if mv, ok := asMove(m); ok {
		return []byte(mv.String())
	}
	return []byte(m.String())
}

// Judge implements rules.State.
func (s *State) Judge(m rules.Move) error {
	mv, ok := asMove(m)
	if !ok {
		return rules.Illegalf("not a tiles move: %T", m)
	}
	return s.judge(mv)
}

// opponentAt reports whether cell i holds a tile of side's opponent.
func (s *State) opponentAt(side rules.Side, i int) bool {
	o := s.board[i].owner
	return o >= 0 && rules.Side(o) != side
}

// step is the cell one step from i in direction d, or -1 off the board.
func (s *State) step(i int, d byte) int { return stepOn(s.n, i, d) }

var dirNames = map[byte]string{'U': "up", 'D': "down", 'L': "left", 'R': "right"}

// fault is why a line is refused; check finds it without allocating.
type fault uint8

const (
	valid fault = iota
	faultOver
	faultKind
	faultEmpty
	faultNotOnOpponent // INFO or DESTROY
	faultNoActive      // TERMINATE
	faultNotOnOwn      // TELEPORT
	faultTeleported
	faultIndex
	faultOffBoard // MOVE
	faultLayOwn   // LAY
	faultLayKnown
)

// check says whether the side to move may play m, and if not why and on
// which cell (the bot's cell when the refused command is read).
func (s *State) check(m Move) (fault, int) {
	if s.over.Over {
		return faultOver, 0
	}
	me := s.ToMove()
	p := s.pos[me]
	switch m.Kind {
	case Info, Destroy:
		if !s.opponentAt(me, p) {
			return faultNotOnOpponent, p
		}
		return valid, p
	case Commands:
	default:
		return faultKind, p
	}
	if !m.Terminate && !m.Teleport && m.Dir == 0 && !m.Lay {
		return faultEmpty, p
	}
	if m.Terminate && s.active[me] < 0 {
		return faultNoActive, p
	}
	if m.Teleport {
		c := s.board[p]
		if rules.Side(c.owner) != me {
			return faultNotOnOwn, p
		}
		ch := &s.chains[me][c.chain]
		if ch.teleported {
			return faultTeleported, p
		}
		if m.Index < 1 || m.Index > len(ch.cells) {
			return faultIndex, p
		}
		p = int(ch.cells[m.Index-1])
	}
	if m.Dir != 0 {
		q := s.step(p, m.Dir)
		if q < 0 {
			return faultOffBoard, p
		}
		p = q
		if s.opponentAt(me, p) && !s.known[me][p] {
			return valid, p // TILE: the rest of the line is ignored
		}
	}
	if m.Lay {
		switch {
		case rules.Side(s.board[p].owner) == me:
			return faultLayOwn, p
		case s.opponentAt(me, p) && s.known[me][p]:
			return faultLayKnown, p
		}
	}
	return valid, p
}

// judge says whether the side to move may play m, without changing s: nil
// or an *rules.IllegalError saying why not.
func (s *State) judge(m Move) error {
	f, p := s.check(m)
	switch f {
	case valid:
		return nil
	case faultOver:
		return rules.Illegalf("the game is over")
	case faultKind:
		return rules.Illegalf("unknown kind of line %d", m.Kind)
	case faultEmpty:
		return rules.Illegalf("a line with no command")
	case faultNotOnOpponent:
		return rules.Illegalf("%s: the bot's cell %s holds no opponent tile", m, s.cellName(p))
	case faultNoActive:
		return rules.Illegalf("TERMINATE: the bot has no active chain")
	case faultNotOnOwn:
		return rules.Illegalf("TELEPORT: the bot's cell %s holds none of its tiles", s.cellName(p))
	case faultTeleported:
		return rules.Illegalf("TELEPORT: chain %d was teleported on already", s.board[p].chain+1)
	case faultIndex:
		c := s.board[p]
		return rules.Illegalf("TELEPORT %d: chain %d has tiles 1 to %d", m.Index, c.chain+1, len(s.chains[c.owner][c.chain].cells))
	case faultOffBoard:
		return rules.Illegalf("MOVE %c: %s is on the board's edge, nothing lies %s of it", m.Dir, s.cellName(p), dirNames[m.Dir])
	case faultLayOwn:
		return rules.Illegalf("LAY: %s holds the bot's own tile", s.cellName(p))
	case faultLayKnown:
		return rules.Illegalf("LAY: %s holds an opponent tile the bot knows of", s.cellName(p))
	}
	return rules.Illegalf("refused (%d)", f)
}

// Apply implements rules.State: it judges m, plays it, and records what each
// side is told.
func (s *State) Apply(m rules.Move) error {
	mv, ok := asMove(m)
	if !ok {
		return rules.Illegalf("not a tiles move: %T", m)
	}
	if err := s.judge(mv); err != nil {
		return err
	}
	me, you := s.ToMove(), s.ToMove().Other()
	s.out[me], s.out[you] = s.out[me][:0], s.out[you][:0]
	s.updates[me], s.updates[you] = s.updates[me][:0], s.updates[you][:0]
	s.mover = me
	out := &s.out[me]
	p := s.pos[me]
	switch mv.Kind {
	case Info:
		*out = append(*out, "HINT "+strconv.Itoa(int(s.board[p].idx)))
		s.action[me] -= 4
	case Destroy:
		c := s.board[p]
		if c.idx != 1 {
			*out = append(*out, "FAILED")
			s.action[me] -= 8
			break
		}
		owner := rules.Side(c.owner)
		ch := &s.chains[owner][c.chain]
		cells := slices.Clone(ch.cells)
		slices.Sort(cells)
		*out = append(*out, "DESTROYED "+strconv.Itoa(len(cells)))
		for _, q := range cells {
			*out = append(*out, s.cellName(int(q)))
			s.board[q].owner, s.board[q].chain, s.board[q].idx = -1, 0, 0
			s.known[me][q] = false
		}
		s.out[owner] = append(s.out[owner], "UPDATE DESTROYED "+s.cellName(int(ch.cells[0])))
		s.action[me] += 3 * len(cells)
		s.tiles[owner] -= len(cells)
		ch.destroyed = true
		if s.active[owner] == int(c.chain) {
			s.active[owner] = -1
		}
	default:
		s.commands(me, mv)
	}
	s.turn++
	switch {
	case s.tiles[you] == 0:
		s.end(ReasonNoTiles)
	case s.turn >= s.opts.Turns:
		s.end(ReasonPoints)
	case s.turn%s.opts.K == 0:
		s.update()
	}
	return nil
}

// commands plays a judged line of commands.
func (s *State) commands(me rules.Side, m Move) {
	out := &s.out[me]
	if m.Terminate {
		s.active[me] = -1
	}
	if m.Teleport {
		ch := &s.chains[me][s.board[s.pos[me]].chain]
		ch.teleported = true
		s.pos[me] = int(ch.cells[m.Index-1])
	}
	if m.Dir != 0 {
		p := s.step(s.pos[me], m.Dir)
		s.pos[me] = p
		switch {
		case s.opponentAt(me, p):
			*out = append(*out, "TILE")
			if s.active[me] >= 0 {
				s.active[me] = -1
				*out = append(*out, "TERMINATED")
			}
			if !s.known[me][p] {
				s.known[me][p] = true
				return // the rest of the line is ignored
			}
		case rules.Side(s.board[p].owner) == me:
		default:
			*out = append(*out, "EMPTY")
		}
	}
	if m.Lay {
		s.lay(me, out)
	}
}

// lay lays a tile for side on its cell, or meets the opponent's unknown tile
// there; Judge has refused the other cases.
func (s *State) lay(side rules.Side, out *[]string) {
	p := s.pos[side]
	c := &s.board[p]
	if c.owner >= 0 {
		*out = append(*out, "TILE", "TERMINATED")
		s.active[side] = -1
		s.known[side][p] = true
		return
	}
	a := s.active[side]
	if a < 0 || !s.adjacent(p, int(s.chains[side][a].cells[len(s.chains[side][a].cells)-1])) {
		s.chains[side] = append(s.chains[side], chain{})
		a = len(s.chains[side]) - 1
	}
	ch := &s.chains[side][a]
	ch.cells = append(ch.cells, int32(p))
	c.owner, c.chain, c.idx = int8(side), int32(a), int32(len(ch.cells))
	s.tiles[side]++
	s.active[side] = a
	*out = append(*out, "LAID")
	switch {
	case c.terrain == Terminator:
		c.terrain = Empty
		s.active[side] = -1
		*out = append(*out, "TERMINATED")
	case c.terrain == Amplifier && s.opts.AmplifierEndsChain:
		s.active[side] = -1
		*out = append(*out, "TERMINATED")
	}
}

func (s *State) adjacent(a, b int) bool {
	ra, ca, rb, cb := a/s.n, a%s.n, b/s.n, b%s.n
	return (ra == rb && (ca-cb == 1 || cb-ca == 1)) || (ca == cb && (ra-rb == 1 || rb-ra == 1))
}

// update records the UPDATE TILE lines due before the next question: each
// side is told of every opponent tile it does not know, in reading order, and
// knows them from now on.
func (s *State) update() {
	for i := range s.board {
		o := s.board[i].owner
		if o < 0 {
			continue
		}
		viewer := rules.Side(o).Other()
		if !s.known[viewer][i] {
			s.known[viewer][i] = true
			s.updates[viewer] = append(s.updates[viewer], "UPDATE TILE "+s.cellName(i))
		}
	}
}

func (s *State) end(reason string) {
	p := s.Points()
	s.over = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: reason}
	switch {
	case p[0] > p[1]:
		s.over.Winner = rules.White
	case p[1] > p[0]:
		s.over.Winner = rules.Black
	}
}

// LegalMoves implements rules.State: every valid line, in a fixed order:
// INFO and DESTROY when the bot stands on an opponent tile, then the lines
// of commands without TERMINATE, then with it (when a chain is active); within
// those, without TELEPORT then TELEPORT 1, 2, ...; within those, no MOVE then
// MOVE U, D, L, R; within those, without LAY then with it. The moves are
// *Move values sharing one array.
func (s *State) LegalMoves() []rules.Move {
	if s.over.Over {
		return nil
	}
	me := s.ToMove()
	p := s.pos[me]
	// targets: where the bot may stand after TELEPORT (index 0: no TELEPORT).
	targets := []int{p}
	if c := s.board[p]; rules.Side(c.owner) == me && !s.chains[me][c.chain].teleported {
		for _, q := range s.chains[me][c.chain].cells {
			targets = append(targets, int(q))
		}
	}
	terms := 1
	if s.active[me] >= 0 {
		terms = 2
	}
	ms := make([]Move, 0, 2+terms*len(targets)*10)
	if s.opponentAt(me, p) {
		ms = append(ms, Move{Kind: Info}, Move{Kind: Destroy})
	}
	for t := range terms {
		for ti, q := range targets {
			for _, d := range [5]byte{0, 'U', 'D', 'L', 'R'} {
				at := q
				if d != 0 {
					if at = s.step(q, d); at < 0 {
						continue
					}
				}
				m := Move{Terminate: t == 1, Teleport: ti > 0, Index: ti, Dir: d}
				if m.Terminate || m.Teleport || m.Dir != 0 {
					ms = append(ms, m)
				}
				if s.mayLay(me, at) {
					m.Lay = true
					ms = append(ms, m)
				}
			}
		}
	}
	out := make([]rules.Move, len(ms))
	for i := range ms {
		out[i] = &ms[i]
	}
	return out
}

// mayLay reports whether LAY is valid for side on cell i: a cell without a
// tile, or an opponent tile side does not know (after a MOVE onto it LAY is
// ignored; in place it meets the tile, TILE TERMINATED).
func (s *State) mayLay(side rules.Side, i int) bool {
	o := s.board[i].owner
	return o < 0 || (rules.Side(o) != side && !s.known[side][i])
}

// Render implements rules.Renderer: the true board, rows top to bottom, with
// the bots' positions (1 and 2) and the points.
func (s *State) Render() string {
	var b strings.Builder
	f := s.Frame(rules.NoSide)
	b.WriteString("    ")
	for c := range s.n {
		fmt.Fprintf(&b, "%3d", c+1)
	}
	b.WriteByte('\n')
	for r, row := range f.Cells {
		fmt.Fprintf(&b, "%3d ", r+1)
		for c, v := range row {
			if v == "" {
				v = "."
			}
			mark := " "
			switch i := r*s.n + c; {
			case i == s.pos[0] && i == s.pos[1]:
				mark = "*"
			case i == s.pos[0]:
				mark = "1"
			case i == s.pos[1]:
				mark = "2"
			}
			b.WriteString(" " + mark + v)
		}
		b.WriteByte('\n')
	}
	p := s.Points()
	fmt.Fprintf(&b, "turn %d of %d; points white %d, black %d\n", s.turn, s.opts.Turns, p[0], p[1])
	return b.String()
}
