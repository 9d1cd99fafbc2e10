// Package words writes the small pieces of English arena's messages share.
// It must never change a word's meaning to make it fit: a count and its noun
// always agree.
package words

import (
	"fmt"
	"strconv"
	"strings"
)

// Plural is n with the word, made plural unless n is 1 ("1 ply", "2 plies",
// "3 turns").
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if stem, ok := strings.CutSuffix(word, "y"); ok && stem != "" && !strings.ContainsAny(stem[len(stem)-1:], "aeiou") {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Or lists the choices as a sentence does: "a", "a or b", "a, b or c".
func Or(choices []string) string { return list(choices, " or ") }

// And lists the items as a sentence does: "a", "a and b", "a, b and c".
func And(items []string) string { return list(items, " and ") }

func list(items []string, last string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}

// Thousands is n with a comma between its thousands: 179,400.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// Ordinal is n as a place: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st.
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
