package codeclash

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

var update = flag.Bool("update", false, "rewrite golden files")

// atStep returns a fresh game advanced to the first placement of step.
func atStep(t *testing.T, step int) *State {
	t.Helper()
	s := NewState(DefaultOptions(), 1)
	for i := 0; s.SetupStep() != step; i++ {
		mustApply(t, s, standardPlacements[i])
	}
	return s
}

func TestParseMoveCompatibility(t *testing.T) {
	play := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
	cases := []struct {
		name  string
		state *State
		json  string
		want  Move
	}{
		{"step 1 with the bishop code in from places the king", atStep(t, 1),
			`{"move": {"from": [0, 3], "to": [0, 2]}}`, Move{Setup: true, Place: King, To: sq(0, 2)}},
		{"step 1 with the king code", atStep(t, 1),
			`{"move": {"from": [0, 0], "to": [0, 2]}}`, Move{Setup: true, Place: King, To: sq(0, 2)}},
		{"step 1 from holding garbage", atStep(t, 1),
			`{"move": {"from": "king", "to": [1, 2]}}`, Move{Setup: true, Place: King, To: sq(1, 2)}},
		{"step 2 without from", atStep(t, 2),
			`{"move": {"to": [4, 3]}}`, Move{Setup: true, Place: None, To: sq(4, 3)}},
		{"step 3 with the rook code", atStep(t, 3),
			`{"move": {"from": [0, 2], "to": [0, 0]}}`, Move{Setup: true, Place: Rook, To: sq(0, 0)}},
		{"step 4 bishop", atStep(t, 4), `{"move": {"from": [0, 3], "to": [0, 1]}}`, Move{Setup: true, Place: Bishop, To: sq(0, 1)}},
		{"step 4 pawn", atStep(t, 4), `{"move": {"from": [0, 4], "to": [1, 1]}}`, Move{Setup: true, Place: Pawn, To: sq(1, 1)}},
		{"play, ability name and target null", play,
			`{"move": {"from": [0, 0], "to": [1, 1]}, "ability": {"name": null, "target": null}}`, mv(0, 0, 1, 1)},
		{"play, no ability key", play, `{"move": {"from": [0, 0], "to": [1, 1]}}`, mv(0, 0, 1, 1)},
		{"play, ability null", play, `{"move": {"from": [0, 0], "to": [1, 1]}, "ability": null}`, mv(0, 0, 1, 1)},
		{"play, ability {}", play, `{"move": {"from": [0, 0], "to": [1, 1]}, "ability": {}}`, mv(0, 0, 1, 1)},
		{"BOM, whitespace and unknown fields", play,
			"\xef\xbb\xbf\n  {\"comment\": \"hi\", \"move\" : {\"from\":[0,0],\"to\":[1,1], \"piece\": \"K\"}, \"eval\": 0.5}\n\n", mv(0, 0, 1, 1)},
		{"fog with a target given", play,
			`{"move": {"from": [0, 0], "to": [1, 1]}, "ability": {"name": "fog", "target": [9, 9]}}`, withAbility(mv(0, 0, 1, 1), Fog)},
		{"shield with target", play,
			`{"move": {"from": [0, 0], "to": [1, 1]}, "ability": {"name": "shield", "target": [1, 1]}}`, withAbility(mv(0, 0, 1, 1), Shield, 1, 1)},
		{"negative zero is zero", play, `{"move": {"from": [-0, 0], "to": [1, 1]}}`, mv(0, 0, 1, 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.state.ParseMove([]byte(c.json))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !sameMove(got.(Move), c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			if err := c.state.Judge(got); err != nil {
				t.Fatalf("judge: %v", err)
			}
		})
	}
}

func sameMove(a, b Move) bool {
	if (a.Target == nil) != (b.Target == nil) || (a.Target != nil && *a.Target != *b.Target) {
		return false
	}
	a.Target, b.Target = nil, nil
	return a == b
}

func TestParseMoveRejections(t *testing.T) {
	play := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White)
	cases := []struct {
		name    string
		state   *State
		json    string
		verdict rules.Verdict
		want    string
	}{
		{"empty file", play, ``, rules.InvalidOutput, "move.json is empty"},
		{"not JSON", play, `move e2e4`, rules.InvalidOutput, "not valid JSON"},
		{"a JSON array", play, `[[0,0],[1,1]]`, rules.InvalidOutput, "must be a JSON object"},
		{"no move", play, `{"ability": null}`, rules.InvalidOutput, `no "move"`},
		{"move null", play, `{"move": null}`, rules.InvalidOutput, `no "move"`},
		{"move a string", play, `{"move": "a1a2"}`, rules.InvalidOutput, "move must be a JSON object"},
		{"no to", play, `{"move": {"from": [0,0]}}`, rules.InvalidOutput, `no "to"`},
		{"no from in play", play, `{"move": {"to": [1,1]}}`, rules.InvalidOutput, `no "from"`},
		{"to off the board", play, `{"move": {"from": [0,0], "to": [5,1]}}`, rules.InvalidOutput, "to [5,1] is off the board"},
		{"negative row", play, `{"move": {"from": [-1,0], "to": [1,1]}}`, rules.InvalidOutput, "from [-1,0] is off the board"},
		{"float coordinate", play, `{"move": {"from": [0,0], "to": [1.0,1]}}`, rules.InvalidOutput, "must hold integers"},
		{"exponent coordinate", play, `{"move": {"from": [0,0], "to": [1e0,1]}}`, rules.InvalidOutput, "must hold integers"},
		{"string coordinate", play, `{"move": {"from": [0,0], "to": ["1",1]}}`, rules.InvalidOutput, "must hold integers"},
		{"three coordinates", play, `{"move": {"from": [0,0], "to": [1,1,1]}}`, rules.InvalidOutput, "must be [row, col]"},
		{"object coordinate", play, `{"move": {"from": {"row":0,"col":0}, "to": [1,1]}}`, rules.InvalidOutput, "must be [row, col]"},
		{"trailing garbage", play, `{"move": {"from": [0,0], "to": [1,1]}} extra`, rules.InvalidOutput, "data after"},
		{"two objects", play, `{"move": {"from": [0,0], "to": [1,1]}}{}`, rules.InvalidOutput, "data after"},
		{"invalid UTF-8", play, "{\"move\": {\"from\": [0,0], \"to\": [1,1]}, \"x\": \"\xff\"}", rules.InvalidOutput, "not valid UTF-8"},
		{"too big", play, `{"move": {"from": [0,0], "to": [1,1]}, "pad": "` + strings.Repeat("x", MaxMoveBytes) + `"}`, rules.InvalidOutput, "the limit is 65536"},
		{"ability a string", play, `{"move": {"from": [0,0], "to": [1,1]}, "ability": "fog"}`, rules.InvalidOutput, "ability must be a JSON object"},
		{"ability name a number", play, `{"move": {"from": [0,0], "to": [1,1]}, "ability": {"name": 3}}`, rules.InvalidOutput, "ability.name must be a string"},
		{"shield target off the board", play, `{"move": {"from": [0,0], "to": [1,1]}, "ability": {"name": "shield", "target": [7,7]}}`, rules.InvalidOutput, "ability.target [7,7] is off the board"},
		{"unknown ability", play, `{"move": {"from": [0,0], "to": [1,1]}, "ability": {"name": "Fog"}}`, rules.IllegalMove, `unknown ability "Fog"`},
		{"shield target not own", play, `{"move": {"from": [0,0], "to": [1,1]}, "ability": {"name": "shield", "target": [4,4]}}`, rules.IllegalMove, "shield target [4,4] is not your piece"},
		{"shield without target", play, `{"move": {"from": [0,0], "to": [1,1]}, "ability": {"name": "shield"}}`, rules.IllegalMove, "shield needs a target"},
		{"step 4 without from", atStep(t, 4), `{"move": {"to": [0,1]}}`, rules.IllegalMove, "needs from"},
		{"step 4 with the king code", atStep(t, 4), `{"move": {"from": [0,0], "to": [0,1]}}`, rules.IllegalMove, "got [0,0]"},
		{"step 4 with a malformed from", atStep(t, 4), `{"move": {"from": [0,3.5], "to": [0,1]}}`, rules.InvalidOutput, "must hold integers"},
		{"setup ability", atStep(t, 1), `{"move": {"to": [0,1]}, "ability": {"name": "fog"}}`, rules.IllegalMove, "cannot be used during setup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.state.ParseMove([]byte(c.json))
			if err == nil {
				err = c.state.Judge(m)
			}
			if got := rules.VerdictOf(err); got != c.verdict {
				t.Fatalf("verdict %s (%v), want %s", got, err, c.verdict)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("reason %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestEncodeMoveRoundTrips(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		s := NewState(DefaultOptions(), seed)
		r := newRandomPlayer(seed)
		for !s.Outcome().Over {
			m := r.pick(s)
			back, err := s.ParseMove(s.EncodeMove(m))
			if err != nil {
				t.Fatalf("seed %d: %s does not parse: %v", seed, s.EncodeMove(m), err)
			}
			if !sameMove(back.(Move), m) {
				t.Fatalf("seed %d: %v encodes as %s and reads back as %v", seed, m, s.EncodeMove(m), back)
			}
			mustApply(t, s, m)
		}
	}
}

func TestViewIsByteStableAndSchemaShaped(t *testing.T) {
	s := NewState(DefaultOptions(), 5)
	standardSetup(t, s)
	a, _ := s.View(rules.White)
	b, _ := s.Clone().View(rules.White)
	if !bytes.Equal(a, b) {
		t.Fatalf("same state, different bytes:\n%s\n%s", a, b)
	}
	want := `{"phase":"play","playerColor":"white","board":[[{"type":"R","color":"white"},{"type":"B","color":"white"},{"type":"K","color":"white"},{"type":"B","color":"white"},{"type":"R","color":"white"}],[{"type":"P","color":"white"},{"type":"P","color":"white"},{"type":"P","color":"white"},null,null],[null,null,null,null,null],[null,{"type":"P","color":"black"},{"type":"P","color":"black"},{"type":"P","color":"black"},null],[{"type":"R","color":"black"},{"type":"B","color":"black"},{"type":"K","color":"black"},{"type":"B","color":"black"},{"type":"R","color":"black"}]],"abilitiesRemaining":{"fog":true,"pawnReset":true,"shield":true},"abilitiesActivated":[],"turnNumber":1,"setupStep":0,"blockedTiles":[[1,4],[3,0]]}` + "\n"
	if string(a) != want {
		t.Fatalf("view:\n%s\nwant:\n%s", a, want)
	}
}

// goldenViews are the state.json files kept in testdata.
func goldenViews(t *testing.T) map[string][]byte {
	out := map[string][]byte{}
	s := NewState(DefaultOptions(), 11)
	mustApply(t, s, Move{Setup: true, Place: King, To: sq(0, 2)})
	mustApply(t, s, Move{Setup: true, Place: King, To: sq(4, 1)})
	out["setup-step2-white.json"], _ = s.View(rules.White)
	s = NewState(DefaultOptions(), 11)
	standardSetup(t, s)
	out["play-turn1-white.json"], _ = s.View(rules.White)
	mustApply(t, s, withAbility(mv(1, 0, 2, 0), Fog))
	out["fogged-black.json"], _ = s.View(rules.Black)
	mustApply(t, s, withAbility(mv(3, 1, 2, 1), Shield, 4, 2))
	out["shielded-white.json"], _ = s.View(rules.White)
	return out
}

func TestGoldenViews(t *testing.T) {
	for name, got := range goldenViews(t) {
		path := filepath.Join("testdata", name)
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed:\n got %s\nwant %s", name, got, want)
		}
		if _, err := FromView(DefaultOptions(), got); err != nil {
			t.Errorf("%s does not read back: %v", name, err)
		}
	}
}

func TestFromViewRebuildsTheMoversPosition(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		s := NewState(DefaultOptions(), seed)
		r := newRandomPlayer(seed)
		for !s.Outcome().Over {
			view, err := s.View(s.ToMove())
			if err != nil {
				t.Fatal(err)
			}
			rebuilt, err := FromView(DefaultOptions(), view)
			if err != nil {
				t.Fatalf("seed %d turn %d: %v\n%s", seed, s.Turn(), err, view)
			}
			again, _ := rebuilt.View(s.ToMove())
			if !bytes.Equal(again, view) && s.fogLeft[s.ToMove()] == 0 {
				t.Fatalf("seed %d turn %d: view does not survive a rebuild:\n%s\n%s", seed, s.Turn(), view, again)
			}
			// Without fog, the rebuilt position has exactly the true legal moves.
			if s.fogLeft[s.ToMove()] == 0 && !sameMoves(s.Moves(), rebuilt.Moves()) {
				t.Fatalf("seed %d turn %d: legal moves differ after rebuild", seed, s.Turn())
			}
			mustApply(t, s, r.pick(s))
		}
	}
}

func sameMoves(a, b []Move) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameMove(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestFromViewErrorsNameTheField(t *testing.T) {
	good, _ := position(t, `
K . . . .
. . . . .
. . . . .
. . . . .
. . . . k`, rules.White).View(rules.White)
	cases := []struct {
		name, from, to, want string
	}{
		{"phase", `"phase":"play"`, `"phase":"endgame"`, "phase must be"},
		{"color", `"playerColor":"white"`, `"playerColor":"red"`, "playerColor must be"},
		{"piece type", `{"type":"K","color":"white"}`, `{"type":"N","color":"white"}`, "board[0][0].type"},
		{"piece colour", `{"type":"K","color":"white"}`, `{"type":"K","color":"green"}`, "board[0][0].color"},
		{"short row", `[{"type":"K","color":"white"},null,null,null,null]`, `[{"type":"K","color":"white"},null]`, "board[0] must have 5 squares"},
		{"abilities", `"fog":true,`, ``, "abilitiesRemaining.fog is missing"},
		{"turn parity", `"turnNumber":1`, `"turnNumber":2`, "turnNumber 2 is black's turn"},
		{"turn type", `"turnNumber":1`, `"turnNumber":"1"`, "turnNumber has the wrong type"},
		{"blocked", `"blockedTiles":[]`, `"blockedTiles":[[9,9]]`, "blockedTiles[0] [9,9] is off the board"},
		{"not an object", `{"phase"`, `["phase"`, "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(string(good), c.from, c.to, 1)
			if bad == string(good) {
				t.Fatalf("test did not change the view")
			}
			_, err := FromView(DefaultOptions(), []byte(bad))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestDocsMatchExplain(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "codeclash.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```text\n"+Game{}.Explain()+"```") {
		t.Fatal("docs/codeclash.md and `arena rules explain` disagree; copy the explanation into the doc")
	}
}
