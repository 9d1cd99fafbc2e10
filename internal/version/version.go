// Package version compares dotted version numbers ("1.41", "2.39").
package version

import (
	"strconv"
	"strings"
)

// Less reports whether a is an older version than b, comparing each dotted
// field as a number; a missing field counts as 0 and "" is older than any
// version.
func Less(a, b string) bool {
	if a == "" {
		return b != ""
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
