package tiles

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/arenabots/arena/rules"
)

// botModel is what a bot can know from its own lines and the lines it is
// sent, kept the way a careful bot would keep it. The property test checks
// that it always agrees with the referee: each line a bot is told must be
// consistent with the true board and with what it knew.
type botModel struct {
	side       rules.Side
	n          int
	pos        int
	chains     [][]int // own chains by number-1; nil once destroyed
	teleported []bool
	active     int    // index into chains, or -1
	own        []int  // cell -> own chain index + 1, 0 for none
	known      []bool // opponent tiles it knows
	points     int    // action points, from its replies
	inbox      []string
}

func newModel(side rules.Side) *botModel { return &botModel{side: side, active: -1} }

type checker struct {
	models [2]*botModel
	err    error
	// every: check the whole board and the models every this many turns
	// (and after each DESTROY, and at the end); the lines are read and
	// checked every turn.
	every int
	// checkpoint is the state at the last whole check.
	checkpoint *State
}

func (c *checker) fail(format string, a ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, a...)
	}
}

func (c *checker) sent(side rules.Side, line string) {
	c.models[side].inbox = append(c.models[side].inbox, line)
}

func parseRC(s string, n int) (int, bool) {
	f := strings.Split(s, " ")
	if len(f) != 2 {
		return 0, false
	}
	r, e1 := strconv.Atoi(f[0])
	cc, e2 := strconv.Atoi(f[1])
	if e1 != nil || e2 != nil || r < 1 || cc < 1 || r > n || cc > n {
		return 0, false
	}
	return (r-1)*n + cc - 1, true
}

// start reads the opening.
func (c *checker) start(s *State) {
	for _, side := range rules.Sides {
		m := c.models[side]
		in := m.inbox
		m.inbox = nil
		if len(in) < 5 || in[0] != "START" || !strings.HasPrefix(in[1], "SIZE ") {
			c.fail("%s opening %q", side, in)
			return
		}
		m.n, _ = strconv.Atoi(in[1][5:])
		m.own, m.known = make([]int, m.n*m.n), make([]bool, m.n*m.n)
		var ok bool
		if m.pos, ok = parseRC(in[2], m.n); !ok {
			c.fail("%s start %q", side, in[2])
		}
		var l int
		fmt.Sscanf(in[3], "AMPLIFIERS %d", &l)
		if l != len(s.amps) {
			c.fail("%s told %d amplifiers, there are %d", side, l, len(s.amps))
		}
		for i := range l {
			q, _ := parseRC(in[4+i], m.n)
			if !s.isAmp(q) {
				c.fail("%s told of an amplifier on %q", side, in[4+i])
			}
		}
		rest := in[4+l:]
		if len(rest) == 0 || rest[0] != "LAID" {
			c.fail("%s opening ends %q", side, rest)
			return
		}
		m.lay()
		if len(rest) == 2 && rest[1] == "TERMINATED" {
			m.active = -1
		} else if len(rest) != 1 {
			c.fail("%s opening ends %q", side, rest)
		}
	}
}

func (m *botModel) step(d byte) int {
	r, cc := m.pos/m.n, m.pos%m.n
	switch d {
	case 'U':
		r--
	case 'D':
		r++
	case 'L':
		cc--
	case 'R':
		cc++
	}
	return r*m.n + cc
}

func (m *botModel) adjacent(a, b int) bool {
	ra, ca, rb, cb := a/m.n, a%m.n, b/m.n, b%m.n
	return (ra == rb && (ca-cb == 1 || cb-ca == 1)) || (ca == cb && (ra-rb == 1 || rb-ra == 1))
}

// lay records the LAID tile on its cell.
func (m *botModel) lay() {
	if m.active < 0 || !m.adjacent(m.pos, m.chains[m.active][len(m.chains[m.active])-1]) {
		m.chains = append(m.chains, nil)
		m.teleported = append(m.teleported, false)
		m.active = len(m.chains) - 1
	}
	m.chains[m.active] = append(m.chains[m.active], m.pos)
	m.own[m.pos] = m.active + 1
}

// readUpdates reads the UPDATE TILE lines sent before a question.
func (c *checker) readUpdates(s *State) {
	for _, side := range rules.Sides {
		m := c.models[side]
		for _, line := range m.inbox {
			rc, ok := strings.CutPrefix(line, "UPDATE TILE ")
			q, ok2 := parseRC(rc, m.n)
			switch {
			case !ok || !ok2:
				c.fail("%s told %q before a question", side, line)
			case m.own[q] != 0:
				c.fail("%s told UPDATE TILE on its own tile %s", side, rc)
			case m.known[q]:
				c.fail("%s told UPDATE TILE on %s, which it knew", side, rc)
			case !s.opponentAt(side, q):
				c.fail("%s told UPDATE TILE on %s, which holds no opponent tile", side, rc)
			}
			if ok2 {
				m.known[q] = true
			}
		}
		if len(m.inbox) > 0 && s.turn%s.opts.K != 0 {
			c.fail("%s told %q before turn %d, not a multiple of k=%d", side, m.inbox, s.turn, s.opts.K)
		}
		m.inbox = nil
	}
}

// turn reads the replies of the move the mover made, and checks the true
// board and the models against the referee.
func (c *checker) turn(before, after *State, mv Move) {
	me := before.ToMove()
	m, other := c.models[me], c.models[me.Other()]
	in := m.inbox
	if len(in) == 0 || in[len(in)-1] != "TURNOVER" {
		c.fail("the mover's replies %q do not end in TURNOVER", in)
		return
	}
	in = in[:len(in)-1]
	next := func() string {
		if len(in) == 0 {
			return ""
		}
		l := in[0]
		in = in[1:]
		return l
	}
	var destroyed []int
	switch mv.Kind {
	case Info:
		var i int
		if _, err := fmt.Sscanf(next(), "HINT %d", &i); err != nil || i != int(before.board[m.pos].idx) {
			c.fail("HINT %d on a tile of index %d", i, before.board[m.pos].idx)
		}
		m.points -= 4
	case Destroy:
		l := next()
		if l == "FAILED" {
			m.points -= 8
			if before.board[m.pos].idx == 1 {
				c.fail("FAILED on a tail")
			}
			break
		}
		var n int
		if _, err := fmt.Sscanf(l, "DESTROYED %d", &n); err != nil {
			c.fail("DESTROY answered %q", l)
			break
		}
		m.points += 3 * n
		for range n {
			q, ok := parseRC(next(), m.n)
			if !ok || m.own[q] != 0 {
				c.fail("DESTROYED names a bad cell")
				continue
			}
			m.known[q] = false
			destroyed = append(destroyed, q)
		}
		if !slices.IsSorted(destroyed) {
			c.fail("DESTROYED cells not in reading order: %v", destroyed)
		}
		x := before.board[before.pos[me]]
		if x.owner < 0 {
			c.fail("DESTROYED off an opponent tile")
			break
		}
		if x.idx != 1 || !slices.Equal(destroyed, sortedCells(before.chains[x.owner][x.chain].cells)) {
			c.fail("DESTROYED %v, the chain is %v", destroyed, before.chains[x.owner][x.chain].cells)
		}
		// The owner is told the tail.
		wantTail := "UPDATE DESTROYED " + before.cellName(int(before.chains[x.owner][x.chain].cells[0]))
		if len(other.inbox) != 1 || other.inbox[0] != wantTail {
			c.fail("the owner is told %q, want %q", other.inbox, wantTail)
		}
	default:
		if mv.Terminate {
			if m.active < 0 {
				c.fail("TERMINATE accepted, the bot knows of no active chain")
			}
			m.active = -1
		}
		if mv.Teleport {
			ch := m.own[m.pos] - 1
			if ch < 0 || m.teleported[ch] || mv.Index > len(m.chains[ch]) {
				c.fail("TELEPORT %d accepted from %d", mv.Index, m.pos)
				break
			}
			m.teleported[ch] = true
			m.pos = m.chains[ch][mv.Index-1]
		}
		lay := mv.Lay
		if mv.Dir != 0 {
			m.pos = m.step(mv.Dir)
			if m.own[m.pos] == 0 {
				switch r := next(); r {
				case "EMPTY":
					if m.known[m.pos] || before.opponentAt(me, m.pos) {
						c.fail("EMPTY on an opponent tile")
					}
				case "TILE":
					if !before.opponentAt(me, m.pos) {
						c.fail("TILE on no opponent tile")
					}
					if m.active >= 0 {
						if next() != "TERMINATED" {
							c.fail("TILE without TERMINATED with an active chain")
						}
						m.active = -1
					}
					if !m.known[m.pos] {
						m.known[m.pos] = true
						lay = false
					}
				default:
					c.fail("MOVE answered %q", r)
				}
			}
		}
		if lay {
			switch r := next(); r {
			case "LAID":
				if before.board[m.pos].owner >= 0 {
					c.fail("LAID on a tile")
				}
				m.lay()
				if len(in) > 0 && in[0] == "TERMINATED" {
					next()
					m.active = -1
					if t := before.board[m.pos].terrain; t != Terminator && (t != Amplifier || !before.opts.AmplifierEndsChain) {
						c.fail("LAID TERMINATED on %c", t)
					}
				} else if before.board[m.pos].terrain == Terminator {
					c.fail("LAID on a terminator without TERMINATED")
				}
			case "TILE":
				if next() != "TERMINATED" || !before.opponentAt(me, m.pos) || m.known[m.pos] {
					c.fail("LAY answered TILE wrongly")
				}
				m.known[m.pos] = true
				m.active = -1
			default:
				c.fail("LAY answered %q", r)
			}
		}
	}
	if len(in) > 0 {
		c.fail("replies left over: %q", in)
	}
	m.inbox = nil
	// The other side: UPDATE DESTROYED names the tail of one of its chains.
	for _, line := range other.inbox {
		rc, ok := strings.CutPrefix(line, "UPDATE DESTROYED ")
		q, ok2 := parseRC(rc, other.n)
		if !ok || !ok2 || other.own[q] == 0 || other.chains[other.own[q]-1][0] != q {
			c.fail("%s told %q, not the tail of one of its chains", me.Other(), line)
			continue
		}
		ch := other.own[q] - 1
		for _, p := range other.chains[ch] {
			other.own[p] = 0
		}
		other.chains[ch] = nil
		if other.active == ch {
			other.active = -1
		}
	}
	if mv.Kind == Destroy && len(destroyed) > 0 && len(other.inbox) != 1 {
		c.fail("a destroyed chain's owner was told %q", other.inbox)
	}
	other.inbox = nil
	if after.turn%c.every == 0 || len(destroyed) > 0 || after.over.Over {
		// No tile went between the checkpoint and this turn; this turn's
		// are the DESTROYED chain's.
		if c.checkpoint.turn != before.turn {
			c.checkTiles(c.checkpoint, before, nil)
		}
		c.checkTiles(before, after, destroyed)
		c.checkChains(after)
		after.snapshotInto(c.checkpoint)
	}
}

// checkTiles: from before to after, tiles only disappear by a successful
// DESTROY of a tail (whose chain's cells, sorted, are destroyed), and a
// surviving tile keeps its owner, chain and index.
func (c *checker) checkTiles(before, after *State, destroyed []int) {
	gone := 0
	b, a := before.board, after.board
	for i := 0; i < len(b); i++ { // index loops: cheaper under -race
		x, y := &b[i], &a[i]
		if x.owner < 0 {
			continue
		}
		if y.owner < 0 {
			gone++
			if _, ok := slices.BinarySearch(destroyed, i); !ok {
				c.fail("the tile on %s disappeared by no DESTROY, turns %d to %d", before.cellName(i), before.turn, after.turn)
			}
			continue
		}
		if x.owner != y.owner || x.chain != y.chain || x.idx != y.idx {
			c.fail("the tile on %s changed from %+v to %+v", before.cellName(i), *x, *y)
		}
	}
	if gone != len(destroyed) {
		c.fail("%d tiles gone, %d destroyed", gone, len(destroyed))
	}
}

// checkChains: every chain's indexes are 1..L without gaps, its tiles touch
// in order, and every tile on the board is in its chain; knowledge is of
// real opponent tiles only.
func (c *checker) checkChains(s *State) {
	for _, side := range rules.Sides {
		count := 0
		for ci, ch := range s.chains[side] {
			if ch.destroyed {
				continue
			}
			if len(ch.cells) == 0 {
				c.fail("%s chain %d is empty", side, ci+1)
			}
			for j, q := range ch.cells {
				x := s.board[q]
				if rules.Side(x.owner) != side || int(x.chain) != ci || int(x.idx) != j+1 {
					c.fail("%s chain %d tile %d on %s reads %+v", side, ci+1, j+1, s.cellName(int(q)), x)
				}
				if j > 0 && !s.adjacent(int(q), int(ch.cells[j-1])) {
					c.fail("%s chain %d: tiles %d and %d do not touch", side, ci+1, j, j+1)
				}
			}
			count += len(ch.cells)
		}
		if count != s.tiles[side] {
			c.fail("%s: %d tiles in chains, %d counted", side, count, s.tiles[side])
		}
		if a := s.active[side]; a >= 0 && s.chains[side][a].destroyed {
			c.fail("%s's active chain was destroyed", side)
		}
	}
	onBoard := 0
	board, kw, kb := s.board, s.known[W], s.known[B]
	for i := 0; i < len(board); i++ {
		o := board[i].owner
		if o >= 0 {
			onBoard++
		}
		if (kw[i] && o != int8(B)) || (kb[i] && o != int8(W)) {
			c.fail("a bot knows a tile on %s that is not there", s.cellName(i))
		}
	}
	if onBoard != s.tiles[0]+s.tiles[1] {
		c.fail("%d tiles on the board, %d in chains", onBoard, s.tiles[0]+s.tiles[1])
	}
}

// checkModels: what each bot can know agrees with the referee. It is checked
// before each question, once the bot has read the lines sent before it, and
// at the end.
func (c *checker) checkModels(s *State) {
	for _, side := range rules.Sides {
		m := c.models[side]
		if m.pos != s.pos[side] {
			c.fail("%s thinks it stands on %d, it stands on %d", side, m.pos, s.pos[side])
		}
		if m.active != s.active[side] {
			c.fail("%s thinks chain %d is active, the referee %d", side, m.active+1, s.active[side]+1)
		}
		if len(m.chains) != len(s.chains[side]) {
			c.fail("%s thinks it started %d chains, the referee %d", side, len(m.chains), len(s.chains[side]))
			return
		}
		for i, ch := range s.chains[side] {
			if ch.destroyed != (m.chains[i] == nil) || (!ch.destroyed && !slices.Equal(m.chains[i], ints(ch.cells))) {
				c.fail("%s's chain %d: it thinks %v, the referee %v", side, i+1, m.chains[i], ch.cells)
			}
			if m.teleported[i] != ch.teleported {
				c.fail("%s's chain %d teleported: %v, the referee %v", side, i+1, m.teleported[i], ch.teleported)
			}
		}
		if !slices.Equal(m.known, s.known[side]) {
			c.fail("%s's knowledge differs from the referee's", side)
		}
	}
}

func ints(cells []int32) []int {
	out := make([]int, len(cells))
	for i, q := range cells {
		out[i] = int(q)
	}
	return out
}

// randomOptions varies the board, the length and the rulings with the seed;
// even seeds play the defaults, one seed in four a map file.
func randomOptions(seed uint64) Options {
	o := DefaultOptions()
	if seed%2 == 0 {
		return o
	}
	rng := rand.New(rand.NewPCG(seed, 0x0b7))
	o.Size = 3 + rng.IntN(10)
	room := o.Size*o.Size - 2
	o.Terminators = rng.IntN(room/3 + 1)
	o.Amplifiers = rng.IntN(room - o.Terminators + 1)
	o.Turns = 1 + rng.IntN(210)
	o.K = 1 + rng.IntN(15)
	o.AmplifierEndsChain = rng.IntN(2) == 0
	if seed%4 == 3 {
		// A map file, dense with terminators and amplifiers, start cells
		// included.
		m := Map{N: o.Size, Cells: make([]byte, o.Size*o.Size)}
		for i := range m.Cells {
			m.Cells[i] = "EEETA"[rng.IntN(5)]
		}
		o.Map = &m
	}
	return o
}

// checkGame plays one seeded random game, checking every turn, and returns
// its outcome and turns.
func checkGame(seed uint64) (rules.Outcome, int, error) {
	o := randomOptions(seed)
	s, err := NewState(o, seed)
	if err != nil {
		return rules.Outcome{}, 0, err
	}
	c := &checker{models: [2]*botModel{newModel(W), newModel(B)}, every: 1, checkpoint: &State{}}
	if seed >= wholeChecks {
		c.every = 8
	}
	s.snapshotInto(c.checkpoint)
	l := &hooks{c: c, s: s, first: true}
	turns := runMatch(s, randomPicker(seed), l)
	if c.err == nil {
		c.checkModels(s)
	}
	if c.err != nil {
		return s.Outcome(), turns, c.err
	}
	// Points from the final board and the action log, recomputed.
	m := s.Map()
	for _, side := range rules.Sides {
		want := c.models[side].points
		for _, ch := range s.chains[side] {
			if ch.destroyed {
				continue
			}
			want += 2 * len(ch.cells)
			r, cc := s.rc(int(ch.cells[0]))
			if m.At(r, cc) == Amplifier {
				want += len(ch.cells)
			}
		}
		if got := s.Points()[side]; got != want {
			return s.Outcome(), turns, fmt.Errorf("%s has %d points, recomputed %d", side, got, want)
		}
	}
	out := s.Outcome()
	p := s.Points()
	switch {
	case !out.Over:
		return out, turns, fmt.Errorf("not over")
	case turns > o.Turns:
		return out, turns, fmt.Errorf("%d turns, the game lasts %d", turns, o.Turns)
	case out.Reason == ReasonPoints && turns != o.Turns:
		return out, turns, fmt.Errorf("ended on points after %d of %d turns", turns, o.Turns)
	case out.Reason == ReasonNoTiles && s.tiles[0] != 0 && s.tiles[1] != 0:
		return out, turns, fmt.Errorf("no-tiles, but both have tiles")
	case out.Reason != ReasonPoints && out.Reason != ReasonNoTiles:
		return out, turns, fmt.Errorf("reason %q", out.Reason)
	case p[0] > p[1] && out.Winner != W, p[1] > p[0] && out.Winner != B, p[0] == p[1] && out.Winner != rules.NoSide:
		return out, turns, fmt.Errorf("points %v, winner %s", p, out.Winner)
	}
	return out, turns, nil
}

// hooks feeds the checker in the order the lines arrive: the opening is read
// before the first question, the updates before each question.
type hooks struct {
	c     *checker
	s     *State
	first bool
}

func (h *hooks) sent(side rules.Side, line string) { h.c.sent(side, line) }

func (h *hooks) asked(rules.Side, string, string) {
	if h.c.err != nil {
		return // the first failure is reported; the models are off from here
	}
	if h.first {
		h.first = false
		h.c.start(h.s)
	}
	h.c.readUpdates(h.s)
	if h.s.turn%h.c.every == 0 {
		h.c.checkModels(h.s)
		h.c.checkLegal(h.s)
	}
}

func (h *hooks) turn(before, after *State, m Move) {
	if h.c.err == nil {
		h.c.turn(before, after, m)
	}
}

// checkLegal: Judge accepts exactly the lines LegalMoves lists, in the
// order it lists them, among every well-formed line with a TELEPORT index up
// to two past the longest chain.
func (c *checker) checkLegal(s *State) {
	legal := s.LegalMoves()
	k := 0
	try := func(m Move) {
		f, _ := s.check(m) // Judge's verdict, without making its error
		var next Move
		if k < len(legal) {
			next, _ = asMove(legal[k])
		}
		switch {
		case f == valid && (k == len(legal) || next != m):
			c.fail("turn %d: %q is valid but LegalMoves has %q in its place", s.turn, m, next)
		case f == valid:
			k++
		case k < len(legal) && next == m:
			c.fail("turn %d: LegalMoves lists %q, judged %v", s.turn, m, s.Judge(m))
			k++
		}
	}
	longest := 0
	for _, ch := range s.chains[s.ToMove()] {
		longest = max(longest, len(ch.cells))
	}
	try(Move{Kind: Info})
	try(Move{Kind: Destroy})
	for t := range 2 {
		for i := -1; i <= longest+1; i++ {
			for _, d := range [5]byte{0, 'U', 'D', 'L', 'R'} {
				for l := range 2 {
					m := Move{Terminate: t == 1, Teleport: i >= 0, Index: max(i, 0), Dir: d, Lay: l == 1}
					if m.Terminate || m.Teleport || m.Dir != 0 || m.Lay {
						try(m)
					}
				}
			}
		}
	}
	if k != len(legal) {
		c.fail("turn %d: LegalMoves lists %d lines, %d were found valid", s.turn, len(legal), k)
	}
}

// wholeChecks is how many games check the whole board and the models every
// turn; the others every 8 turns, after each DESTROY and at the end.
const wholeChecks = 1000

func TestRandomGames(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	workers := min(runtime.GOMAXPROCS(0), 2)
	var mu sync.Mutex
	reasons := map[string]int{}
	wins := map[rules.Side]int{}
	total := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := uint64(w); seed < uint64(n); seed += uint64(workers) {
				out, turns, err := checkGame(seed)
				mu.Lock()
				reasons[out.Reason]++
				wins[out.Winner]++
				total += turns
				mu.Unlock()
				if err != nil {
					t.Errorf("seed %d (%+v): %v", seed, randomOptions(seed), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d games, %d turns: reasons %v, wins %v", n, total, reasons, wins)
	if reasons[ReasonNoTiles] == 0 || wins[rules.NoSide] == 0 {
		t.Errorf("random games never ended by no-tiles or never drew: %v %v", reasons, wins)
	}
}

func sortedCells(cells []int32) []int {
	out := ints(cells)
	slices.Sort(out)
	return out
}
