package codeclash

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

func TestSetupOrderAlternatesEighteenPlacements(t *testing.T) {
	s := NewState(DefaultOptions(), 7)
	want := []struct {
		side rules.Side
		step int
	}{
		{rules.White, 1}, {rules.Black, 1}, {rules.White, 2}, {rules.Black, 2},
		{rules.White, 3}, {rules.Black, 3}, {rules.White, 3}, {rules.Black, 3},
		{rules.White, 4}, {rules.Black, 4}, {rules.White, 4}, {rules.Black, 4}, {rules.White, 4},
		{rules.Black, 4}, {rules.White, 4}, {rules.Black, 4}, {rules.White, 4}, {rules.Black, 4},
	}
	placements := 0
	for i, w := range want {
		if s.Phase() != "setup" || s.ToMove() != w.side || s.SetupStep() != w.step {
			t.Fatalf("turn %d: phase %s, %s to move at step %d; want %s at step %d", i, s.Phase(), s.ToMove(), s.SetupStep(), w.side, w.step)
		}
		moves := s.Moves()
		if len(moves) == 0 {
			t.Fatalf("turn %d: no legal placement", i)
		}
		mustApply(t, s, moves[0])
		placements++
	}
	if s.Phase() != "play" || s.ToMove() != rules.White || placements != SetupTurns {
		t.Fatalf("after setup: phase %s, %s to move", s.Phase(), s.ToMove())
	}
	for _, side := range rules.Sides {
		if s.count(side, King) != 1 || s.count(side, Rook) != 2 || s.count(side, Bishop) != 2 || s.count(side, Pawn) != 3 {
			t.Errorf("%s has the wrong pieces after setup:\n%s", side, s.Render())
		}
	}
	if len(s.blocked) != 2 {
		t.Errorf("blocked tiles %v", s.blocked)
	}
}

func TestSetupRulings(t *testing.T) {
	// Each case plays the placements in prefix, then judges the move.
	k := func(r, c int) Move { return Move{Setup: true, Place: King, To: sq(r, c)} }
	blk := func(r, c int) Move { return Move{Setup: true, Place: None, To: sq(r, c)} }
	rook := func(r, c int) Move { return Move{Setup: true, Place: Rook, To: sq(r, c)} }
	bish := func(r, c int) Move { return Move{Setup: true, Place: Bishop, To: sq(r, c)} }
	pawn := func(r, c int) Move { return Move{Setup: true, Place: Pawn, To: sq(r, c)} }
	upToStep4 := []Move{k(0, 2), k(4, 2), blk(3, 0), blk(1, 4), rook(0, 0), rook(4, 0), rook(0, 4), rook(4, 4)}
	cases := []struct {
		name   string
		prefix []Move
		move   Move
		want   string // "" = legal
	}{
		{"white king in row 0", nil, k(0, 0), ""},
		{"white king in row 1", nil, k(1, 4), ""},
		{"white king in row 2 (wrong rows)", nil, k(2, 2), "not in your own back two rows"},
		{"white king in black's rows", nil, k(3, 2), "not in your own back two rows"},
		{"black king in row 4", []Move{k(0, 2)}, k(4, 4), ""},
		{"black king in row 1 (wrong rows)", []Move{k(0, 2)}, k(1, 2), "rows 3 and 4"},
		{"white blocks in black's rows", []Move{k(0, 2), k(4, 2)}, blk(3, 3), ""},
		{"white blocks its own rows", []Move{k(0, 2), k(4, 2)}, blk(1, 3), "opponent's back two rows"},
		{"white blocks the black king's square", []Move{k(0, 2), k(4, 2)}, blk(4, 2), "occupied"},
		{"black blocks in white's rows", []Move{k(0, 2), k(4, 2), blk(3, 3)}, blk(0, 0), ""},
		{"rook on a blocked square", []Move{k(0, 2), k(4, 2), blk(3, 3), blk(1, 1)}, rook(1, 1), "blocked tile"},
		{"rook on the own king", []Move{k(0, 2), k(4, 2), blk(3, 3), blk(1, 1)}, rook(0, 2), "occupied"},
		{"rook in row 2", []Move{k(0, 2), k(4, 2), blk(3, 3), blk(1, 1)}, rook(2, 0), "not in your own back two rows"},
		{"bishop in step 4", upToStep4, bish(0, 1), ""},
		{"pawn in step 4", upToStep4, pawn(1, 0), ""},
		{"step 4 without a piece type", upToStep4, Move{Setup: true, To: sq(0, 1)}, "needs from"},
		{"step 4 placing a king", upToStep4, Move{Setup: true, Place: King, To: sq(0, 1)}, "not a king"},
		{"pawn on a blocked square in step 4", upToStep4, pawn(1, 4), "blocked tile"},
		{"third bishop", append(append([]Move{}, upToStep4...), bish(0, 1), bish(4, 1), bish(0, 3), bish(4, 3)), bish(1, 0), "both bishops"},
		{"fourth pawn", append(append([]Move{}, upToStep4...), pawn(1, 0), pawn(3, 1), pawn(1, 1), pawn(3, 2), pawn(1, 2), pawn(3, 3)), pawn(1, 3), "all three pawns"},
		{"ability during setup", nil, withAbility(k(0, 0), Fog), "cannot be used during setup"},
		{"a play move during setup", nil, mv(0, 0, 1, 0), "not a play move"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewState(DefaultOptions(), 1)
			for _, m := range c.prefix {
				mustApply(t, s, m)
			}
			if c.want == "" {
				if err := s.Judge(c.move); err != nil {
					t.Fatalf("want legal, got %v", err)
				}
				return
			}
			wantIllegal(t, s, c.move, c.want)
		})
	}
}

func TestMovement(t *testing.T) {
	cases := []struct {
		name    string
		diagram string
		toMove  rules.Side
		from    Square
		want    []Square
	}{
		{"king in a corner", `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White, sq(0, 0), squares(0, 1, 1, 0, 1, 1)},
		{"king in the middle, one square each way, own piece excluded", `
. . . . .
. P . . .
. . K . .
. . . p .
. . . . k`, rules.White, sq(2, 2), squares(1, 2, 1, 3, 2, 1, 2, 3, 3, 1, 3, 2, 3, 3)},
		{"rook slides until blocked, captures the first enemy", `
R . P . .
. . . . .
r . . . .
. . . . .
K . . . k`, rules.White, sq(0, 0), squares(0, 1, 1, 0, 2, 0)},
		{"bishop slides diagonally, stops at the edge and at pieces", `
. . . . .
. . . . .
. . B . .
. p . . .
K . . . k`, rules.White, sq(2, 2), squares(1, 1, 0, 0, 1, 3, 0, 4, 3, 1, 3, 3, 4, 4)},
		{"queen combines rook and bishop", `
. . . . .
. . . . .
. . . . .
. . . . .
Q P . . k`, rules.White, sq(4, 0), squares(3, 0, 2, 0, 1, 0, 0, 0, 3, 1, 2, 2, 1, 3, 0, 4)},
		{"white pawn moves down, captures diagonally only", `
. . . . .
. . P . .
. p r . .
. . . . .
K . . . k`, rules.White, sq(1, 2), squares(2, 1)},
		{"black pawn moves up", `
. . . . .
. . . . .
. . . . .
. . p . .
K . . . k`, rules.Black, sq(3, 2), squares(2, 2)},
		{"black pawn captures up-diagonally, not forward", `
. . . . .
. . . . .
. R B . .
. . p . .
K . . . k`, rules.Black, sq(3, 2), squares(2, 1)},
		{"pawn on the edge has one diagonal", `
. . . . .
P . . . .
. r . . .
. . . . .
K . . . k`, rules.White, sq(1, 0), squares(2, 0, 2, 1)},
		{"rook cannot jump", `
R P . . .
P . . . .
. . . . .
. . . . .
K . . . k`, rules.White, sq(0, 0), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := position(t, c.diagram, c.toMove)
			got := targetsOf(s, c.from)
			if !sameSquares(got, c.want) {
				t.Fatalf("moves from %v: got %v, want %v\n%s", c.from, got, c.want, s.Render())
			}
		})
	}
}

func TestMoveReasons(t *testing.T) {
	s := position(t, `
R . P . .
. . . . .
. . p . .
. . . . .
K . . . k`, rules.White)
	cases := []struct {
		m    Move
		want string
	}{
		{mv(1, 1, 2, 1), "from [1,1] holds no piece"},
		{mv(2, 2, 3, 2), "holds a black pawn; you are white"},
		{mv(0, 0, 0, 2), "holds your own pawn"},
		{mv(0, 0, 0, 4), "the path from [0,0] to [0,4] is blocked at [0,2]"},
		{mv(0, 0, 1, 1), "a rook cannot move from [0,0] to [1,1]"},
		{mv(0, 2, 2, 2), "a pawn moves one square forward"},
		{mv(0, 2, 1, 3), "a pawn moves diagonally only to capture"},
		{mv(4, 0, 2, 0), "a king moves one square"},
		{mv(0, 0, 0, 0), "same square"},
		{mv(4, 0, 5, 0), "off the board"},
	}
	for _, c := range cases {
		wantIllegal(t, s, c.m, c.want)
	}
	p := position(t, `
K . . . .
. . . . .
. . . . .
. . P . .
. . . . k`, rules.White)
	wantIllegal(t, p, mv(3, 2, 2, 2), "never moves backwards")
}

func TestPromotionBothColours(t *testing.T) {
	w := position(t, `
k . . . .
. . . . .
. . . . .
P . . . .
. . . . K`, rules.White)
	mustApply(t, w, mv(3, 0, 4, 0))
	if p := w.board.at(sq(4, 0)); p != (Piece{Queen, rules.White}) {
		t.Fatalf("white pawn on row 4 is %+v, want a white queen", p)
	}
	b := position(t, `
K . . . .
. . . p .
. . . . .
. . . . .
. . . . k`, rules.Black)
	mustApply(t, b, mv(1, 3, 0, 3))
	if p := b.board.at(sq(0, 3)); p != (Piece{Queen, rules.Black}) {
		t.Fatalf("black pawn on row 0 is %+v, want a black queen", p)
	}
	c := position(t, `
R . . . .
. p . . .
. . . . .
. . . . .
K . . . k`, rules.Black)
	mustApply(t, c, mv(1, 1, 0, 0))
	if p := c.board.at(sq(0, 0)); p != (Piece{Queen, rules.Black}) {
		t.Fatalf("black pawn capturing onto row 0 is %+v, want a black queen", p)
	}
}

func TestKingMayMoveIntoAttackAndCaptureWins(t *testing.T) {
	s := position(t, `
. . . . .
. . . . .
. . K . .
. . . . r
. . . . k`, rules.White)
	mustApply(t, s, mv(2, 2, 3, 3)) // next to the black rook and king
	if s.Outcome().Over {
		t.Fatalf("game over after a legal king move: %+v", s.Outcome())
	}
	mustApply(t, s, mv(3, 4, 3, 3)) // rook takes the king
	o := s.Outcome()
	if !o.Over || o.Winner != rules.Black || o.Reason != rules.ReasonKingCaptured {
		t.Fatalf("outcome %+v", o)
	}
	wantIllegal(t, s, mv(4, 4, 4, 3), "game is over")
}

func TestShieldBlocksExactlyOneOpponentTurn(t *testing.T) {
	s := position(t, `
K . . . .
. . . . .
. . B . r
. . . . .
. . . . k`, rules.White)
	mustApply(t, s, withAbility(mv(0, 0, 0, 1), Shield, 2, 2))
	view, _ := s.View(rules.Black)
	if !strings.Contains(string(view), `{"name":"shield","turnsLeft":1,"target":[2,2]}`) {
		t.Fatalf("black's view lacks the shield: %s", view)
	}
	wantIllegal(t, s, mv(2, 4, 2, 2), "shielded")
	for _, m := range s.Moves() {
		if m.To == sq(2, 2) {
			t.Fatalf("legal moves include capturing the shielded bishop: %v", m)
		}
	}
	mustApply(t, s, mv(4, 4, 4, 3))
	mustApply(t, s, mv(0, 1, 0, 0))
	view, _ = s.View(rules.Black)
	if strings.Contains(string(view), `"name":"shield"`) {
		t.Fatalf("the shield outlived black's turn: %s", view)
	}
	if err := s.Judge(mv(2, 4, 2, 2)); err != nil {
		t.Fatalf("the bishop is still shielded a turn later: %v", err)
	}
}

func TestShieldTargets(t *testing.T) {
	base := `
K . . . .
. . . . .
. . B . r
. . . . .
. . . . k`
	cases := []struct {
		name string
		m    Move
		want string
	}{
		{"the moved piece at its new square", withAbility(mv(2, 2, 1, 1), Shield, 1, 1), ""},
		{"the square the piece just left", withAbility(mv(2, 2, 1, 1), Shield, 2, 2), "not your piece after the move"},
		{"the king", withAbility(mv(2, 2, 1, 1), Shield, 0, 0), ""},
		{"an opponent's piece", withAbility(mv(2, 2, 1, 1), Shield, 2, 4), "shield target [2,4] is not your piece"},
		{"an empty square", withAbility(mv(2, 2, 1, 1), Shield, 3, 3), "not your piece"},
		{"no target", withAbility(mv(2, 2, 1, 1), Shield), "needs a target"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := position(t, base, rules.White)
			if c.want == "" {
				if err := s.Judge(c.m); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantIllegal(t, s, c.m, c.want)
		})
	}
}

func TestFogLastsExactlyThreeOpponentTurnsAndHidesEmptySquares(t *testing.T) {
	s := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
r . . . k`, rules.White)
	mustApply(t, s, withAbility(mv(0, 0, 0, 1), Fog))
	for n := 3; n >= 1; n-- {
		view, err := s.View(rules.Black)
		if err != nil {
			t.Fatal(err)
		}
		v := string(view)
		want := `{"name":"fog","turnsLeft":` + string(rune('0'+n)) + `,"target":null}`
		if !strings.Contains(v, want) {
			t.Fatalf("turnsLeft %d: view %s", n, v)
		}
		// Black's rook on [4,0] sees its file and row; [2,2] is empty and hidden,
		// [1,0] is empty and visible.
		cells := boardCells(t, view)
		if cells[2][2] != "F" || cells[1][0] != "" || cells[4][0] != "r" || cells[4][4]+cells[3][4] != "k" {
			t.Fatalf("turnsLeft %d: fogged board wrong: %v", n, cells)
		}
		if n == 3 && cells[0][1] != "F" {
			t.Fatalf("the white king on [0,1] is not hidden: %v", cells)
		}
		// Black moves its king back and forth; White shuffles its king.
		if n%2 == 1 {
			mustApply(t, s, mv(4, 4, 3, 4))
		} else {
			mustApply(t, s, mv(3, 4, 4, 4))
		}
		wv, _ := s.View(rules.White)
		if strings.Contains(string(wv), `"F"`) {
			t.Fatalf("white's own view is fogged")
		}
		mustApply(t, s, Move{From: kingSquare(s, rules.White), To: nextTo(s, kingSquare(s, rules.White))})
	}
	view, _ := s.View(rules.Black)
	if strings.Contains(string(view), `"F"`) || strings.Contains(string(view), "fog\",\"turnsLeft") {
		t.Fatalf("fog lasted a fourth turn: %s", view)
	}
}

// boardCells reads a view's board: "" empty, "F" fog, else the piece letter in
// upper case for White and lower case for Black.
func boardCells(t *testing.T, view []byte) [Size][Size]string {
	t.Helper()
	var v struct {
		Board [Size][Size]*struct{ Type, Color string }
	}
	if err := json.Unmarshal(view, &v); err != nil {
		t.Fatal(err)
	}
	var out [Size][Size]string
	for r := range Size {
		for c := range Size {
			cell := v.Board[r][c]
			switch {
			case cell == nil:
			case cell.Color == "black":
				out[r][c] = strings.ToLower(cell.Type)
			default:
				out[r][c] = cell.Type
			}
		}
	}
	return out
}

func kingSquare(s *State, side rules.Side) Square {
	for r := range Size {
		for c := range Size {
			if p := s.board[r][c]; p.Kind == King && p.Side == side {
				return sq(r, c)
			}
		}
	}
	return Square{-1, -1}
}

func nextTo(s *State, from Square) Square {
	for _, m := range s.Moves() {
		if m.From == from && s.board.at(m.To).empty() {
			return m.To
		}
	}
	return from
}

func TestPawnReset(t *testing.T) {
	t.Run("pawns return to free start squares; occupied ones are skipped", func(t *testing.T) {
		s := NewState(DefaultOptions(), 99)
		standardSetup(t, s) // white pawns start on [1,0] [1,1] [1,2]
		mustApply(t, s, mv(1, 0, 2, 0))
		mustApply(t, s, mv(3, 1, 2, 1))
		mustApply(t, s, mv(1, 2, 2, 2))
		mustApply(t, s, mv(3, 3, 2, 3))
		mustApply(t, s, mv(0, 0, 1, 0)) // the rook takes the start square [1,0]
		mustApply(t, s, mv(4, 4, 3, 4))
		// White: pawns on [2,0], [1,1] and [2,2]; start squares [1,0] (rook),
		// [1,1] (its pawn is home) and [1,2] (free). One of the two movers goes
		// to [1,2].
		mustApply(t, s, withAbility(mv(0, 4, 1, 4), PawnReset))
		b := s.Board()
		if b.at(sq(1, 1)) != (Piece{Pawn, rules.White}) {
			t.Fatalf("the pawn already home moved:\n%s", s.Render())
		}
		if b.at(sq(1, 2)) != (Piece{Pawn, rules.White}) {
			t.Fatalf("no pawn returned to the free start square [1,2]:\n%s", s.Render())
		}
		if b.at(sq(1, 0)).Kind != Rook {
			t.Fatalf("the occupied start square changed:\n%s", s.Render())
		}
		left := 0
		for _, q := range squares(2, 0, 2, 2) {
			if b.at(q) == (Piece{Pawn, rules.White}) {
				left++
			}
		}
		if left != 1 || s.count(rules.White, Pawn) != 3 {
			t.Fatalf("want exactly one pawn left out:\n%s", s.Render())
		}
		view, _ := s.View(rules.Black)
		if !strings.Contains(string(view), `{"name":"pawnReset","turnsLeft":0,"target":null}`) {
			t.Fatalf("black is not told: %s", view)
		}
		mustApply(t, s, s.Moves()[0])
		mustApply(t, s, s.Moves()[0])
		view, _ = s.View(rules.Black)
		if strings.Contains(string(view), "pawnReset\",\"turnsLeft") {
			t.Fatalf("the notice outlived black's turn: %s", view)
		}
	})
	t.Run("the choice of pawns is the seed's", func(t *testing.T) {
		pick := func(seed uint64) Board {
			s := NewState(DefaultOptions(), seed)
			standardSetup(t, s)
			mustApply(t, s, mv(1, 0, 2, 0))
			mustApply(t, s, mv(4, 4, 3, 4))
			mustApply(t, s, mv(1, 2, 2, 2))
			mustApply(t, s, mv(3, 4, 4, 4))
			mustApply(t, s, mv(0, 0, 1, 0)) // [1,0] taken: two movers, one free square [1,2]
			mustApply(t, s, mv(4, 4, 3, 4))
			mustApply(t, s, withAbility(mv(0, 4, 1, 4), PawnReset))
			return s.Board()
		}
		first := pick(1)
		same := true
		for seed := uint64(2); seed < 40 && same; seed++ {
			same = pick(seed) == first
		}
		if same {
			t.Fatalf("40 seeds chose the same pawn: the shuffle ignores the seed")
		}
		if a, b := pick(5), pick(5); a != b {
			t.Fatalf("the same seed chose differently")
		}
	})
	t.Run("with no pawns away from home nothing moves", func(t *testing.T) {
		s := NewState(DefaultOptions(), 3)
		standardSetup(t, s)
		before := s.Board()
		mustApply(t, s, withAbility(mv(0, 4, 1, 4), PawnReset))
		after := s.Board()
		before.set(sq(1, 4), before.at(sq(0, 4)))
		before.set(sq(0, 4), Piece{})
		if before != after {
			t.Fatalf("pawnReset moved something:\n%s", s.Render())
		}
	})
	t.Run("promoted pawns stay queens where they are", func(t *testing.T) {
		s := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
		s.pawnStart[rules.White] = squares(1, 0)
		s.board.set(sq(4, 1), Piece{Queen, rules.White})
		mustApply(t, s, withAbility(mv(0, 0, 0, 1), PawnReset))
		if s.board.at(sq(4, 1)).Kind != Queen || !s.board.at(sq(1, 0)).empty() {
			t.Fatalf("a queen was reset:\n%s", s.Render())
		}
	})
}

func TestEachAbilityOncePerGame(t *testing.T) {
	for _, name := range []string{Fog, PawnReset, Shield} {
		t.Run(name, func(t *testing.T) {
			s := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
			first := withAbility(mv(0, 0, 0, 1), name, 0, 1)
			mustApply(t, s, first)
			mustApply(t, s, mv(4, 4, 4, 3))
			view, _ := s.View(rules.White)
			if !strings.Contains(string(view), `"`+name+`":false`) {
				t.Fatalf("abilitiesRemaining still offers %s: %s", name, view)
			}
			wantIllegal(t, s, withAbility(mv(0, 1, 0, 0), name, 0, 0), "already used")
			// The other side still has it.
			mustApply(t, s, mv(0, 1, 0, 0))
			if err := s.Judge(withAbility(mv(4, 3, 4, 4), name, 4, 4)); err != nil {
				t.Fatalf("black cannot use its own %s: %v", name, err)
			}
		})
	}
	s := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
	wantIllegal(t, s, withAbility(mv(0, 0, 0, 1), "teleport"), `unknown ability "teleport"`)
}

func TestNoLegalMove(t *testing.T) {
	// After White's move Black's king is walled in by its own pawns, none of
	// which can move: the pawn on row 0 has nowhere forward, the others face
	// their own pieces and have nothing to take.
	diagram := `
. . . p k
. . . p p
. . . . .
. . . . .
K . . . .`
	for _, c := range []struct {
		opt    string
		winner rules.Side
	}{{"draw", rules.NoSide}, {"loss", rules.White}} {
		s := position(t, diagram, rules.White)
		s.opts.NoMoveResult = c.opt
		mustApply(t, s, mv(4, 0, 4, 1))
		if n := len(s.Moves()); n != 0 {
			t.Fatalf("black still has %d moves", n)
		}
		o := s.Outcome()
		if !o.Over || o.Reason != rules.ReasonNoLegalMove || o.Winner != c.winner {
			t.Fatalf("noMoveResult=%s: outcome %+v\n%s", c.opt, o, s.Render())
		}
	}
}

func TestMaxPliesDraw(t *testing.T) {
	s := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
	s.opts.MaxPlies = 4
	for i := 0; i < 4; i++ {
		if s.Outcome().Over {
			t.Fatalf("over after %d plies", i)
		}
		m := s.Moves()[0]
		mustApply(t, s, m)
	}
	o := s.Outcome()
	if !o.Over || o.Winner != rules.NoSide || o.Reason != rules.ReasonMaxPlies || s.Plies() != 4 {
		t.Fatalf("outcome %+v after %d plies", o, s.Plies())
	}
}

func TestRepetitionOption(t *testing.T) {
	s := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
	s.opts.Repetition = 3
	shuffle := []Move{mv(0, 0, 0, 1), mv(4, 4, 4, 3), mv(0, 1, 0, 0), mv(4, 3, 4, 4)}
	for i := 0; i < 12 && !s.Outcome().Over; i++ {
		mustApply(t, s, shuffle[i%4])
	}
	// The position after ply 1 recurs after plies 5 and 9.
	if o := s.Outcome(); !o.Over || o.Reason != rules.ReasonRepetition || s.Plies() != 9 {
		t.Fatalf("outcome %+v after %d plies", o, s.Plies())
	}
	off := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
	for i := 0; i < 12; i++ {
		mustApply(t, off, shuffle[i%4])
	}
	if off.Outcome().Over {
		t.Fatalf("repetition ended a game with the rule off")
	}
}

func TestBlockedTilesInPlayOption(t *testing.T) {
	diagram := `
R . # . .
. . . . .
. . . . .
. . . . .
K . . . k`
	s := position(t, diagram, rules.White)
	if got := targetsOf(s, sq(0, 0)); !sameSquares(got, squares(0, 1, 0, 2, 0, 3, 0, 4, 1, 0, 2, 0, 3, 0)) {
		t.Fatalf("default: blocked tiles are empty squares in play; rook moves %v", got)
	}
	// What means nothing is not drawn: the viewer and the terminal show
	// an empty square.
	if f := s.Frame(rules.NoSide); len(f.Blocked) != 0 || strings.Contains(s.Render(), "#") {
		t.Fatalf("default: a blocked tile is drawn in play: %v\n%s", f.Blocked, s.Render())
	}
	s.opts.BlockedTilesInPlay = true
	if got := targetsOf(s, sq(0, 0)); !sameSquares(got, squares(0, 1, 1, 0, 2, 0, 3, 0)) {
		t.Fatalf("blockedTilesInPlay: rook moves %v", got)
	}
	if f := s.Frame(rules.NoSide); len(f.Blocked) != 1 || !strings.Contains(s.Render(), "#") {
		t.Fatalf("blockedTilesInPlay: the blocked tile is not drawn: %v\n%s", f.Blocked, s.Render())
	}
	wantIllegal(t, s, mv(0, 0, 0, 3), "crosses the blocked tile")
	wantIllegal(t, s, mv(0, 0, 0, 2), "blocked tile")
}

func TestOptionsParsing(t *testing.T) {
	o, err := ParseOptions(map[string]string{"maxPlies": "50", "noMoveResult": "loss", "blockedTilesInPlay": "true", "repetition": "3"})
	if err != nil || o.MaxPlies != 50 || o.NoMoveResult != "loss" || !o.BlockedTilesInPlay || o.Repetition != 3 {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range []map[string]string{
		{"maxPlies": "0"}, {"maxPlies": "x"}, {"noMoveResult": "win"}, {"blockedTilesInPlay": "maybe"},
		{"repetition": "1"}, {"castling": "true"},
	} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
