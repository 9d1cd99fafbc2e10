package setting

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// An error about a setting reads in words in the library and with the
// program's own name for it where the program says so, wrapped or not; what
// it wraps stays reachable.
func TestAnErrorNamesItsSettingAsTheProgramReadsIt(t *testing.T) {
	inner := fmt.Errorf("dial: %w", fs.ErrNotExist)
	err := Errorf(DockerHost, "%w (start it or point {setting} at one)", inner)
	if got, want := err.Error(), "dial: file does not exist (start it or point the Docker engine's address at one)"; got != want {
		t.Errorf("in words: %q, want %q", got, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the wrapped error is lost")
	}
	flag := func(n Name) string {
		if n == DockerHost {
			return "--docker-host"
		}
		return ""
	}
	wrapped := fmt.Errorf("open the sandbox: %w", err)
	if got, want := Named(wrapped, flag), "open the sandbox: dial: file does not exist (start it or point --docker-host at one)"; got != want {
		t.Errorf("named: %q, want %q", got, want)
	}
	other := Errorf(Namespace, "no namespace %q: give {setting}", "x")
	if got, want := Named(other, flag), `no namespace "x": give another namespace`; got != want {
		t.Errorf("a setting the program does not name: %q, want %q", got, want)
	}
	plain := errors.New("{setting} is not a placeholder here")
	if got := Named(plain, flag); got != plain.Error() {
		t.Errorf("an error about no setting: %q", got)
	}
}
