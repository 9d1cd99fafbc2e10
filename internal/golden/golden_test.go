package golden

import (
	"reflect"
	"testing"
)

func TestBadKeysFindsUntaggedAndNonCamelCaseKeys(t *testing.T) {
	type bad struct {
		OK      int `json:"ok"`
		NoTag   int
		Snake   int `json:"snake_case"`
		Ignored int `json:"-"`
	}
	if got := BadKeys(reflect.TypeOf(bad{})); len(got) != 2 {
		t.Fatalf("BadKeys found %v, want NoTag and Snake", got)
	}
}

func TestUnsetSeesZeroFields(t *testing.T) {
	type rec struct {
		A int
		B string
		M map[string]int
	}
	got := Unset(rec{A: 1, M: map[string]int{"x": 0, "y": 2}}, rec{A: 2})
	want := []string{"rec.B", "rec.M[x]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Unset = %v, want %v", got, want)
	}
}

func TestFirstDiffNamesTheLine(t *testing.T) {
	if got := FirstDiff([]byte("a\nb\nc"), []byte("a\nx\nc")); got != `line 2: got "b", want "x"` {
		t.Fatal(got)
	}
}
