package event

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// The lists read each row as one column: its columns as a JSON array,
// made by SQLite (jsonRow), taken apart here (scanJSONRow). The driver
// locks its connection for each call into SQLite, and hands over a column
// in two or three calls: a page of a hundred games of seventeen columns
// was 4,400 locks, most of the work of reading it. As one column a row it
// is 400.

// jsonRow is SQL reading the columns cols (a list of them, as a SELECT
// names them) as one: a JSON array of their values, in order.
func jsonRow(cols string) string { return "json_array(" + cols + ")" }

// errJSONRow says a row read by jsonRow is not what scanJSONRow takes.
var errJSONRow = errors.New("a row's values as JSON")

// scanJSONRow reads the values of a row read by jsonRow into dest, one
// each, in order: an integer into an *int64, an *int or a *bool (true
// unless 0), a string into a *string; a null leaves the zero value.
// Anything else (another count of values, a value of another type, a
// malformed array) is an error: a row is never half read as if whole.
func scanJSONRow(b []byte, dest ...any) error {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return fmt.Errorf("%w: not an array", errJSONRow)
	}
	i := 1
	for n, d := range dest {
		if n > 0 {
			if i >= len(b) || b[i] != ',' {
				return fmt.Errorf("%w: %d values, want %d", errJSONRow, n, len(dest))
			}
			i++
		}
		var err error
		if i, err = scanJSONValue(b, i, d); err != nil {
			return fmt.Errorf("%w: value %d: %w", errJSONRow, n+1, err)
		}
	}
	if i != len(b)-1 {
		return fmt.Errorf("%w: more than %d values", errJSONRow, len(dest))
	}
	return nil
}

// scanJSONValue reads the value at b[i] into dest and returns where it
// ends.
func scanJSONValue(b []byte, i int, dest any) (int, error) {
	if i >= len(b) {
		return i, errors.New("missing")
	}
	switch c := b[i]; {
	case c == 'n':
		if len(b)-i < 4 || string(b[i:i+4]) != "null" {
			return i, errors.New("malformed")
		}
		switch d := dest.(type) {
		case *int64:
			*d = 0
		case *int:
			*d = 0
		case *bool:
			*d = false
		case *string:
			*d = ""
		default:
			return i, fmt.Errorf("no place for a %T", dest)
		}
		return i + 4, nil
	case c == '-' || '0' <= c && c <= '9':
		n, end, ok := jsonInteger(b, i)
		if !ok {
			return i, errors.New("not an integer of 64 bits")
		}
		switch d := dest.(type) {
		case *int64:
			*d = n
		case *int:
			*d = int(n)
		case *bool:
			*d = n != 0
		default:
			return i, fmt.Errorf("an integer, want a place for a %T", dest)
		}
		return end, nil
	case c == '"':
		d, ok := dest.(*string)
		if !ok {
			return i, fmt.Errorf("a string, want a place for a %T", dest)
		}
		s, end, err := jsonString(b, i)
		if err != nil {
			return i, err
		}
		*d = s
		return end, nil
	default:
		return i, fmt.Errorf("unexpected %q", c)
	}
}

// jsonString is the JSON string at b[i] (its opening quote) and where it
// ends. Its bytes are kept as they are, valid UTF-8 or not, as SQLite
// wrote them from the column's text.
func jsonString(b []byte, i int) (string, int, error) {
	j := i + 1
	for j < len(b) && b[j] != '"' && b[j] != '\\' {
		j++
	}
	if j < len(b) && b[j] == '"' {
		return string(b[i+1 : j]), j + 1, nil // no escape: the usual case
	}
	out := append([]byte(nil), b[i+1:j]...)
	for j < len(b) {
		switch c := b[j]; c {
		case '"':
			return string(out), j + 1, nil
		case '\\':
			if j+1 >= len(b) {
				return "", j, errors.New("unterminated string")
			}
			j++
			switch e := b[j]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(b, j+1)
				if !ok {
					return "", j, errors.New(`malformed \u escape`)
				}
				j += 4
				if utf16.IsSurrogate(r) {
					if low, ok := hex4(b, j+3); ok && j+2 < len(b) && b[j+1] == '\\' && b[j+2] == 'u' {
						if pair := utf16.DecodeRune(r, low); pair != utf8.RuneError {
							r = pair
							j += 6
						}
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", j, fmt.Errorf(`unknown escape \%c`, e)
			}
			j++
		default:
			out = append(out, c)
			j++
		}
	}
	return "", j, errors.New("unterminated string")
}

// jsonInteger is the integer at b[i] and where it ends; not ok for a
// number with a fraction or an exponent, or out of an int64's range.
func jsonInteger(b []byte, i int) (n int64, end int, ok bool) {
	neg := b[i] == '-'
	end = i
	if neg {
		end++
	}
	var u uint64
	digits := end
	for end < len(b) && '0' <= b[end] && b[end] <= '9' {
		if u > (1<<63)/10 {
			return 0, end, false
		}
		u = u*10 + uint64(b[end]-'0')
		end++
	}
	if end == digits || u > 1<<63 || !neg && u == 1<<63 {
		return 0, end, false
	}
	if end < len(b) && (b[end] == '.' || b[end] == 'e' || b[end] == 'E') {
		return 0, end, false
	}
	if neg {
		return -int64(u), end, true // -(1<<63) wraps to itself
	}
	return int64(u), end, true
}

// hex4 is the four hex digits at b[i:i+4] as a rune.
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
