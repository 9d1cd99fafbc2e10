package web

import (
	"bytes"
	"encoding/json"
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
