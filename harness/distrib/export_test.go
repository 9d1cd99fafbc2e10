package distrib

import (
	"time"
)

// SetSweep shortens the upload sweep for a test, until its cleanup.
func SetSweep(every, after time.Duration) (restore func()) {
	e, a := sweepEvery, sweepAfter
	sweepEvery, sweepAfter = every, after
	return func() { sweepEvery, sweepAfter = e, a }
}
