package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arenabots/arena/sandbox"
	_ "github.com/arenabots/arena/sandbox/local"
)

// A backend is found by its kind; an unknown kind is refused naming the
// kinds there are, and the local backend says it is no security boundary.
func TestOpenFindsABackendByKind(t *testing.T) {
	t.Parallel()
	var said []string
	b, release, err := sandbox.Open(context.Background(), sandbox.Config{Kind: "local", Notify: func(m string) { said = append(said, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "local" {
		t.Fatalf("opened %s, want local", b.Name())
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if len(said) != 1 || !strings.Contains(said[0], "no isolation") {
		t.Fatalf("the local backend said %q, want its warning", said)
	}
	_, _, err = sandbox.Open(context.Background(), sandbox.Config{Kind: "vm"})
	var unknown *sandbox.UnknownKindError
	if err == nil || !strings.Contains(err.Error(), `no sandbox backend "vm" (want local`) {
		t.Fatalf("an unknown kind: %v", err)
	}
	if !asUnknown(err, &unknown) || unknown.Kind != "vm" {
		t.Fatalf("an unknown kind is not an UnknownKindError: %T", err)
	}
}

func asUnknown(err error, target **sandbox.UnknownKindError) bool {
	u, ok := err.(*sandbox.UnknownKindError)
	*target = u
	return ok
}

// A kind's doctor is found by its kind, as its Opener is; a kind without
// one, or no kind at all, is refused.
func TestDoctorOfFindsAKindsChecks(t *testing.T) {
	t.Parallel()
	sandbox.RegisterDoctor("doctor-test", sandbox.Doctor{Host: true})
	if d, err := sandbox.DoctorOf("doctor-test"); err != nil || !d.Host {
		t.Fatalf("the registered doctor: %+v, %v", d, err)
	}
	if _, err := sandbox.DoctorOf("local"); err == nil || !strings.Contains(err.Error(), "the local sandbox has nothing for the doctor to check") {
		t.Fatalf("a kind without a doctor: %v", err)
	}
	var unknown *sandbox.UnknownKindError
	if _, err := sandbox.DoctorOf("vm"); !asUnknown(err, &unknown) || unknown.Kind != "vm" {
		t.Fatalf("an unknown kind: %v", err)
	}
}

// A kind reads its own settings, the zero value when there are none, and
// refuses another kind's.
func TestAKindReadsOnlyItsOwnSettings(t *testing.T) {
	t.Parallel()
	type mine struct{ Host string }
	type theirs struct{ Namespace string }
	if got, err := sandbox.SettingsOf[mine]("k", sandbox.Config{Backend: mine{"h"}}); err != nil || got.Host != "h" {
		t.Errorf("its own: %+v, %v", got, err)
	}
	if got, err := sandbox.SettingsOf[mine]("k", sandbox.Config{}); err != nil || got != (mine{}) {
		t.Errorf("none: %+v, %v", got, err)
	}
	if _, err := sandbox.SettingsOf[mine]("k", sandbox.Config{Backend: theirs{"ns"}}); err == nil || !strings.Contains(err.Error(), "the k backend cannot take settings of type") {
		t.Errorf("another kind's: %v", err)
	}
}
