package tiles

import (
	"strings"
	"testing"

	"github.com/arenabots/arena/rules"
)

func TestParseMap(t *testing.T) {
	m, err := ParseMap(baseMap)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != 6 || m.At(2, 2) != Terminator || m.At(2, 5) != Amplifier || m.At(4, 3) != Amplifier || m.Count(Terminator) != 2 || m.Count(Empty) != 32 {
		t.Fatalf("%+v", m)
	}
	if m.CSV() != baseMap {
		t.Fatalf("CSV:\n%s", m.CSV())
	}
	for _, variant := range []string{
		strings.ReplaceAll(baseMap, "\n", "\r\n"),
		strings.TrimSuffix(baseMap, "\n"),
		baseMap + "\n\n",
		strings.ReplaceAll(baseMap, ",", " , "),
		"a,b,c,d,e,f\n" + baseMap[strings.Index(baseMap, "\n")+1:],
	} {
		got, err := ParseMap(variant)
		if err != nil || got.CSV() != baseMap {
			t.Errorf("%q: %v\n%s", variant, err, got.CSV())
		}
	}
	rows := strings.Split(strings.TrimSuffix(baseMap, "\n"), "\n")
	with := func(line int, text string) string {
		r := append([]string{}, rows...)
		r[line-1] = text
		return strings.Join(r, "\n") + "\n"
	}
	bad := []struct{ csv, want string }{
		{"", "the map is empty"},
		{"\n\n", "the map is empty"},
		{"0,1,2\n", "the map is empty"},
		{with(4, "E,E,E,E,E"), "line 4: 5 cells, want 6"},
		{with(4, "E,E,E,E,E,E,E"), "line 4: 7 cells, want 6"},
		{with(5, "E,E,X,E,E,E"), `line 5: cell 3 is "X", want E, T or A`},
		{with(3, "E,e,E,E,E,E"), `line 3: cell 2 is "e", want E, T or A`},
		{with(7, "E,E,E,E,E,"), `line 7: cell 6 is "", want E, T or A`},
		{with(6, ""), "line 6: empty, want 6 cells"},
		{with(1, "0,1,2,3,4"), "line 2: 6 cells, want 5"},
		{strings.Join(rows[:6], "\n"), "line 7: the map ends after 5 rows, want 6"},
		{baseMap + "E,E,E,E,E,E\n", "line 8: row 7, but the map has 6 columns"},
		{"0,1\nE,E\nE,E\n", "line 1: the header has 2 fields"},
	}
	for _, c := range bad {
		_, err := ParseMap(c.csv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.csv, err, c.want)
		}
	}
}

func TestGeneratedMaps(t *testing.T) {
	for seed := range uint64(300) {
		o := DefaultOptions()
		if seed%3 == 1 {
			o.Size, o.Terminators, o.Amplifiers = 3, 4, 3 // every cell but the starts
		}
		s, err := NewState(o, seed)
		if err != nil {
			t.Fatal(err)
		}
		m, n := s.Map(), s.N()
		if m.Count(Terminator) != o.Terminators || m.Count(Amplifier) != o.Amplifiers || len(s.Amplifiers()) != o.Amplifiers {
			t.Fatalf("seed %d: %d T, %d A\n%s", seed, m.Count(Terminator), m.Count(Amplifier), m.CSV())
		}
		r1, c1 := s.Start(W)
		r2, c2 := s.Start(B)
		if c1 < 1 || c1 > 3 || c2 < n-2 || c2 > n || r1 < 1 || r1 > n || r2 < 1 || r2 > n || (r1 == r2 && c1 == c2) {
			t.Fatalf("seed %d: starts %d %d and %d %d", seed, r1, c1, r2, c2)
		}
		if m.At(r1, c1) != Empty || m.At(r2, c2) != Empty {
			t.Fatalf("seed %d: a start cell holds a special tile", seed)
		}
		again, _ := NewState(o, seed)
		if again.Map().CSV() != m.CSV() || again.Render() != s.Render() {
			t.Fatalf("seed %d: not reproducible", seed)
		}
	}
	a, _ := NewState(DefaultOptions(), 1)
	b, _ := NewState(DefaultOptions(), 2)
	if a.Map().CSV() == b.Map().CSV() {
		t.Fatal("two seeds, one map")
	}
}

func TestOptions(t *testing.T) {
	o, err := ParseOptions(nil)
	if err != nil || o.Size != 12 || o.Terminators != 10 || o.Amplifiers != 6 || o.Turns != 210 || o.K != 10 ||
		o.TurnTimeout.String() != "2s" || o.Greeting != GreetingEngine || o.Map != nil || o.AmplifierEndsChain {
		t.Fatalf("defaults %+v, %v", o, err)
	}
	o, err = ParseOptions(map[string]string{"map": baseMap, "turns": "30", "k": "3", "greeting": "seed", "amplifierEndsChain": "true", "turnTimeout": "500ms"})
	if err != nil || o.Map == nil || o.Map.N != 6 || o.Turns != 30 || o.K != 3 || o.Greeting != GreetingSeed || !o.AmplifierEndsChain {
		t.Fatalf("%+v, %v", o, err)
	}
	if o, err := ParseOptions(map[string]string{"map": baseMap, "size": "6"}); err != nil || o.Map.N != 6 {
		t.Fatalf("a matching size: %v", err)
	}
	bad := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"colour": "red"}, `no rule option "colour"`},
		{map[string]string{"size": "2"}, "size: want a number from 3 to 100"},
		{map[string]string{"size": "101"}, "size: want a number from 3 to 100"},
		{map[string]string{"size": "4"}, "terminators 10 and amplifiers 6 do not fit on a 4x4 board beside the two start cells (at most 14 in all)"},
		{map[string]string{"terminators": "100", "amplifiers": "43"}, "do not fit on a 12x12 board"},
		{map[string]string{"terminators": "-1"}, "terminators: want a number"},
		{map[string]string{"turns": "0"}, "turns: want a number from 1"},
		{map[string]string{"k": "0"}, "k: want a number from 1"},
		{map[string]string{"greeting": "hello"}, "greeting: want engine or seed"},
		{map[string]string{"turnTimeout": "2"}, "turnTimeout: want a positive duration"},
		{map[string]string{"amplifierEndsChain": "yes"}, "amplifierEndsChain: want true or false"},
		{map[string]string{"map": "0,1,2\nE,E,E\nE,E\nE,E,E\n"}, "map: line 3: 2 cells, want 3"},
	}
	for _, c := range bad {
		_, err := ParseOptions(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.opts, err, c.want)
		}
		if _, err := (Game{}).New(c.opts, 1); err == nil {
			t.Errorf("%v: New accepted it", c.opts)
		}
	}
	// A 3x3 board fits 7 special cells.
	if _, err := ParseOptions(map[string]string{"size": "3", "terminators": "4", "amplifiers": "3"}); err != nil {
		t.Fatal(err)
	}
}

func TestGame(t *testing.T) {
	g := Game{}
	if g.Name() != "tiles" || g.Title() == "" || !strings.Contains(g.Explain(), "UPDATE DESTROYED r c") {
		t.Fatal("name, title or explanation")
	}
	for _, opt := range g.Options() {
		if !strings.Contains(g.Explain(), "["+opt.Name) && opt.Name != "map" {
			t.Errorf("the explanation does not mention option %s", opt.Name)
		}
	}
	if _, err := g.FromView(nil, []byte("TURN")); err == nil {
		t.Fatal("FromView rebuilt a tiles bot")
	}
	p := g.Protocol()
	if p.Lines == nil || p.Lines.MoveTime.String() != "2s" || p.Lines.MoveTimeOption != "turnTimeout" || p.Lines.LateMove != "forfeit" {
		t.Fatalf("%+v", p.Lines)
	}
	if err := rules.CheckOptions(g, map[string]string{"turnTimeout": "1s"}); err != nil {
		t.Fatal(err)
	}
	st, err := g.New(map[string]string{"map": baseMap}, 9)
	if err != nil {
		t.Fatal(err)
	}
	if st.ToMove() != W || st.Phase() != "play" || st.Turn() != 0 {
		t.Fatal("a new game")
	}
	if v, _ := st.View(W); string(v) != "TURN" {
		t.Fatalf("view %q", v)
	}
	js, err := st.(*State).LegalJSON()
	if err != nil || !strings.Contains(string(js), `"MOVE D"`) {
		t.Fatalf("%s %v", js, err)
	}
}

// A map decides the board: the header of every transcript records the
// generated-map options at their defaults beside it, and they are not used.
func TestMapOverridesTheGeneratedBoardsOptions(t *testing.T) {
	st, err := Game{}.New(map[string]string{"map": baseMap, "size": "12", "terminators": "10", "amplifiers": "6"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*State)
	if s.N() != 6 || s.Map().CSV() != baseMap {
		t.Fatalf("a %dx%d board, map %q", s.N(), s.N(), s.Map().CSV())
	}
}
