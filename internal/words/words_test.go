package words

import "testing"

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n          int
		word, want string
	}{
		{1, "ply", "1 ply"}, {2, "ply", "2 plies"}, {0, "play ply", "0 play plies"},
		{3, "turn", "3 turns"}, {1, "game", "1 game"}, {2, "day", "2 days"}, {2, "y", "2 ys"},
	} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}

func TestOr(t *testing.T) {
	t.Parallel()
	for want, choices := range map[string][]string{"": nil, "a": {"a"}, "a or b": {"a", "b"}, "a, b or c": {"a", "b", "c"}} {
		if got := Or(choices); got != want {
			t.Errorf("Or(%q) = %q, want %q", choices, got, want)
		}
	}
}

func TestAnd(t *testing.T) {
	t.Parallel()
	for want, items := range map[string][]string{"": nil, "a": {"a"}, "a and b": {"a", "b"}, "a, b and c": {"a", "b", "c"}} {
		if got := And(items); got != want {
			t.Errorf("And(%q) = %q, want %q", items, got, want)
		}
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 179400: "179,400", 1000000: "1,000,000", -12345: "-12,345"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th", 112: "112th"} {
		if got := Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
