package sandbox

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Doctor is what arena doctor checks and measures of one kind of backend.
// A backend's package registers it with RegisterDoctor where it registers
// its Opener, so that the doctor finds it by kind and imports no backend.
type Doctor struct {
	// Preflight checks, in order, what official matches need of the
	// backend cfg names. It starts a few short-lived boxes and removes them.
	// A backend it could not reach at all is also an error, saying how to
	// reach one; its rows say so too.
	Preflight func(ctx context.Context, cfg Config) ([]Check, error)
	// Bench measures, runs turns each, what a turn and a box cost in the
	// backend cfg names, under cfg.Runtime; then, when others is true,
	// under each other runtime the backend has, side by side. The rows
	// that ran a box name their runtime.
	Bench func(ctx context.Context, cfg Config, runs int, others bool) ([]Timing, error)
	// Host says the backend's boxes run on this host: the doctor checks
	// this host's timers and load with it, and its bench's first row is a
	// bare fork/exec here, what a turn of each language is compared with.
	Host bool
}

var doctors = map[string]Doctor{}

// RegisterDoctor makes a kind of backend's checks and bench available to
// DoctorOf.
func RegisterDoctor(kind string, d Doctor) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := doctors[kind]; dup {
		panic("sandbox: doctor of " + kind + " registered twice")
	}
	doctors[kind] = d
}

// DoctorOf is the doctor of the backend kind names ("": DefaultKind). A kind
// no backend registered is an *UnknownKindError.
func DoctorOf(kind string) (Doctor, error) {
	if kind == "" {
		kind = DefaultKind
	}
	openersMu.Lock()
	d, ok := doctors[kind]
	_, open := openers[kind]
	openersMu.Unlock()
	switch {
	case ok:
		return d, nil
	case !open:
		return Doctor{}, &UnknownKindError{Kind: kind}
	}
	return Doctor{}, fmt.Errorf("the %s sandbox has nothing for the doctor to check", kind)
}

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
