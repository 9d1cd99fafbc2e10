package proc

import (
	"errors"
	"strings"
	"testing"
)

func TestABoxIsUncleanFromItsFirstFailureUntilCleared(t *testing.T) {
	var u Unclean
	if u.Why() != nil || u.Refuse("box") != nil {
		t.Fatalf("a new box is unclean: %v", u.Refuse("box"))
	}
	if err := u.Mark(nil); err != nil || u.Refuse("box") != nil {
		t.Fatalf("no failure made the box unclean: %v", u.Refuse("box"))
	}
	first, second := errors.New("wipe /tmp: not a directory"), errors.New("ask: resume failed")
	if err := u.Mark(first); err != first {
		t.Fatalf("Mark returned %v, want the failure it was given", err)
	}
	if err := u.Mark(second); err != second {
		t.Fatalf("Mark returned %v, want the failure it was given", err)
	}
	if u.Why() != first {
		t.Fatalf("why: %v, want the first failure", u.Why())
	}
	// Refusing does not clean the box: every bot is refused until Clear.
	for range 2 {
		err := u.Refuse("container")
		var ue *UncleanError
		if !errors.As(err, &ue) || !errors.Is(err, first) || errors.Is(err, second) {
			t.Fatalf("refusal %v (%T) does not hold the first failure alone", err, err)
		}
		want := "no bot may run until a reset succeeds: the container may still hold what an earlier bot left (wipe /tmp: not a directory)"
		if err.Error() != want {
			t.Fatalf("refusal says %q\nwant %q", err, want)
		}
	}
	u.Clear()
	if u.Why() != nil || u.Refuse("box") != nil {
		t.Fatalf("a cleared box is unclean: %v", u.Refuse("box"))
	}
	u.Mark(second)
	if err := u.Refuse("box"); !errors.Is(err, second) || !strings.Contains(err.Error(), "the box may still hold") {
		t.Fatalf("after a new failure: %v", err)
	}
}
