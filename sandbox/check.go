package sandbox

import (
	"slices"
	"time"
)

// Status of one of the doctor's checks.
type Status string

// Check statuses.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Check is one line of the doctor's table: what a backend's preflight, or
// the doctor itself, checked.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Timing is one way of running a turn, or a step of a box's life,
// measured: a row of the doctor's bench.
type Timing struct {
	Name string `json:"name"`
	// Runtime is the runtime the row ran under ("" for rows that run no
	// box: bare, the local backend).
	Runtime string  `json:"runtime,omitempty"`
	Runs    int     `json:"runs"`
	P50Ms   float64 `json:"p50Ms"`
	P99Ms   float64 `json:"p99Ms"`
	XBare   float64 `json:"xBare,omitempty"`      // p50 over the bare p50
	OverMs  float64 `json:"overBareMs,omitempty"` // p50 minus the bare p50
}

// TimingOf summarises durations as a row; bare > 0 (a bare fork/exec's
// p50 in ms) adds the comparison with it.
func TimingOf(name string, d []time.Duration, bare float64) Timing {
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	t := Timing{Name: name, Runs: len(d), P50Ms: ms(d[len(d)/2]), P99Ms: ms(d[len(d)*99/100])}
	if bare > 0 {
		t.XBare, t.OverMs = t.P50Ms/bare, t.P50Ms-bare
	}
	return t
}
