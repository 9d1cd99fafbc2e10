package codeclash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/arenabots/arena/rules"
)

// Abilities.
const (
	Fog       = "fog"
	PawnReset = "pawnReset"
	Shield    = "shield"
)

var abilityNames = []string{Fog, PawnReset, Shield}

// Move is one turn's answer. In setup, To is the square placed on (or blocked)
// and Place the piece placed; in play, From and To move a piece and Ability is
// optionally activated after it.
type Move struct {
	Setup   bool
	Place   Kind // setup: the piece placed; None for step 2 (block)
	From    Square
	To      Square
	Ability string // "" for none; may be an unknown name, which Judge refuses
	Target  *Square
}

func (m Move) String() string {
	var s string
	switch {
	case m.Setup && m.Place == None:
		s = "block " + m.To.String()
	case m.Setup:
		s = "place " + string(m.Place) + " " + m.To.String()
	default:
		s = m.From.String() + "-" + m.To.String()
	}
	if m.Ability != "" {
		s += " +" + m.Ability
		if m.Ability == Shield && m.Target != nil {
			s += m.Target.String()
		}
	}
	return s
}

// setupOrder is who places what on each of the 18 setup turns: W K, B K, W block,
// B block, W R, B R, W R, B R, then W and B alternate five times for step 4.
func setupStep(idx int) int {
	switch {
	case idx < 2:
		return 1
	case idx < 4:
		return 2
	case idx < 8:
		return 3
	}
	return 4
}

// SetupTurns is the number of placements before play.
const SetupTurns = 18

// Piece counts per side.
const (
	maxBishops = 2
	maxPawns   = 3
)

// State is a Code Clash position. It implements rules.State.
type State struct {
	opts Options
	seed uint64

	board    Board
	blocked  []Square // in placement order
	setupIdx int      // placements done, 0..18
	plies    int      // play plies done
	toMove   rules.Side

	remaining [2]map[string]bool // abilities each side still has
	// fogLeft[s] is how many of s's coming turns are fogged.
	fogLeft [2]int
	// shield protects shieldSq from shieldAgainst during its next turn.
	shieldOn      bool
	shieldSq      Square
	shieldAgainst rules.Side
	// resetSeen[s]: s is shown the opponent's pawnReset on its next turn.
	resetSeen [2]bool
	// activatedAt[s][name] is the turn an ability against s was activated, to
	// list them in order.
	activatedAt [2]map[string]int

	pawnStart [2][]Square // pawn squares at the end of setup
	outcome   rules.Outcome
	seen      map[string]int // position counts, when the repetition rule is on
}

// NewState starts a game with the given options and seed.
func NewState(opts Options, seed uint64) *State {
	s := &State{opts: opts, seed: seed, toMove: rules.White, outcome: rules.Outcome{Winner: rules.NoSide}}
	for _, side := range rules.Sides {
		s.remaining[side] = map[string]bool{Fog: true, PawnReset: true, Shield: true}
		s.activatedAt[side] = map[string]int{}
	}
	return s
}

// ToMove implements rules.State.
func (s *State) ToMove() rules.Side { return s.toMove }

// Phase implements rules.State.
func (s *State) Phase() string {
	if s.setupIdx < SetupTurns {
		return "setup"
	}
	return "play"
}

// Turn implements rules.State.
func (s *State) Turn() int { return s.setupIdx + s.plies }

// Plies is the number of play plies played.
func (s *State) Plies() int { return s.plies }

// TurnNumber is the view's turnNumber: 0 in setup, then 1 for White's first
// play move, counting plies.
func (s *State) TurnNumber() int {
	if s.Phase() == "play" {
		return s.plies + 1
	}
	return 0
}

// SetupStep is the setup step of the side to move (1-4), or 0 in play.
func (s *State) SetupStep() int {
	if s.setupIdx >= SetupTurns {
		return 0
	}
	return setupStep(s.setupIdx)
}

// Board returns the true board.
func (s *State) Board() Board { return s.board }

// Outcome implements rules.State.
func (s *State) Outcome() rules.Outcome { return s.outcome }

// Options returns the rule options in force.
func (s *State) Options() Options { return s.opts }

// Clone implements rules.State.
func (s *State) Clone() rules.State { return s.clone() }

func (s *State) clone() *State {
	c := *s
	c.blocked = slices.Clone(s.blocked)
	for _, side := range rules.Sides {
		c.remaining[side] = cloneMap(s.remaining[side])
		c.activatedAt[side] = cloneMap(s.activatedAt[side])
		c.pawnStart[side] = slices.Clone(s.pawnStart[side])
	}
	if s.seen != nil {
		c.seen = cloneMap(s.seen)
	}
	return &c
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (s *State) isBlocked(q Square) bool {
	return slices.Contains(s.blocked, q)
}

// blockedShown reports whether the blocked tiles mean anything now: during
// setup, where no piece may be placed on them, and in play only under
// blockedTilesInPlay; elsewhere they are ordinary empty squares and are
// drawn as such.
func (s *State) blockedShown() bool {
	return s.Phase() != "play" || s.opts.BlockedTilesInPlay
}

// inPlayObstacle is the obstacle function of the play phase.
func (s *State) inPlayObstacle() obstacle {
	if s.opts.BlockedTilesInPlay && len(s.blocked) > 0 {
		return s.isBlocked
	}
	return func(Square) bool { return false }
}

func (s *State) count(side rules.Side, k Kind) int {
	n := 0
	for r := range Size {
		for c := range Size {
			if p := s.board[r][c]; p.Kind == k && p.Side == side {
				n++
			}
		}
	}
	return n
}

// Judge implements rules.State.
func (s *State) Judge(mv rules.Move) error {
	m, ok := mv.(Move)
	if !ok {
		return rules.Illegalf("not a Code Clash move: %T", mv)
	}
	if s.outcome.Over {
		return rules.Illegalf("the game is over")
	}
	if s.Phase() == "setup" {
		return s.judgeSetup(m)
	}
	return s.judgePlay(m)
}

func (s *State) judgeSetup(m Move) error {
	me := s.toMove
	if !m.Setup {
		return rules.Illegalf("it is setup step %d, not a play move", s.SetupStep())
	}
	if m.Ability != "" {
		return rules.Illegalf("abilities cannot be used during setup (ability %q)", m.Ability)
	}
	if !m.To.onBoard() {
		return rules.Illegalf("to %v is off the board", m.To)
	}
	step := s.SetupStep()
	want := map[int]Kind{1: King, 2: None, 3: Rook}[step]
	if step == 4 {
		switch m.Place {
		case Bishop:
			if s.count(me, Bishop) >= maxBishops {
				return rules.Illegalf("you have placed both bishops already; place a pawn (from [0,4])")
			}
		case Pawn:
			if s.count(me, Pawn) >= maxPawns {
				return rules.Illegalf("you have placed all three pawns already; place a bishop (from [0,3])")
			}
		case None:
			return rules.Illegalf("setup step 4 needs from: [0,3] for a bishop or [0,4] for a pawn")
		default:
			return rules.Illegalf("setup step 4 places bishops and pawns, not a %s (from %v)", m.Place.name(), typeCode(m.Place))
		}
	} else if m.Place != want {
		return rules.Illegalf("setup step %d places a %s, not a %s", step, want.name(), m.Place.name())
	}
	if !s.board.at(m.To).empty() {
		return rules.Illegalf("to %v is occupied by a %s %s", m.To, s.board.at(m.To).Side, s.board.at(m.To).Kind.name())
	}
	if s.isBlocked(m.To) {
		return rules.Illegalf("to %v is a blocked tile", m.To)
	}
	rowsOf := me
	if step == 2 {
		rowsOf = me.Other()
	}
	if !homeRow(rowsOf, m.To.R) {
		what := "your own back two rows"
		if step == 2 {
			what = "the opponent's back two rows"
		}
		return rules.Illegalf("to %v is not in %s (%s)", m.To, what, rowNames(rowsOf))
	}
	return nil
}

func rowNames(s rules.Side) string {
	if s == rules.White {
		return "rows 0 and 1"
	}
	return "rows 3 and 4"
}

func (s *State) judgePlay(m Move) error {
	me := s.toMove
	if m.Setup {
		return rules.Illegalf("the game is in play; a placement is not a move")
	}
	if !m.From.onBoard() {
		return rules.Illegalf("from %v is off the board", m.From)
	}
	if !m.To.onBoard() {
		return rules.Illegalf("to %v is off the board", m.To)
	}
	p := s.board.at(m.From)
	switch {
	case p.empty():
		return rules.Illegalf("from %v holds no piece", m.From)
	case p.Side != me:
		return rules.Illegalf("from %v holds a %s %s; you are %s", m.From, p.Side, p.Kind.name(), me)
	case m.From == m.To:
		return rules.Illegalf("from and to are the same square %v", m.From)
	}
	if ok, why := s.board.canMove(m.From, m.To, s.inPlayObstacle()); !ok {
		return rules.Illegalf("%s", why)
	}
	if s.shieldOn && s.shieldAgainst == me && m.To == s.shieldSq {
		return rules.Illegalf("the %s on %v is shielded this turn", s.board.at(m.To).Kind.name(), m.To)
	}
	if m.Ability == "" {
		return nil
	}
	if !slices.Contains(abilityNames, m.Ability) {
		return rules.Illegalf("unknown ability %q (fog, pawnReset or shield)", m.Ability)
	}
	if !s.remaining[me][m.Ability] {
		return rules.Illegalf("ability %s was already used", m.Ability)
	}
	if m.Ability == Shield {
		if m.Target == nil {
			return rules.Illegalf("shield needs a target: one of your pieces")
		}
		if !m.Target.onBoard() {
			return rules.Illegalf("shield target %v is off the board", *m.Target)
		}
		after := s.board
		after.set(m.To, after.at(m.From))
		after.set(m.From, Piece{})
		if q := after.at(*m.Target); q.empty() || q.Side != me {
			return rules.Illegalf("shield target %v is not your piece after the move", *m.Target)
		}
	}
	return nil
}

// Apply implements rules.State.
func (s *State) Apply(mv rules.Move) error {
	if err := s.Judge(mv); err != nil {
		return err
	}
	m := mv.(Move)
	me := s.toMove
	if s.Phase() == "setup" {
		s.applySetup(m)
	} else {
		s.applyPlay(m)
	}
	s.toMove = me.Other()
	s.checkEnd()
	return nil
}

func (s *State) applySetup(m Move) {
	me := s.toMove
	if m.Place == None {
		s.blocked = append(s.blocked, m.To)
	} else {
		s.board.set(m.To, Piece{Kind: m.Place, Side: me})
	}
	s.setupIdx++
	if s.setupIdx == SetupTurns {
		for _, side := range rules.Sides {
			s.pawnStart[side] = s.pawnSquares(side)
		}
	}
}

func (s *State) pawnSquares(side rules.Side) []Square {
	var out []Square
	for r := range Size {
		for c := range Size {
			if p := s.board[r][c]; p.Kind == Pawn && p.Side == side {
				out = append(out, sq(r, c))
			}
		}
	}
	return out
}

func (s *State) applyPlay(m Move) {
	me := s.toMove
	p := s.board.at(m.From)
	captured := s.board.at(m.To)
	s.board.set(m.From, Piece{})
	if p.Kind == Pawn && m.To.R == promotionRow(me) {
		p.Kind = Queen
	}
	s.board.set(m.To, p)
	s.plies++

	// Effects that applied to this turn of mine are spent.
	if s.fogLeft[me] > 0 {
		s.fogLeft[me]--
	}
	if s.shieldOn && s.shieldAgainst == me {
		s.shieldOn = false
	}
	s.resetSeen[me] = false

	if captured.Kind == King {
		s.outcome = rules.Outcome{Over: true, Winner: me, Reason: rules.ReasonKingCaptured}
		return
	}
	turn := s.Turn()
	switch m.Ability {
	case Fog:
		s.fogLeft[me.Other()] = 3
	case Shield:
		s.shieldOn, s.shieldSq, s.shieldAgainst = true, *m.Target, me.Other()
	case PawnReset:
		s.pawnReset(me, turn)
		s.resetSeen[me.Other()] = true
	}
	if m.Ability != "" {
		s.remaining[me][m.Ability] = false
		s.activatedAt[me.Other()][m.Ability] = turn
	}
}

// pawnReset moves side's pawns back towards the squares they started play on.
// Pawns already on a start square stay; the others, shuffled with the match's
// seeded generator, fill the empty start squares in row-major order until
// either runs out. Promoted pawns are queens and do not move.
func (s *State) pawnReset(side rules.Side, turn int) {
	home := map[Square]bool{}
	for _, q := range s.pawnStart[side] {
		home[q] = true
	}
	var movers, free []Square
	for _, q := range s.pawnSquares(side) {
		if !home[q] {
			movers = append(movers, q)
		}
	}
	for r := range Size {
		for c := range Size {
			if q := sq(r, c); home[q] && s.board.at(q).empty() {
				free = append(free, q)
			}
		}
	}
	rng := rand.New(rand.NewPCG(s.seed, uint64(turn)))
	rng.Shuffle(len(movers), func(i, j int) { movers[i], movers[j] = movers[j], movers[i] })
	for i := 0; i < len(movers) && i < len(free); i++ {
		s.board.set(free[i], s.board.at(movers[i]))
		s.board.set(movers[i], Piece{})
	}
}

func (s *State) checkEnd() {
	if s.outcome.Over || s.Phase() == "setup" {
		return
	}
	if s.opts.Repetition > 0 {
		if s.seen == nil {
			s.seen = map[string]int{}
		}
		k := s.positionKey()
		s.seen[k]++
		if s.seen[k] >= s.opts.Repetition {
			s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonRepetition}
			return
		}
	}
	if s.plies >= s.opts.MaxPlies {
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonMaxPlies}
		return
	}
	if len(s.legalMoves(true)) == 0 {
		s.outcome = rules.Outcome{Over: true, Winner: rules.NoSide, Reason: rules.ReasonNoLegalMove}
		if s.opts.NoMoveResult == "loss" {
			s.outcome.Winner = s.toMove.Other()
		}
	}
}

func (s *State) positionKey() string {
	var b strings.Builder
	for r := range Size {
		for c := range Size {
			p := s.board[r][c]
			b.WriteByte(byte(p.Kind) + byte(p.Side)*32)
		}
	}
	fmt.Fprintf(&b, "%d%v%v%d%d%v", s.toMove, s.remaining[0], s.remaining[1], s.fogLeft[0], s.fogLeft[1], s.shieldOn)
	return b.String()
}

// LegalMoves implements rules.State. Moves carry no ability; Abilities lists
// those the mover may add.
func (s *State) LegalMoves() []rules.Move {
	ms := s.legalMoves(false)
	out := make([]rules.Move, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// Moves is LegalMoves with the concrete type.
func (s *State) Moves() []Move { return s.legalMoves(false) }

// legalMoves generates in row-major order of from, then of to. With any it
// stops at the first move found.
func (s *State) legalMoves(any bool) []Move {
	if s.outcome.Over {
		return nil
	}
	me := s.toMove
	var out []Move
	if s.Phase() == "setup" {
		step := s.SetupStep()
		kinds := map[int][]Kind{1: {King}, 2: {None}, 3: {Rook}}[step]
		if step == 4 {
			if s.count(me, Bishop) < maxBishops {
				kinds = append(kinds, Bishop)
			}
			if s.count(me, Pawn) < maxPawns {
				kinds = append(kinds, Pawn)
			}
		}
		rowsOf := me
		if step == 2 {
			rowsOf = me.Other()
		}
		for _, k := range kinds {
			for r := range Size {
				for c := range Size {
					q := sq(r, c)
					if homeRow(rowsOf, q.R) && s.board.at(q).empty() && !s.isBlocked(q) {
						out = append(out, Move{Setup: true, Place: k, To: q})
						if any {
							return out
						}
					}
				}
			}
		}
		return out
	}
	blocked := s.inPlayObstacle()
	for r := range Size {
		for c := range Size {
			from := sq(r, c)
			if p := s.board.at(from); p.empty() || p.Side != me {
				continue
			}
			var tos []Square
			s.board.targets(from, blocked, func(to Square) {
				if ok, _ := s.board.canMove(from, to, blocked); !ok {
					return
				}
				if s.shieldOn && s.shieldAgainst == me && to == s.shieldSq {
					return
				}
				tos = append(tos, to)
			})
			slices.SortFunc(tos, func(a, b Square) int { return a.index() - b.index() })
			for _, to := range tos {
				out = append(out, Move{From: from, To: to})
				if any {
					return out
				}
			}
		}
	}
	return out
}

// Abilities lists the abilities the side to move may activate this turn.
func (s *State) Abilities() []string {
	out := []string{}
	if s.outcome.Over || s.Phase() == "setup" {
		return out
	}
	for _, a := range abilityNames {
		if s.remaining[s.toMove][a] {
			out = append(out, a)
		}
	}
	return out
}

// visible reports which squares side sees: its own pieces and every square one
// of them could move to or capture on.
func (s *State) visible(side rules.Side) [Size][Size]bool {
	var v [Size][Size]bool
	blocked := s.inPlayObstacle()
	for r := range Size {
		for c := range Size {
			from := sq(r, c)
			if p := s.board.at(from); p.empty() || p.Side != side {
				continue
			}
			v[r][c] = true
			s.board.targets(from, blocked, func(to Square) { v[to.R][to.C] = true })
		}
	}
	return v
}

// Render draws the board for a terminal: upper case White, lower case Black,
// '#' a blocked tile, '.' empty.
func (s *State) Render() string {
	var b strings.Builder
	b.WriteString("   0 1 2 3 4\n")
	for r := range Size {
		fmt.Fprintf(&b, "%d  ", r)
		for c := range Size {
			p := s.board[r][c]
			ch := byte('.')
			switch {
			case !p.empty() && p.Side == rules.White:
				ch = byte(p.Kind)
			case !p.empty():
				ch = byte(p.Kind) + 'a' - 'A'
			case s.blockedShown() && s.isBlocked(sq(r, c)):
				ch = '#'
			}
			b.WriteByte(ch)
			if c < Size-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Frame implements rules.Framer.
func (s *State) Frame(viewer rules.Side) rules.Frame {
	f := rules.Frame{Cells: make([][]string, Size)}
	fogged := viewer != rules.NoSide && s.Phase() == "play" && s.fogLeft[viewer] > 0
	var vis [Size][Size]bool
	if fogged {
		vis = s.visible(viewer)
	}
	for r := range Size {
		f.Cells[r] = make([]string, Size)
		for c := range Size {
			p := s.board[r][c]
			switch {
			case fogged && !vis[r][c]:
				f.Cells[r][c] = "?"
			case p.empty():
			case p.Side == rules.White:
				f.Cells[r][c] = string(p.Kind)
			default:
				f.Cells[r][c] = strings.ToLower(string(p.Kind))
			}
		}
	}
	if s.blockedShown() {
		for _, q := range s.blocked {
			f.Blocked = append(f.Blocked, [2]int{int(q.R), int(q.C)})
		}
	}
	if s.shieldOn {
		f.Shielded = &[2]int{int(s.shieldSq.R), int(s.shieldSq.C)}
		f.Notes = append(f.Notes, fmt.Sprintf("%s's piece on %v is shielded from %s this turn", s.shieldAgainst.Other(), s.shieldSq, s.shieldAgainst))
	}
	for _, side := range rules.Sides {
		if s.fogLeft[side] > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s is fogged for %d more turn(s)", side, s.fogLeft[side]))
		}
		if s.resetSeen[side] {
			f.Notes = append(f.Notes, fmt.Sprintf("%s's pawns were just reset", side.Other()))
		}
		var left []string
		for _, a := range abilityNames {
			if s.remaining[side][a] {
				left = append(left, a)
			}
		}
		if len(left) == 0 {
			left = []string{"none"}
		}
		f.Notes = append(f.Notes, fmt.Sprintf("%s's abilities left: %s", side, strings.Join(left, ", ")))
	}
	return f
}

// Perft implements rules.Perfter: positions depth turns ahead (setup
// placements included), moves without abilities.
func (s *State) Perft(depth int) int64 {
	if depth == 0 || s.outcome.Over {
		return 1
	}
	var n int64
	for _, m := range s.legalMoves(false) {
		c := s.clone()
		c.Apply(m)
		n += c.Perft(depth - 1)
	}
	return n
}
