package tiles

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

const W, B = rules.White, rules.Black

func TestParseMove(t *testing.T) {
	ok := []struct {
		line string
		want Move
	}{
		{"INFO", Move{Kind: Info}},
		{"DESTROY", Move{Kind: Destroy}},
		{"TERMINATE", Move{Terminate: true}},
		{"TELEPORT 3", Move{Teleport: true, Index: 3}},
		{"TELEPORT 007", Move{Teleport: true, Index: 7}},
		{"TELEPORT 0", Move{Teleport: true, Index: 0}},
		{"TELEPORT 123456789012", Move{Teleport: true, Index: maxIndex}},
		{"MOVE U", Move{Dir: 'U'}},
		{"MOVE D", Move{Dir: 'D'}},
		{"MOVE L", Move{Dir: 'L'}},
		{"MOVE R", Move{Dir: 'R'}},
		{"LAY", Move{Lay: true}},
		{"TERMINATE TELEPORT 2 MOVE L LAY", Move{Terminate: true, Teleport: true, Index: 2, Dir: 'L', Lay: true}},
		{"TERMINATE LAY", Move{Terminate: true, Lay: true}},
		{"TELEPORT 1 LAY", Move{Teleport: true, Index: 1, Lay: true}},
		{"MOVE R    LAY", Move{Dir: 'R', Lay: true}},
		{"  MOVE  U  ", Move{Dir: 'U'}},
		{"MOVE U LAY\r\n", Move{Dir: 'U', Lay: true}},
		{"INFO\r", Move{Kind: Info}},
	}
	for _, c := range ok {
		m, err := ParseMove([]byte(c.line))
		if err != nil || m != c.want {
			t.Errorf("%q: got %+v, %v; want %+v", c.line, m, err, c.want)
		}
	}
	bad := []string{
		"", " ", "\r\n", "info", "Move U", "MOVE u", "MOVE", "MOVE UP", "MOVE U D", "MOVE X",
		"TELEPORT", "TELEPORT x", "TELEPORT -1", "TELEPORT +1", "TELEPORT 1.0", "TELEPORT LAY",
		"LAY MOVE U", "MOVE U TELEPORT 1", "LAY TERMINATE", "LAY LAY", "TERMINATE TERMINATE",
		"MOVE U MOVE D",
		// the reference engine let MOVE appear twice after TERMINATE
		"TERMINATE MOVE U MOVE D", "TERMINATE MOVE U LAY MOVE D",
		"INFO LAY", "LAY INFO", "INFO INFO", "DESTROY INFO", "MOVE U DESTROY", "DESTROY 1",
		"MOVE\tU", "MOVE U\tLAY", "\tLAY", "LAY;", "PASS", "MOVE U\n LAY",
	}
	for _, l := range bad {
		_, err := ParseMove([]byte(l))
		if v := rules.VerdictOf(err); err == nil || v != rules.InvalidOutput {
			t.Errorf("%q: verdict %s (%v), want invalid-output", l, v, err)
		}
	}
}

// A rule case starts from board(): the first player on 3 1 with chain 1 (its
// tile there, active), the second on 3 6 with chain 1 likewise, the first to
// move.
type ruleCase struct {
	name    string
	opts    func(*Options)
	setup   func(s *State)
	line    string
	verdict rules.Verdict
	mover   []string // the mover's replies, TURNOVER left out
	other   []string
	check   func(t *testing.T, s *State)
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s *State
			if c.opts != nil {
				s = board(t, c.opts)
			} else {
				s = board(t)
			}
			if c.setup != nil {
				c.setup(s)
			}
			before := s.Clone().(*State)
			mover := s.ToMove()
			m, err := parse(s, c.line)
			if v := rules.VerdictOf(err); v != c.verdict {
				t.Fatalf("%q: verdict %s (%v), want %s", c.line, v, err, c.verdict)
			}
			if c.verdict != rules.OK {
				if err := s.Apply(m); err == nil {
					t.Fatalf("%q: Apply accepted what Judge refused", c.line)
				}
				if s.Render() != before.Render() || s.turn != before.turn {
					t.Fatalf("%q: a refused line changed the state", c.line)
				}
				for _, lm := range s.LegalMoves() {
					if mv, _ := asMove(lm); mv == m {
						t.Fatalf("%q is refused but LegalMoves lists it", c.line)
					}
				}
				return
			}
			listed := false
			for _, lm := range s.LegalMoves() {
				if mv, _ := asMove(lm); mv == m {
					listed = true
				}
			}
			if !listed {
				t.Fatalf("%q is valid but LegalMoves does not list it", c.line)
			}
			if err := s.Apply(m); err != nil {
				t.Fatal(err)
			}
			out := Codec{}.Reply(s, mover, true, rules.Clock{})
			want := append(append([]string{}, c.mover...), "TURNOVER")
			if !eq(out[mover], want) {
				t.Errorf("%q: the mover is told %s, want %s", c.line, show(out[mover]), show(want))
			}
			if !eq(out[mover.Other()], c.other) {
				t.Errorf("%q: the other side is told %s, want %s", c.line, show(out[mover.Other()]), show(c.other))
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

func wantPos(t *testing.T, s *State, side rules.Side, r, c int) {
	t.Helper()
	if gr, gc := s.Pos(side); gr != r || gc != c {
		t.Errorf("%s stands on %d %d, want %d %d", side, gr, gc, r, c)
	}
}

func wantActive(t *testing.T, s *State, side rules.Side, chain int) {
	t.Helper()
	if got := s.Active(side); got != chain {
		t.Errorf("%s's active chain is %d, want %d", side, got, chain)
	}
}

func wantTile(t *testing.T, s *State, r, c int, owner rules.Side, chain, idx int) {
	t.Helper()
	x := s.board[s.at(r, c)]
	if rules.Side(x.owner) != owner || (owner != rules.NoSide && (int(x.chain)+1 != chain || int(x.idx) != idx)) {
		t.Errorf("%d %d holds owner %d chain %d index %d, want %s chain %d index %d", r, c, x.owner, x.chain+1, x.idx, owner, chain, idx)
	}
}

func wantKnows(t *testing.T, s *State, side rules.Side, r, c int, want bool) {
	t.Helper()
	if s.Knows(side, r, c) != want {
		t.Errorf("%s knows %d %d: %v, want %v", side, r, c, !want, want)
	}
}

func wantPoints(t *testing.T, s *State, w, b int) {
	t.Helper()
	if p := s.Points(); p != [2]int{w, b} {
		t.Errorf("points %v, want [%d %d]", p, w, b)
	}
}

func TestTerminate(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "ends the active chain, no reply", line: "TERMINATE", verdict: rules.OK,
			check: func(t *testing.T, s *State) { wantActive(t, s, W, 0) }},
		{name: "invalid without an active chain", setup: func(s *State) { s.active[W] = -1 }, line: "TERMINATE", verdict: rules.IllegalMove},
		{name: "then LAY next to the old chain starts a new one", line: "TERMINATE MOVE R LAY", verdict: rules.OK, mover: lines("EMPTY", "LAID"),
			check: func(t *testing.T, s *State) { wantTile(t, s, 3, 2, W, 2, 1); wantActive(t, s, W, 2) }},
	})
}

func TestTeleport(t *testing.T) {
	snake := func(s *State) {
		// chain 2: 5 1 (tail), 5 2, 5 3; the bot on 5 2, chain 2 active
		addChain(s, W, 5, 1, 5, 2, 5, 3)
		s.active[W] = 1
		place(s, W, 5, 2)
	}
	runRuleCases(t, []ruleCase{
		{name: "moves to tile i of the same chain, no reply", setup: snake, line: "TELEPORT 1", verdict: rules.OK,
			check: func(t *testing.T, s *State) {
				wantPos(t, s, W, 5, 1)
				wantActive(t, s, W, 2) // does not end the chain
				if !s.chains[W][1].teleported {
					t.Error("chain 2 not marked teleported")
				}
			}},
		{name: "to its own cell", setup: snake, line: "TELEPORT 2", verdict: rules.OK,
			check: func(t *testing.T, s *State) { wantPos(t, s, W, 5, 2) }},
		{name: "then MOVE and LAY next to the last tile extend the chain", setup: snake, line: "TELEPORT 3 MOVE U LAY", verdict: rules.OK,
			mover: lines("EMPTY", "LAID"), check: func(t *testing.T, s *State) { wantTile(t, s, 4, 3, W, 2, 4) }},
		{name: "not on an own tile", setup: func(s *State) { snake(s); place(s, W, 6, 6) }, line: "TELEPORT 1", verdict: rules.IllegalMove},
		{name: "on an opponent tile", setup: func(s *State) { snake(s); place(s, W, 3, 6) }, line: "TELEPORT 1", verdict: rules.IllegalMove},
		{name: "a second time for the chain", setup: func(s *State) { snake(s); s.chains[W][1].teleported = true }, line: "TELEPORT 1", verdict: rules.IllegalMove},
		{name: "a second time, from another tile of the chain", setup: func(s *State) { snake(s); s.chains[W][1].teleported = true; place(s, W, 5, 3) },
			line: "TELEPORT 1", verdict: rules.IllegalMove},
		{name: "another chain may still teleport", setup: func(s *State) { snake(s); s.chains[W][1].teleported = true; place(s, W, 3, 1) },
			line: "TELEPORT 1", verdict: rules.OK, check: func(t *testing.T, s *State) { wantPos(t, s, W, 3, 1) }},
		{name: "index 0", setup: snake, line: "TELEPORT 0", verdict: rules.IllegalMove},
		{name: "index past the chain", setup: snake, line: "TELEPORT 4", verdict: rules.IllegalMove},
		{name: "index past every chain", setup: snake, line: "TELEPORT 99999999999", verdict: rules.IllegalMove},
		{name: "then LAY on its own tile", setup: snake, line: "TELEPORT 1 LAY", verdict: rules.IllegalMove},
		{name: "after TERMINATE", setup: snake, line: "TERMINATE TELEPORT 3", verdict: rules.OK,
			check: func(t *testing.T, s *State) { wantPos(t, s, W, 5, 3); wantActive(t, s, W, 0) }},
	})
}

func TestMove(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "onto an empty cell", line: "MOVE R", verdict: rules.OK, mover: lines("EMPTY"),
			check: func(t *testing.T, s *State) { wantPos(t, s, W, 3, 2); wantActive(t, s, W, 1) }},
		{name: "onto a hidden terminator", setup: func(s *State) { place(s, W, 2, 1) }, line: "MOVE R", verdict: rules.OK, mover: lines("EMPTY"),
			check: func(t *testing.T, s *State) { wantActive(t, s, W, 1) }},
		{name: "onto an amplifier", setup: func(s *State) { place(s, W, 4, 2) }, line: "MOVE R", verdict: rules.OK, mover: lines("EMPTY")},
		{name: "onto its own tile: no reply", setup: func(s *State) { place(s, W, 3, 2) }, line: "MOVE L", verdict: rules.OK,
			check: func(t *testing.T, s *State) { wantPos(t, s, W, 3, 1); wantActive(t, s, W, 1) }},
		{name: "off the top", setup: func(s *State) { place(s, W, 1, 3) }, line: "MOVE U", verdict: rules.IllegalMove},
		{name: "off the bottom", setup: func(s *State) { place(s, W, 6, 3) }, line: "MOVE D", verdict: rules.IllegalMove},
		{name: "off the left", line: "MOVE L", verdict: rules.IllegalMove},
		{name: "off the right", setup: func(s *State) { place(s, W, 2, 6) }, line: "MOVE R", verdict: rules.IllegalMove},
		{name: "off the board after TELEPORT", setup: func(s *State) { place(s, W, 3, 2); addChain(s, W, 3, 2, 2, 2, 1, 2) },
			line: "TELEPORT 3 MOVE U", verdict: rules.IllegalMove},
		{name: "onto an unknown opponent tile with an active chain: TILE TERMINATED, LAY ignored",
			setup: func(s *State) { place(s, W, 3, 5) }, line: "MOVE R LAY", verdict: rules.OK, mover: lines("TILE", "TERMINATED"),
			check: func(t *testing.T, s *State) {
				wantPos(t, s, W, 3, 6)
				wantActive(t, s, W, 0)
				wantKnows(t, s, W, 3, 6, true)
				wantTile(t, s, 3, 6, B, 1, 1)
			}},
		{name: "onto an unknown opponent tile without an active chain: TILE",
			setup: func(s *State) { place(s, W, 3, 5); s.active[W] = -1 }, line: "MOVE R", verdict: rules.OK, mover: lines("TILE"),
			check: func(t *testing.T, s *State) { wantKnows(t, s, W, 3, 6, true) }},
		{name: "onto a known opponent tile: TILE TERMINATED",
			setup: func(s *State) { place(s, W, 3, 5); know(s, W, 3, 6) }, line: "MOVE R", verdict: rules.OK, mover: lines("TILE", "TERMINATED"),
			check: func(t *testing.T, s *State) { wantKnows(t, s, W, 3, 6, true) }},
		{name: "onto a known opponent tile, then LAY", setup: func(s *State) { place(s, W, 3, 5); know(s, W, 3, 6) }, line: "MOVE R LAY", verdict: rules.IllegalMove},
		{name: "onto its own tile, then LAY", setup: func(s *State) { place(s, W, 3, 2) }, line: "MOVE L LAY", verdict: rules.IllegalMove},
	})
}

func TestLay(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "next to the active chain's last tile extends it", line: "MOVE R LAY", verdict: rules.OK, mover: lines("EMPTY", "LAID"),
			check: func(t *testing.T, s *State) {
				wantTile(t, s, 3, 2, W, 1, 2)
				wantActive(t, s, W, 1)
				wantPoints(t, s, 4, 2)
			}},
		{name: "away from the last tile starts a new chain", setup: func(s *State) { place(s, W, 5, 5) }, line: "LAY", verdict: rules.OK,
			mover: lines("LAID"), check: func(t *testing.T, s *State) { wantTile(t, s, 5, 5, W, 2, 1); wantActive(t, s, W, 2) }},
		{name: "two MOVEs are invalid output", setup: func(s *State) { place(s, W, 2, 1) }, line: "MOVE D MOVE R LAY", verdict: rules.InvalidOutput},
		{name: "diagonal to the last tile starts a new chain (in place)", setup: func(s *State) { place(s, W, 4, 2) }, line: "LAY", verdict: rules.OK,
			mover: lines("LAID"), check: func(t *testing.T, s *State) { wantTile(t, s, 4, 2, W, 2, 1) }},
		{name: "next to an older tile but not the last one starts a new chain",
			setup: func(s *State) { play(t, s, "MOVE R LAY", "MOVE U"); place(s, W, 2, 1) }, line: "LAY", verdict: rules.OK,
			mover: lines("LAID"), check: func(t *testing.T, s *State) { wantTile(t, s, 2, 1, W, 2, 1) }},
		{name: "without an active chain starts a new one", setup: func(s *State) { s.active[W] = -1 }, line: "MOVE R LAY", verdict: rules.OK,
			mover: lines("EMPTY", "LAID"), check: func(t *testing.T, s *State) { wantTile(t, s, 3, 2, W, 2, 1); wantActive(t, s, W, 2) }},
		{name: "on a terminator: LAID TERMINATED, the T used up", setup: func(s *State) { place(s, W, 3, 2) }, line: "MOVE U LAY", verdict: rules.OK,
			mover: lines("EMPTY", "LAID", "TERMINATED"), check: func(t *testing.T, s *State) {
				wantTile(t, s, 2, 2, W, 2, 1)
				wantActive(t, s, W, 0)
				if s.board[s.at(2, 2)].terrain != Empty {
					t.Error("the terminator was not used up")
				}
			}},
		{name: "on an amplifier: the chain goes on", setup: func(s *State) { place(s, W, 4, 2); play(t, s, "LAY", "MOVE L") }, line: "MOVE R LAY", verdict: rules.OK,
			mover: lines("EMPTY", "LAID"), check: func(t *testing.T, s *State) { wantTile(t, s, 4, 3, W, 2, 2); wantActive(t, s, W, 2) }},
		{name: "on an amplifier with amplifierEndsChain", opts: func(o *Options) { o.AmplifierEndsChain = true },
			setup: func(s *State) { place(s, W, 4, 2); play(t, s, "LAY", "MOVE L") }, line: "MOVE R LAY", verdict: rules.OK,
			mover: lines("EMPTY", "LAID", "TERMINATED"), check: func(t *testing.T, s *State) {
				wantTile(t, s, 4, 3, W, 2, 2)
				wantActive(t, s, W, 0)
				if !s.isAmp(s.at(4, 3)) {
					t.Error("the amplifier was used up")
				}
			}},
		{name: "on its own tile", line: "LAY", verdict: rules.IllegalMove},
		{name: "on a known opponent tile", setup: func(s *State) { place(s, W, 3, 6); know(s, W, 3, 6) }, line: "LAY", verdict: rules.IllegalMove},
		{name: "on an unknown opponent tile: TILE TERMINATED, nothing laid", setup: func(s *State) { place(s, W, 3, 6) }, line: "LAY", verdict: rules.OK,
			mover: lines("TILE", "TERMINATED"), check: func(t *testing.T, s *State) {
				wantTile(t, s, 3, 6, B, 1, 1)
				wantKnows(t, s, W, 3, 6, true)
				wantActive(t, s, W, 0)
				if s.tiles[W] != 1 {
					t.Errorf("the first player has %d tiles", s.tiles[W])
				}
			}},
		{name: "on an unknown opponent tile without an active chain: TILE TERMINATED still", setup: func(s *State) { place(s, W, 3, 6); s.active[W] = -1 },
			line: "LAY", verdict: rules.OK, mover: lines("TILE", "TERMINATED")},
		{name: "the opponent may lay under a bot, which meets the tile", setup: func(s *State) {
			place(s, W, 5, 5)
			blackToMove(s)
			place(s, B, 4, 5)
			if r := play(t, s, "MOVE D LAY"); !eq(r[B], lines("EMPTY", "LAID", "TURNOVER")) {
				t.Fatalf("laying under the bot: %v", r)
			}
		}, line: "LAY", verdict: rules.OK, mover: lines("TILE", "TERMINATED")},
	})
}

func TestInfo(t *testing.T) {
	onChain := func(s *State) {
		addChain(s, B, 5, 5, 5, 4, 5, 3)
		place(s, W, 5, 4)
	}
	runRuleCases(t, []ruleCase{
		{name: "HINT i on an opponent tile, minus 4", setup: onChain, line: "INFO", verdict: rules.OK, mover: lines("HINT 2"),
			check: func(t *testing.T, s *State) { wantPoints(t, s, 2-4, 8) }},
		{name: "on the tail", setup: func(s *State) { onChain(s); place(s, W, 5, 5) }, line: "INFO", verdict: rules.OK, mover: lines("HINT 1")},
		{name: "on an unknown tile", setup: func(s *State) { onChain(s); place(s, W, 5, 3) }, line: "INFO", verdict: rules.OK, mover: lines("HINT 3"),
			check: func(t *testing.T, s *State) { wantKnows(t, s, W, 5, 3, false) }},
		{name: "on an empty cell", setup: func(s *State) { place(s, W, 6, 6) }, line: "INFO", verdict: rules.IllegalMove},
		{name: "on its own tile", line: "INFO", verdict: rules.IllegalMove},
	})
}

func TestDestroy(t *testing.T) {
	// The second player's chain 2 climbs: tail 5 4, then 4 4, 3 4, 3 3; in
	// reading order its last cell is 5 4, its first 3 3.
	climb := func(s *State) {
		addChain(s, B, 5, 4, 4, 4, 3, 4, 3, 3)
		s.active[B] = 1
		place(s, W, 5, 4)
		know(s, W, 4, 4)
	}
	runRuleCases(t, []ruleCase{
		{name: "on the tail: DESTROYED L and the cells in reading order; the owner told the tail", setup: climb, line: "DESTROY", verdict: rules.OK,
			mover: lines("DESTROYED 4", "3 3", "3 4", "4 4", "5 4"), other: lines("UPDATE DESTROYED 5 4"),
			check: func(t *testing.T, s *State) {
				for _, rc := range [][2]int{{5, 4}, {4, 4}, {3, 4}, {3, 3}} {
					wantTile(t, s, rc[0], rc[1], rules.NoSide, 0, 0)
					wantKnows(t, s, W, rc[0], rc[1], false)
				}
				wantActive(t, s, B, 0) // the destroyed chain was active
				wantPoints(t, s, 2+12, 2)
				if len(s.Chains(B)) != 1 || s.Chains(B)[1] == nil {
					t.Errorf("chains left %v", s.Chains(B))
				}
			}},
		{name: "another chain of the owner stays active", setup: func(s *State) { climb(s); s.active[B] = 0 }, line: "DESTROY", verdict: rules.OK,
			mover: lines("DESTROYED 4", "3 3", "3 4", "4 4", "5 4"), other: lines("UPDATE DESTROYED 5 4"),
			check: func(t *testing.T, s *State) { wantActive(t, s, B, 1) }},
		{name: "not on the tail: FAILED, minus 8", setup: func(s *State) { climb(s); place(s, W, 4, 4) }, line: "DESTROY", verdict: rules.OK,
			mover: lines("FAILED"), check: func(t *testing.T, s *State) {
				wantTile(t, s, 4, 4, B, 2, 2)
				wantPoints(t, s, 2-8, 10)
			}},
		{name: "on an empty cell", setup: func(s *State) { place(s, W, 6, 6) }, line: "DESTROY", verdict: rules.IllegalMove},
		{name: "on its own tile", line: "DESTROY", verdict: rules.IllegalMove},
		{name: "an amplifier under a destroyed chain stays", setup: func(s *State) {
			addChain(s, B, 4, 3, 5, 3)
			place(s, W, 4, 3)
		}, line: "DESTROY", verdict: rules.OK, mover: lines("DESTROYED 2", "4 3", "5 3"), other: lines("UPDATE DESTROYED 4 3"),
			check: func(t *testing.T, s *State) {
				if !s.isAmp(s.at(4, 3)) || s.Frame(rules.NoSide).Cells[3][2] != "A" {
					t.Error("the amplifier went with the chain")
				}
			}},
		{name: "the last chain: the game ends, no-tiles, by points", setup: func(s *State) {
			place(s, W, 3, 6)
			s.action[W] = -10
		}, line: "DESTROY", verdict: rules.OK, mover: lines("DESTROYED 1", "3 6"), other: lines("UPDATE DESTROYED 3 6"),
			check: func(t *testing.T, s *State) {
				wantPoints(t, s, -10+3+2, 0)
				if o := s.Outcome(); !o.Over || o.Reason != ReasonNoTiles || o.Winner != B {
					t.Errorf("outcome %+v, want black winning by points after no-tiles", o)
				}
				if s.LegalMoves() != nil {
					t.Error("moves after the end")
				}
			}},
	})
}

// The reference engine's slips must not happen.
func TestEngineSlips(t *testing.T) {
	// Eleven chains for the first player: chain 1 is its start tile on 3 1,
	// chains 2..11 one tile each on row 6 and 5, chain 11 of two tiles.
	eleven := func(s *State) {
		for c := 1; c <= 6; c++ {
			addChain(s, W, 6, c)
		}
		for c := 1; c <= 3; c++ {
			addChain(s, W, 5, c)
		}
		if n := addChain(s, W, 1, 5, 1, 6); n != 11 {
			panic(n)
		}
	}
	runRuleCases(t, []ruleCase{
		{name: "TELEPORT looks chain 11 up, not chain 1", setup: func(s *State) { eleven(s); place(s, W, 1, 6) }, line: "TELEPORT 1", verdict: rules.OK,
			check: func(t *testing.T, s *State) {
				wantPos(t, s, W, 1, 5)
				if s.chains[W][0].teleported || !s.chains[W][10].teleported {
					t.Error("the teleport was charged to the wrong chain")
				}
			}},
		{name: "TELEPORT on chain 1 is not refused for chain 11's teleport", setup: func(s *State) { eleven(s); s.chains[W][10].teleported = true },
			line: "TELEPORT 1", verdict: rules.OK},
		{name: "DESTROY of chain 1 leaves chain 11", setup: func(s *State) { eleven(s); blackToMove(s); place(s, B, 3, 1) }, line: "DESTROY", verdict: rules.OK,
			mover: lines("DESTROYED 1", "3 1"), other: lines("UPDATE DESTROYED 3 1"),
			check: func(t *testing.T, s *State) { wantTile(t, s, 1, 5, W, 11, 1); wantTile(t, s, 1, 6, W, 11, 2) }},
		{name: "chain 10 and the 10th tile of a chain are scored", setup: func(s *State) {
			eleven(s)
			// chain 12 of ten tiles, tail on the amplifier 2 5
			addChain(s, W, 2, 5, 2, 4, 2, 3, 3, 3, 3, 4, 3, 5, 4, 5, 4, 6, 5, 6, 5, 5)
		}, line: "MOVE D", verdict: rules.OK, mover: lines("EMPTY"),
			check: func(t *testing.T, s *State) { wantPoints(t, s, 2*(1+9+2+10)+10, 2) }},
		{name: "MOVE twice after TERMINATE is invalid output", line: "TERMINATE MOVE R MOVE R", verdict: rules.InvalidOutput},
		{name: "the victim is told the tail, not the last cell in reading order", setup: func(s *State) {
			addChain(s, B, 5, 5, 4, 5, 4, 6)
			place(s, W, 5, 5)
		}, line: "DESTROY", verdict: rules.OK, mover: lines("DESTROYED 3", "4 5", "4 6", "5 5"), other: lines("UPDATE DESTROYED 5 5")},
	})
	t.Run("equal points draw", func(t *testing.T) {
		s := board(t, func(o *Options) { o.Turns = 2 })
		play(t, s, "MOVE R", "MOVE L")
		if o := s.Outcome(); !o.Over || o.Winner != rules.NoSide || o.Reason != ReasonPoints {
			t.Fatalf("outcome %+v, want a draw on points", o)
		}
	})
}

func TestEnd(t *testing.T) {
	s := board(t, func(o *Options) { o.Turns = 3 })
	play(t, s, "MOVE R LAY", "MOVE L")
	if s.Outcome().Over {
		t.Fatal("over early")
	}
	play(t, s, "MOVE R LAY")
	o := s.Outcome()
	if !o.Over || o.Winner != W || o.Reason != ReasonPoints {
		t.Fatalf("outcome %+v", o)
	}
	if err := s.Apply(Move{Dir: 'R'}); rules.VerdictOf(err) != rules.IllegalMove {
		t.Fatalf("a move after the end: %v", err)
	}
	if s.Turn() != 3 || s.Plies() != 3 {
		t.Fatalf("turn %d plies %d", s.Turn(), s.Plies())
	}
}

func TestAmplifierPoints(t *testing.T) {
	s := board(t)
	// chain 2 of three tiles from the amplifier 4 3; chain 3 ends on the
	// amplifier 2 5 but its tail is 2 6.
	addChain(s, W, 4, 3, 5, 3, 5, 4)
	addChain(s, W, 2, 6, 2, 5)
	wantPoints(t, s, 2*6+3, 2)
}

func TestUpdates(t *testing.T) {
	s := board(t, func(o *Options) { o.K = 4 })
	// Turns 0..3: the first player lays on 3 2 and 3 3, the second on 3 5 and 4 5.
	play(t, s, "MOVE R LAY", "MOVE L LAY", "MOVE R LAY", "MOVE D LAY")
	if s.Turn() != 4 {
		t.Fatal(s.Turn())
	}
	before, q := Codec{}.Request(s, "", rules.Clock{})
	if q != "TURN" {
		t.Fatalf("question %q", q)
	}
	want := [2][]string{
		lines("UPDATE TILE 3 5", "UPDATE TILE 3 6", "UPDATE TILE 4 5"),
		lines("UPDATE TILE 3 1", "UPDATE TILE 3 2", "UPDATE TILE 3 3"),
	}
	for _, side := range rules.Sides {
		if !eq(before[side], want[side]) {
			t.Errorf("%s is told %s, want %s", side, show(before[side]), show(want[side]))
		}
	}
	// They are known before the question, so LAY on them is judged by it.
	wantKnows(t, s, W, 3, 6, true)
	place(s, W, 3, 6)
	if _, err := parse(s, "LAY"); rules.VerdictOf(err) != rules.IllegalMove {
		t.Fatalf("LAY on a tile just updated: %v", err)
	}
	// Only unknown tiles are told, and only before every k-th turn.
	place(s, W, 3, 3)
	play(t, s, "MOVE R", "MOVE D LAY") // the second player extends to 5 5
	if b, _ := (Codec{}).Request(s, "", rules.Clock{}); len(b[0])+len(b[1]) != 0 {
		t.Fatalf("told between updates: %v", b)
	}
	r := play(t, s, "MOVE R") // onto the known 3 5
	if !eq(r[W], lines("TILE", "TERMINATED", "TURNOVER")) {
		t.Fatalf("stepping on a known tile: %v", r)
	}
	play(t, s, "MOVE D LAY") // 6 5
	b, _ := Codec{}.Request(s, "", rules.Clock{})
	if !eq(b[W], lines("UPDATE TILE 5 5", "UPDATE TILE 6 5")) || len(b[B]) != 0 {
		t.Fatalf("second update %v\n%s", b, s.Render())
	}
}

func TestStart(t *testing.T) {
	m, _ := ParseMap(baseMap)
	o := DefaultOptions()
	o.Map = &m
	// the first player starts on the terminator 2 2
	s := newState(o, m, [2]int{cellIdx(6, 2, 2), cellIdx(6, 4, 6)})
	got := Codec{}.Start(s)
	want := [2][]string{
		lines("START", "SIZE 6", "2 2", "AMPLIFIERS 2", "2 5", "4 3", "LAID", "TERMINATED"),
		lines("START", "SIZE 6", "4 6", "AMPLIFIERS 2", "2 5", "4 3", "LAID"),
	}
	for _, side := range rules.Sides {
		if !eq(got[side], want[side]) {
			t.Errorf("%s: %s, want %s", side, show(got[side]), show(want[side]))
		}
	}
	wantActive(t, s, W, 0)
	wantActive(t, s, B, 1)
	o.Greeting = GreetingSeed
	s = newState(o, m, [2]int{cellIdx(6, 2, 2), cellIdx(6, 4, 6)})
	got = Codec{}.Start(s)
	want = [2][]string{
		lines("6", "2 2", "AMPLIFIERS 2", "2 5", "4 3", "LAID", "TERMINATED"),
		lines("6", "4 6", "AMPLIFIERS 2", "2 5", "4 3", "LAID"),
	}
	for _, side := range rules.Sides {
		if !eq(got[side], want[side]) {
			t.Errorf("seed greeting, %s: %s, want %s", side, show(got[side]), show(want[side]))
		}
	}
	// An amplifier start cell ends the chain only under amplifierEndsChain.
	for _, ends := range []bool{false, true} {
		o := DefaultOptions()
		o.Map, o.AmplifierEndsChain = &m, ends
		s := newState(o, m, [2]int{cellIdx(6, 1, 1), cellIdx(6, 4, 3)})
		got := Codec{}.Start(s)[B]
		if want := ends; (got[len(got)-1] == "TERMINATED") != want || (s.Active(B) == 0) != want {
			t.Errorf("amplifierEndsChain=%v, a start on an amplifier: %v, active chain %d", ends, got, s.Active(B))
		}
	}
	if e := (Codec{}).End(s); !eq(e[0], lines("GAMEOVER")) || !eq(e[1], lines("GAMEOVER")) {
		t.Errorf("end %v", e)
	}
}

func TestReplyAfterAFault(t *testing.T) {
	s := board(t)
	// A forfeit on the first turn: the state is unchanged, nothing is replied.
	if r := (Codec{}).Reply(s, W, false, rules.Clock{}); len(r[0])+len(r[1]) != 0 {
		t.Fatalf("reply to a move not played: %v", r)
	}
	play(t, s, "MOVE R")
	if r := (Codec{}).Reply(s, B, false, rules.Clock{}); len(r[0])+len(r[1]) != 0 {
		t.Fatalf("reply to the second player's move not played: %v", r)
	}
	// A move played for the bot is replied to, on a clone as well.
	c := s.Clone()
	r1, r2 := Codec{}.Reply(s, W, false, rules.Clock{}), Codec{}.Reply(c, W, false, rules.Clock{})
	if !eq(r1[0], lines("EMPTY", "TURNOVER")) || !eq(r2[0], r1[0]) {
		t.Fatalf("replies %v and %v", r1, r2)
	}
}

func TestFrame(t *testing.T) {
	s := board(t)
	addChain(s, B, 5, 5, 5, 4)
	know(s, W, 5, 4)
	f := s.Frame(rules.NoSide)
	if f.Cells[1][1] != "T" || f.Cells[1][4] != "A" || f.Cells[2][0] != "W" || f.Cells[4][4] != "b" {
		t.Fatalf("true frame %v", f.Cells)
	}
	f = s.Frame(W)
	if f.Cells[1][1] != "" || f.Cells[1][4] != "A" || f.Cells[2][5] != "" || f.Cells[4][4] != "" || f.Cells[4][3] != "b" || f.Cells[2][0] != "W" {
		t.Fatalf("the first player's frame %v", f.Cells)
	}
	if !strings.Contains(strings.Join(s.Frame(rules.NoSide).Notes, "\n"), "black chain 2: 1@5 5 2@5 4") {
		t.Fatalf("notes %v", s.Frame(rules.NoSide).Notes)
	}
	if !strings.Contains(s.Render(), "turn 0 of 210") {
		t.Fatal(s.Render())
	}
}
