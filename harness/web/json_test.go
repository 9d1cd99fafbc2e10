package web

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// The API's JSON is json.MarshalIndent's, byte for byte: strings holding
// JSON's own punctuation and escapes, empty and nested objects and arrays,
// raw JSON, the API's own answers.
func TestTheAPIsJSONIsMarshalIndents(t *testing.T) {
	t.Parallel()
	g := event.Game{ID: 7, Kind: "ladder", Winner: "white", Reason: `a "quoted" \ reason, {with} [brackets]: and, commas`, Plies: 3,
		White: event.Side{Team: 1, Name: "<script>\u2028\t\n</script>", SHA256: "ab"}, Black: event.Side{Name: `\"`},
		Finished: time.Date(2026, 11, 26, 10, 0, 0, 123, time.UTC), Rated: true}
	values := []any{
		map[string]any{"games": []event.Game{g, {}}, "total": 2},
		map[string]any{"games": []event.Game{}, "total": 0},
		map[string]any{"a": map[string]any{}, "b": []any{}, "c": []any{[]any{}, map[string]any{"d": nil}}, "e": "\\", "f": `\\"`},
		json.RawMessage(`{"raw": [1, 2, {"x": "y:,{}[]"}], "n": -1.5e10}`),
		"", 0, nil, true, []string{"", "\"", "\\\\", "]", "}"},
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		values = append(values, randomJSON(rnd, 4))
	}
	for _, v := range values {
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonBytes(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("jsonBytes(%#v):\n%s\nwant (MarshalIndent):\n%s", v, got, want)
		}
	}
}

// randomJSON is a value of depth at most d: objects, arrays, numbers,
// strings of JSON's punctuation and escapes.
func randomJSON(r *rand.Rand, d int) any {
	switch k := r.IntN(6); {
	case d > 0 && k == 0:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomString(r)] = randomJSON(r, d-1)
		}
		return m
	case d > 0 && k == 1:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomJSON(r, d-1)
		}
		return a
	case k == 2:
		return r.Float64() * 1e6
	case k == 3:
		return r.IntN(3) == 0
	default:
		return randomString(r)
	}
}

// randomString is a short string of JSON's punctuation and escapes.
func randomString(r *rand.Rand) string {
	rs := []rune("ab {}[]:,\"\\\n\t<>&\u2028é")
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteRune(rs[r.IntN(len(rs))])
	}
	return b.String()
}

// Any JSON, compacted as json.Marshal writes it, is indented as json.Indent
// indents it.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[{},[],"\"]"]}`, `"\\"`, `[1,{"b":"\\\\\"}"}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(s)) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentJSON(compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("indentJSON(%s):\n%s\nwant:\n%s", compact.Bytes(), got, want.Bytes())
		}
	})
}

// BenchmarkAPIGamesJSON writes a page of the API's games list (100).
func BenchmarkAPIGamesJSON(b *testing.B) {
	games := make([]event.Game, 100)
	for i := range games {
		games[i] = event.Game{ID: int64(i), Kind: "ladder", Winner: "white", Reason: "checkmate", Plies: 40,
			White: event.Side{Team: 1, Submission: 2, Name: "team 001", SHA256: strings.Repeat("a", 64)},
			Black: event.Side{Team: 3, Submission: 4, Name: "team 003", SHA256: strings.Repeat("b", 64)}, Finished: time.Now()}
	}
	v := map[string]any{"games": games, "total": 1000}
	for b.Loop() {
		if _, err := jsonBytes(v); err != nil {
			b.Fatal(err)
		}
	}
}
