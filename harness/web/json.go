package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/arenabots/arena/harness/event"
)

// jsonBytes is v as the API writes it: indented, for people reading it
// too, as json.MarshalIndent(v, "", "  ") writes it in twice the time.
func jsonBytes(v any) ([]byte, error) {
	compact, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return indentJSON(compact), nil
}

// indentJSON indents JSON as json.Marshal writes it (nothing between its
// tokens) two spaces a level, as json.Indent does: in one pass, each
// string copied whole.
func indentJSON(src []byte) []byte {
	out := make([]byte, 0, len(src)*2) // room for a list of games' indentation
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for n := 2 * depth; n > 0; n -= len(spaces) {
			out = append(out, spaces[:min(n, len(spaces))]...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i)
			out = append(out, src[i:end]...)
			i = end - 1
		case '{', '[':
			out = append(out, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				out = append(out, src[i+1]) // empty: {} or [] as it was
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// spaces are the indentation of a line, a few levels at a time.
var spaces = bytes.Repeat([]byte(" "), 32)

// stringEnd is where the JSON string that opens at src[start] ends: past
// its closing quote, the first not escaped by an odd run of backslashes.
func stringEnd(src []byte, start int) int {
	for i := start + 1; ; i++ {
		q := bytes.IndexByte(src[i:], '"')
		if q < 0 {
			return len(src)
		}
		i += q
		escapes := 0
		for j := i - 1; j > start && src[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i + 1
		}
	}
}

// gamesJSON is the API's page of games as jsonBytes writes
// map[string]any{"games": games, "total": total} (games empty: []), byte
// for byte, in two fifths of the time: each game's fields are event.Game's, in its order,
// under its JSON tags (TestAPageOfGamesIsWrittenAsJSONBytesWritesIt holds
// the two the same).
func gamesJSON(games []event.Game, total int) ([]byte, error) {
	b := make([]byte, 0, 64+len(games)*gameJSONSize)
	b = append(b, "{\n  \"games\": ["...)
	for i, g := range games {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"id\": "...)
		b = strconv.AppendInt(b, g.ID, 10)
		b = append(b, ",\n      \"kind\": "...)
		b = appendJSONString(b, g.Kind)
		b = append(b, ",\n      \"white\": "...)
		b = appendSideJSON(b, g.White)
		b = append(b, ",\n      \"black\": "...)
		b = appendSideJSON(b, g.Black)
		b = append(b, ",\n      \"winner\": "...)
		b = appendJSONString(b, g.Winner)
		b = append(b, ",\n      \"reason\": "...)
		b = appendJSONString(b, g.Reason)
		b = append(b, ",\n      \"plies\": "...)
		b = strconv.AppendInt(b, int64(g.Plies), 10)
		b = append(b, ",\n      \"turns\": "...)
		b = strconv.AppendInt(b, int64(g.Turns), 10)
		b = append(b, ",\n      \"finished\": "...)
		if y := g.Finished.Year(); y < 0 || y > 9999 {
			return nil, fmt.Errorf("game %d: its time %v is not one JSON can hold (years 0 to 9999)", g.ID, g.Finished)
		}
		b = append(b, '"')
		b = g.Finished.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
		if g.Rated {
			b = append(b, ",\n      \"rated\": true"...)
		}
		b = append(b, "\n    }"...)
	}
	if len(games) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "],\n  \"total\": "...)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, "\n}"...), nil
}

// gameJSONSize is about the size of a game in gamesJSON: one of two
// SHA-256 digests in hex and short names takes 600 bytes.
const gameJSONSize = 640

// appendSideJSON appends a game's side as gamesJSON writes it: event.Side's
// fields, the first two left out when 0.
func appendSideJSON(b []byte, s event.Side) []byte {
	b = append(b, '{')
	if s.Team != 0 {
		b = append(b, "\n        \"team\": "...)
		b = strconv.AppendInt(b, s.Team, 10)
		b = append(b, ',')
	}
	if s.Submission != 0 {
		b = append(b, "\n        \"submission\": "...)
		b = strconv.AppendInt(b, s.Submission, 10)
		b = append(b, ',')
	}
	b = append(b, "\n        \"name\": "...)
	b = appendJSONString(b, s.Name)
	b = append(b, ",\n        \"sha256\": "...)
	b = appendJSONString(b, s.SHA256)
	return append(b, "\n      }"...)
}

// appendJSONString appends s as a JSON string as encoding/json writes it:
// <, > and & escaped for HTML, U+2028 and U+2029 escaped, a byte that is
// not UTF-8 written as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
