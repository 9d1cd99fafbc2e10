package web

import (
	"encoding/json"
	"strings"
	"testing"
)

// The state a report shows reads as the game does: each of a board's rows
// on one line, its keys in the state's own order, the whole still the same
// JSON; text that is not JSON is shown as it came.
func TestPrettyStateKeepsRowsOnALine(t *testing.T) {
	t.Parallel()
	state := `{"turn":3,"board":[[null,null,"wK",null,null],[null,"wP",null,null,null],[null,null,null,null,null],[null,null,"bP",null,null],[null,null,"bK",null,null]],"fog":{"white":false,"black":true},"moves":[]}`
	got := prettyJSON(state)
	want := `{
  "turn": 3,
  "board": [
    [null,null,"wK",null,null],
    [null,"wP",null,null,null],
    [null,null,null,null,null],
    [null,null,"bP",null,null],
    [null,null,"bK",null,null]
  ],
  "fog": {
    "white": false,
    "black": true
  },
  "moves": []
}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	var a, b any
	if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(state), &b) != nil {
		t.Fatal("not JSON any more")
	}
	if n := strings.Count(got, "\n"); n > 16 {
		t.Errorf("%d lines for a 5x5 board", n)
	}
	if got := prettyJSON("not json {"); got != "not json {" {
		t.Errorf("text that is not JSON: %q", got)
	}
	long := `[` + strings.Repeat(`"a long square name",`, 6) + `"end"]`
	if got := prettyJSON(long); !strings.HasPrefix(got, "[\n  \"a long square name\",\n") {
		t.Errorf("a row too wide for one line: %q", got)
	}
}
