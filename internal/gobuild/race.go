//go:build race

package gobuild

// raceEnabled says the test binary runs under the race detector.
const raceEnabled = true
