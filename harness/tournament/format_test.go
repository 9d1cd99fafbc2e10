package tournament

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./harness/tournament -run '%s' -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed: the format of a file arena writes is not what it was.\n"+
			"If the change is intended, update docs/tournaments.md and rewrite the golden file with\n"+
			"  go test ./harness/tournament -run '%s' -update\n--- got\n%s\n--- want\n%s", p, t.Name(), got, want)
	}
}

// unset lists the fields, by path, that are zero in v (json:"-" skipped;
// slices of structs and pointers to structs entered, every element checked).
func unset(v any) []string {
	var out []string
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), path+"[]")
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				if v.MapIndex(k).IsZero() {
					out = append(out, path+"["+k.String()+"]")
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				if !f.IsExported() || f.Tag.Get("json") == "-" {
					continue
				}
				if v.Field(i).IsZero() {
					out = append(out, path+"."+f.Name)
				}
				walk(v.Field(i), path+"."+f.Name)
			}
		}
	}
	walk(reflect.ValueOf(v), reflect.TypeOf(v).Name())
	sort.Strings(out)
	return out
}

var jsonKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// badKeys lists the fields of t, and of every struct type it reaches, whose JSON
// key is not camelCase or is left to the Go field name (no tag).
func badKeys(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, ok := f.Tag.Lookup("json")
			name := strings.Split(tag, ",")[0]
			switch {
			case tag == "-":
				continue
			case f.Anonymous && name == "":
				// An embedded struct's fields are promoted into the record.
			case !ok || name == "":
				out = append(out, t.Name()+"."+f.Name+": no JSON key (the Go name would be used)")
			case !jsonKey.MatchString(name):
				out = append(out, t.Name()+"."+f.Name+": JSON key "+name+" is not camelCase")
			}
			walk(f.Type)
		}
	}
	walk(t)
	return out
}

func TestJSONKeysAreCamelCase(t *testing.T) {
	type bad struct {
		OK      int `json:"ok"`
		NoTag   int
		Snake   int `json:"snake_case"`
		Ignored int `json:"-"`
	}
	if got := badKeys(reflect.TypeOf(bad{})); len(got) != 2 {
		t.Fatalf("badKeys found %v, want NoTag and Snake", got)
	}
	for _, v := range []any{StandingsFile{}, Config{}, Record{}} {
		if bad := badKeys(reflect.TypeOf(v)); len(bad) > 0 {
			t.Errorf("%T: %s", v, strings.Join(bad, "; "))
		}
	}
}

// goldenState is a tournament with every value of standings.json set.
func goldenState() *State {
	direct, random := 4.0, 0.25
	return &State{
		Config: Config{Format: RoundRobin, Game: "codeclash", Seed: 2026, Scoring: Scoring{Win: 3, Draw: 1, Loss: -1}, TieBreaks: DefaultTieBreaks()},
		Summary: Summary{Total: 12, Done: 9, Unplayed: 2, Pending: 1, Standings: []Row{
			{Rank: 1, Bot: 2, Name: "greedy", Games: 5, Wins: 3, Draws: 1, Losses: 1, Points: 9, SB: 13.5, Direct: &direct, Random: &random,
				Elo: 1563.5, EloMargin: 212.25, DecidedBy: DirectEncounter},
			{Rank: 2, Bot: 1, Name: "random", Games: 4, Wins: 2, Draws: 3, Losses: 2, Points: 7, SB: 8, Direct: &random, Random: &direct,
				Elo: 1436.5, EloMargin: 230.75, DecidedBy: RandomDraw},
		}},
	}
}

func TestStandingsJSONGolden(t *testing.T) {
	s := goldenState()
	if missing := unset(s.StandingsFile()); len(missing) > 0 {
		t.Fatalf("the golden standings leave these fields zero, so the golden file would not pin them: %v", missing)
	}
	data, err := s.StandingsJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "standings.json.golden", data)
}
