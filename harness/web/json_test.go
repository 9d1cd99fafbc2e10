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

// A page of the API's games list is written by gamesJSON as jsonBytes
// writes it, byte for byte: games of every field empty or not, their
// texts of JSON's escapes, markup, control characters and bytes that are
// not UTF-8, their times of any precision; and no game at all.
func TestAPageOfGamesIsWrittenAsJSONBytesWritesIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	text := func() string {
		if r.IntN(4) == 0 {
			b := make([]byte, r.IntN(6))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return string(b)
		}
		return randomString(r)
	}
	number := func() int64 { return []int64{0, 1, -1, r.Int64(), -r.Int64()}[r.IntN(5)] }
	side := func() event.Side {
		return event.Side{Team: number(), Submission: number(), Name: text(), SHA256: text()}
	}
	for n := range 300 {
		games := make([]event.Game, n%7)
		for i := range games {
			games[i] = event.Game{ID: number(), Kind: text(), White: side(), Black: side(), Winner: text(), Reason: text(),
				Plies: int(number()), Turns: int(number()), Rated: r.IntN(2) == 0, Dir: text(), Course: text(),
				Finished: time.Unix(r.Int64N(253402300799), r.Int64N(1e9)*int64(r.IntN(2))).In(time.FixedZone("", 3600*(r.IntN(27)-13)))}
		}
		total := int(number())
		want, err := jsonBytes(map[string]any{"games": games, "total": total})
		if err != nil {
			t.Fatal(err)
		}
		got, err := gamesJSON(games, total)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("gamesJSON(%#v):\n%s\nwant (jsonBytes):\n%s", games, got, want)
		}
	}
	if _, err := gamesJSON([]event.Game{{Finished: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, 1); err == nil {
		t.Error("a game of the year 10000 written: JSON's times end at 9999")
	}
}

// Any text is written by appendJSONString as encoding/json writes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "<&>", "\u2028\u2029", "\xff\xc3(", "\x00\x1f\x7f\b\f\n\r\t", "é名🦀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
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
	b.Run("jsonBytes", func(b *testing.B) {
		v := map[string]any{"games": games, "total": 1000}
		for b.Loop() {
			if _, err := jsonBytes(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gamesJSON", func(b *testing.B) {
		for b.Loop() {
			if _, err := gamesJSON(games, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
}
