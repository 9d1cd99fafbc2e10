package docker

import "time"

// SetSweepEvery sets how often an open backend sweeps again, for a test that
// must not run beside another opening one; it returns the restore.
func SetSweepEvery(d time.Duration) (restore func()) {
	old := sweepEvery
	sweepEvery = d
	return func() { sweepEvery = old }
}
