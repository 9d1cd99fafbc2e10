package main

import (
	"strings"
	"testing"
)

// arena verify says what is wrong with how it was asked (exit 2) apart
// from a final that does not hold (exit 1, tested with a published final
// in harness/web): no key, a key that is not one, a bundle that is not
// there.
func TestVerifyTellsABadAskFromAFinalThatDoesNotHold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", dir}, "verify needs --key"},
		{[]string{"verify", "--key", "not-a-key", dir}, "is not a log's public key"},
		{[]string{"verify", "--key", "arena/x/final+3f3d6df1+AYqDUdhDhsJNAY6QZ4kDbQ4wIE2ywtL5QpOdsPu2i+S/", dir}, "cannot be read as a published final"},
		{[]string{"verify", "--key", "k", "--proof", dir + "/none.tlog-proof"}, "no such file"},
	} {
		code, _, stderr := runArena(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("arena %s: exit %d, %q; want %d and %q", strings.Join(c.args, " "), code, stderr, exitUsage, c.want)
		}
	}
}
