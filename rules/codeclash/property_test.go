package codeclash

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/arenabots/arena/rules"
)

// randomPlayer picks uniformly among legal moves and now and then adds an
// ability, shielding the piece it just moved.
type randomPlayer struct{ rng *rand.Rand }

func newRandomPlayer(seed uint64) *randomPlayer {
	return &randomPlayer{rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (r *randomPlayer) pick(s *State) Move {
	moves := s.Moves()
	m := moves[r.rng.IntN(len(moves))]
	if abs := s.Abilities(); len(abs) > 0 && r.rng.IntN(6) == 0 {
		m.Ability = abs[r.rng.IntN(len(abs))]
		if m.Ability == Shield {
			t := m.To
			m.Target = &t
		}
	}
	return m
}

// visibleByHand is an independent statement of what a fogged player sees.
func visibleByHand(b Board, side rules.Side) map[Square]bool {
	v := map[Square]bool{}
	for r := range Size {
		for c := range Size {
			p := b[r][c]
			if p.empty() || p.Side != side {
				continue
			}
			v[sq(r, c)] = true
			add := func(dr, dc int, slide bool) {
				for k := 1; k < Size; k++ {
					q := sq(r+dr*k, c+dc*k)
					if !q.onBoard() {
						return
					}
					v[q] = true
					if !slide || !b.at(q).empty() {
						return
					}
				}
			}
			for dr := -1; dr <= 1; dr++ {
				for dc := -1; dc <= 1; dc++ {
					if dr == 0 && dc == 0 {
						continue
					}
					straight := dr == 0 || dc == 0
					switch p.Kind {
					case King:
						add(dr, dc, false)
					case Queen:
						add(dr, dc, true)
					case Rook:
						if straight {
							add(dr, dc, true)
						}
					case Bishop:
						if !straight {
							add(dr, dc, true)
						}
					case Pawn:
						if dr == int(forward(side)) {
							add(dr, dc, false)
						}
					}
				}
			}
		}
	}
	return v
}

func pieceCount(b Board, side rules.Side, k Kind) int {
	n := 0
	for r := range Size {
		for c := range Size {
			if p := b[r][c]; p.Side == side && p.Kind == k && !p.empty() {
				n++
			}
		}
	}
	return n
}

// checkGame plays one seeded random game and checks every invariant on every
// turn. It returns how the game ended.
func checkGame(t *testing.T, seed uint64) (reason string) {
	s := NewState(DefaultOptions(), seed)
	r := newRandomPlayer(seed)
	turns := 0
	for !s.Outcome().Over {
		if turns > SetupTurns+s.opts.MaxPlies {
			t.Fatalf("seed %d: game did not end after %d turns", seed, turns)
		}
		me := s.ToMove()
		before := s.Board()
		if s.Phase() == "play" {
			for _, side := range rules.Sides {
				if n := pieceCount(before, side, King); n != 1 {
					t.Fatalf("seed %d turn %d: %s has %d kings\n%s", seed, turns, side, n, s.Render())
				}
			}
			if s.fogLeft[me] > 0 {
				view, _ := s.View(me)
				cells := boardCellsOf(t, view)
				vis := visibleByHand(before, me)
				for q, shown := range cells {
					if shown != "F" && !vis[q] {
						t.Fatalf("seed %d turn %d: fog reveals %v (%q)\n%s", seed, turns, q, shown, s.Render())
					}
					if shown == "F" && vis[q] {
						t.Fatalf("seed %d turn %d: fog hides the visible %v", seed, turns, q)
					}
				}
			}
		}
		shielded, shieldSq := s.shieldOn && s.shieldAgainst == me, s.shieldSq
		shieldPiece := before.at(shieldSq)
		m := r.pick(s)
		mustApply(t, s, m)
		after := s.Board()
		turns++
		if m.Setup {
			continue
		}
		if shielded && after.at(shieldSq) != shieldPiece {
			t.Fatalf("seed %d turn %d: the shielded %v was captured by %v", seed, turns, shieldSq, m)
		}
		for _, side := range rules.Sides {
			for _, k := range []Kind{King, Rook, Bishop} {
				if pieceCount(after, side, k) > pieceCount(before, side, k) {
					t.Fatalf("seed %d turn %d: %s gained a %s", seed, turns, side, k.name())
				}
			}
			dp := pieceCount(after, side, Pawn) - pieceCount(before, side, Pawn)
			dq := pieceCount(after, side, Queen) - pieceCount(before, side, Queen)
			if dp > 0 || dq > 0 && !(side == me && dq == 1 && dp == -1) {
				t.Fatalf("seed %d turn %d: %s pawns %+d queens %+d after %v", seed, turns, side, dp, dq, m)
			}
		}
		if m.Ability != PawnReset {
			// Every pawn of the mover is where it was, or is the moved pawn one
			// row forward.
			for rr := range Size {
				for cc := range Size {
					q := sq(rr, cc)
					if p := after.at(q); p.Kind == Pawn && p.Side == me && before.at(q) != p {
						if q != m.To || before.at(m.From).Kind != Pawn || m.To.R-m.From.R != forward(me) {
							t.Fatalf("seed %d turn %d: a %s pawn appeared on %v after %v", seed, turns, me, q, m)
						}
					}
				}
			}
		}
	}
	o := s.Outcome()
	if o.Reason == rules.ReasonKingCaptured && pieceCount(s.Board(), o.Winner.Other(), King) != 0 {
		t.Fatalf("seed %d: king-captured but the loser's king stands", seed)
	}
	return o.Reason
}

func boardCellsOf(t *testing.T, view []byte) map[Square]string {
	cells := boardCells(t, view)
	out := map[Square]string{}
	for r := range Size {
		for c := range Size {
			out[sq(r, c)] = cells[r][c]
		}
	}
	return out
}

func TestRandomGamesKeepInvariants(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 500
	}
	reasons := map[string]int{}
	for seed := range uint64(n) {
		reasons[checkGame(t, seed)]++
	}
	t.Logf("%d games: %v", n, reasons)
	if reasons[rules.ReasonKingCaptured] == 0 {
		t.Errorf("no random game ended by a king capture: %v", reasons)
	}
}

func playRandom(seed uint64) *State {
	s := NewState(DefaultOptions(), seed)
	r := newRandomPlayer(seed)
	for !s.Outcome().Over {
		if err := s.Apply(r.pick(s)); err != nil {
			panic(err)
		}
	}
	return s
}

func BenchmarkLegalMoves(b *testing.B) {
	s := NewState(DefaultOptions(), 1)
	standardSetup(b, s)
	mustApply(b, s, mv(1, 2, 2, 2))
	mustApply(b, s, mv(3, 3, 2, 3))
	b.ReportAllocs()
	for b.Loop() {
		if len(s.Moves()) == 0 {
			b.Fatal("no moves")
		}
	}
}

func BenchmarkRandomGame(b *testing.B) {
	b.ReportAllocs()
	plies := 0
	seed := uint64(0)
	for b.Loop() {
		plies += playRandom(seed).Turn()
		seed++
	}
	b.ReportMetric(float64(plies)/float64(b.N), "turns/game")
}

func FuzzParseMove(f *testing.F) {
	for _, s := range []string{
		`{"move": {"from": [0, 0], "to": [1, 1]}}`,
		`{"move": {"from": [0, 3], "to": [0, 2]}, "ability": {"name": null, "target": null}}`,
		`{"move": {"to": [4, 2]}}`,
		`{"move": {"from": [0, 0], "to": [1, 1]}, "ability": {"name": "shield", "target": [1, 1]}}`,
		"\xef\xbb\xbf{\"move\":{\"from\":[1,1],\"to\":[2,2]},\"ability\":{\"name\":\"fog\"}}",
		`{"move": {"from": [0, 0], "to": [1.5, 1]}}`,
		`[]`, `null`, `{}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		setup := step%5 != 0
		m, err := parseMove(data, setup, int(step%5))
		if err != nil {
			if v := rules.VerdictOf(err); v != rules.InvalidOutput && v != rules.IllegalMove {
				t.Fatalf("parse error of unknown kind: %v", err)
			}
			return
		}
		if !m.To.onBoard() || (!setup && !m.From.onBoard()) {
			t.Fatalf("parsed an off-board square: %+v", m)
		}
		if !setup && m.Ability != "" && m.Ability != Shield && m.Ability != Fog && m.Ability != PawnReset {
			return // unknown names are kept for Judge to refuse
		}
		if !setup {
			s := position(t, ". . . . .\n. . . . .\n. . . . .\n. . . . .\n. . . . .", rules.White)
			back, err := s.ParseMove(s.EncodeMove(m))
			if err != nil || !sameMove(back.(Move), m) {
				t.Fatalf("%+v does not round-trip: %v", m, err)
			}
		}
	})
}

func FuzzFromView(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.json")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"phase":"setup","playerColor":"black","board":[[null,null,null,null,null],[null,null,null,null,null],[null,null,null,null,null],[null,null,null,null,null],[null,null,null,null,null]],"abilitiesRemaining":{"fog":true,"pawnReset":true,"shield":true},"abilitiesActivated":[],"turnNumber":0,"setupStep":1,"blockedTiles":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := FromView(DefaultOptions(), data)
		if err != nil {
			return
		}
		// Whatever was accepted must yield a consistent position.
		moves := s.Moves()
		for _, m := range moves {
			if err := s.Judge(m); err != nil {
				t.Fatalf("generated move %v is judged illegal: %v", m, err)
			}
		}
		view, err := s.View(s.ToMove())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := FromView(DefaultOptions(), view); err != nil {
			t.Fatalf("a rebuilt view does not read back: %v\n%s", err, view)
		}
	})
}
