package proc

// Unclean is whether a box may still hold what an earlier bot left there:
// after a turn, a session or a wipe that failed, no bot may run in it until a
// reset has wiped it and found it empty. It is shared by the agent (for its
// container) and the local backend (for its box), which must never start a
// bot in such a box.
//
// The zero value is clean. An Unclean is not safe for concurrent use.
type Unclean struct {
	why error
}

// Mark remembers err as why the box may hold what a bot left, unless an
// earlier failure already made it unclean (the first one is what is
// reported), and returns err. A nil err changes nothing.
func (u *Unclean) Mark(err error) error {
	if u.why == nil {
		u.why = err
	}
	return err
}

// Why is the first failure since the box was last clean, nil while it is.
func (u *Unclean) Why() error { return u.why }

// Refuse is nil while the box is clean; otherwise it is the error that
// refuses a bot, an *UncleanError naming place (what the caller calls the
// box) and the first failure.
func (u *Unclean) Refuse(place string) error {
	if u.why == nil {
		return nil
	}
	return &UncleanError{Place: place, Why: u.why}
}

// Clear makes the box clean again. Only a reset that wiped the box and found
// it empty may call it.
func (u *Unclean) Clear() { u.why = nil }

// UncleanError refuses a bot in a box that may hold what an earlier bot left.
type UncleanError struct {
	// Place is what the box is called: "container", "box".
	Place string
	// Why is the first failure after which the box was unclean.
	Why error
}

func (e *UncleanError) Error() string {
	return "no bot may run until a reset succeeds: the " + e.Place + " may still hold what an earlier bot left (" + e.Why.Error() + ")"
}

func (e *UncleanError) Unwrap() error { return e.Why }
