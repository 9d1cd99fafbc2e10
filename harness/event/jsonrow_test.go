package event

import (
	"database/sql"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAJSONRowReadsBackWhatSQLiteWrote writes rows of texts and integers
// (quotes, backslashes, control characters, every escape, text that is
// not UTF-8, NULLs, the integers' extremes) and reads each back both ways,
// as its columns and as a jsonRow: they must agree.
func TestAJSONRowReadsBackWhatSQLiteWrote(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE r (a TEXT, n INTEGER, b TEXT)`); err != nil {
		t.Fatal(err)
	}
	texts := []any{"", "plain", `"quoted"`, `back\slash`, "\\u0041", "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
		"é, 名前, 🦀", "\xff\xfe not UTF-8 \xc3", "</script><b>&amp;", "\u2028\u2029", strings.Repeat("long ", 2000), nil}
	ints := []any{int64(0), int64(1), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(1e15), nil}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
		ints = append(ints, rng.Int64()-rng.Int64())
	}
	for i, a := range texts {
		n, b := ints[i%len(ints)], texts[(i*7+3)%len(texts)]
		if _, err := db.Exec(`INSERT INTO r VALUES (?, ?, ?)`, a, n, b); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(`SELECT a, n, b, ` + jsonRow("a, n, b") + ` FROM r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	read := 0
	for rows.Next() {
		var a, b sql.NullString
		var n sql.NullInt64
		var row sql.RawBytes
		if err := rows.Scan(&a, &n, &b, &row); err != nil {
			t.Fatal(err)
		}
		var ga, gb string
		var gn int64 = 42
		if err := scanJSONRow(row, &ga, &gn, &gb); err != nil {
			t.Fatalf("%q: %v", row, err)
		}
		if ga != a.String || gb != b.String || gn != n.Int64 {
			t.Errorf("%q read as %q, %d, %q; columns %q, %d, %q", row, ga, gn, gb, a.String, n.Int64, b.String)
		}
		read++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if read != len(texts) {
		t.Fatalf("read %d rows, wrote %d", read, len(texts))
	}
}

// TestAJSONRowNotAsWrittenIsAnError: every row that is not exactly its
// places' values is refused, never read in part.
func TestAJSONRowNotAsWrittenIsAnError(t *testing.T) {
	for _, row := range []string{
		``, `[`, `]`, `{}`, `[1,"a"`, `1,"a"]`, `[1]`, `[1,"a",2]`, `[1,"a",]`, `[,1,"a"]`, `[1 ,"a"]`,
		`["1","a"]`, `[1,2]`, `[1.5,"a"]`, `[1e3,"a"]`, `[-,"a"]`, `[9223372036854775808,"a"]`, `[-9223372036854775809,"a"]`,
		`[99999999999999999999,"a"]`, `[1,"a]`, `[1,"a\"]`, `[1,"\x"]`, `[1,"\u12"]`, `[1,"\uzzzz"]`, `[1,nul]`, `[1,true]`, `[1,"a"]]`,
	} {
		var n int64
		var s string
		if err := scanJSONRow([]byte(row), &n, &s); err == nil {
			t.Errorf("%q read as %d, %q: want an error", row, n, s)
		}
	}
	var n int64
	var s string
	if err := scanJSONRow([]byte(`[-9223372036854775808,"\ud83e\udd80\u00e9\n"]`), &n, &s); err != nil || n != math.MinInt64 || s != "🦀é\n" {
		t.Errorf("got %d, %q, %v", n, s, err)
	}
	var on bool
	if err := scanJSONRow([]byte(`[null,null,7]`), &n, &s, &on); err != nil || n != 0 || s != "" || !on {
		t.Errorf("nulls and a flag: got %d, %q, %v, %v", n, s, on, err)
	}
}

// FuzzScanJSONRow: no row, however malformed, makes the reader panic;
// and a row it reads that encoding/json reads too has the same values.
func FuzzScanJSONRow(f *testing.F) {
	for _, seed := range []string{`[1,"a",0]`, `[null,"\u00e9\ud83e\udd80",1]`, `[-1,"\"\\\/\b\f\n\r\t",-0]`, `[1,"`, `[1,"\ud800\u0041",2]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, row []byte) {
		var n, on int64
		var s string
		if scanJSONRow(row, &n, &s, &on) != nil || !utf8.Valid(row) {
			return
		}
		var parts []json.RawMessage
		if json.Unmarshal(row, &parts) != nil {
			return // not JSON (a raw control character): SQLite never writes it
		}
		var want struct {
			n, on *int64
			s     *string
		}
		if len(parts) != 3 || json.Unmarshal(parts[0], &want.n) != nil || json.Unmarshal(parts[1], &want.s) != nil || json.Unmarshal(parts[2], &want.on) != nil {
			t.Fatalf("%q read as %d, %q, %d; encoding/json reads it otherwise", row, n, s, on)
		}
		if n != deref(want.n) || s != deref(want.s) || on != deref(want.on) {
			t.Fatalf("%q read as %d, %q, %d; encoding/json reads %d, %q, %d", row, n, s, on, deref(want.n), deref(want.s), deref(want.on))
		}
	})
}

func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}
