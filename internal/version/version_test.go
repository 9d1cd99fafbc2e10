package version

import "testing"

func TestLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"1.41", "1.41", false}, {"1.40", "1.41", true}, {"1.9", "1.41", true}, {"2.39", "2.41", true},
		{"2.41", "2.39", false}, {"2.3.4", "2.3", false}, {"2.3", "2.3.1", true}, {"", "2.2.5", true}, {"2.2.5", "", false},
	} {
		if got := Less(c.a, c.b); got != c.less {
			t.Errorf("Less(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
