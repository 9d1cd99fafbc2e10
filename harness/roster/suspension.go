package roster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/arenabots/arena/internal/files"
)

// Suspension is why a worker was shut out of a tournament: a result it
// handed in was refused for what it claimed (not the game it was sent, no
// replay, another key, an archive that cannot be read).
type Suspension struct {
	Worker string    `json:"worker"`
	At     time.Time `json:"at"`
	// Game is the job's number of the result refused.
	Game int `json:"game"`
	// Reason says why in a sentence a person reads at a glance; Detail,
	// when there is more (the field that differs, with both values), has
	// the rest.
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

func (s Suspension) String() string { return s.Named(nil) }

// Named is String with the game named by game (nil: "game N", a
// tournament's own numbering; an event names its jobs).
func (s Suspension) Named(game func(job int) string) string {
	what := fmt.Sprintf("game %d", s.Game)
	if game != nil {
		what = game(s.Game)
	}
	out := fmt.Sprintf("worker %s suspended at %s: %s, %s", s.Worker, s.At.UTC().Format("15:04:05"), what, s.Reason)
	if s.Detail != "" {
		out += " (" + s.Detail + ")"
	}
	return out
}

// maxReason is the longest reason a suspension states in its sentence.
const maxReason = 160

// Why splits a refusal into a reason a person reads at a glance and the
// rest: the values a differing field held (": the transcript has ...")
// go to the detail, and a reason past maxReason runes is cut at a word,
// the whole of it kept as the detail.
func Why(full string) (reason, detail string) {
	if i := strings.Index(full, ": the transcript has "); i >= 0 {
		reason, detail = full[:i], full[i+2:]
	} else {
		reason = full
	}
	if r := []rune(reason); len(r) > maxReason {
		cut := string(r[:maxReason])
		if i := strings.LastIndexByte(cut, ' '); i > maxReason/2 {
			cut = cut[:i]
		}
		return cut + " …", full
	}
	return reason, detail
}

const suspendedSuffix = ".suspended"

// Suspend records in the workers directory dir that a worker is shut out:
// its enrolment stays (its key still checks what it handed in), but the
// queue admits it no more (Admitted) until Readmit. A worker suspended
// already keeps its first suspension.
func Suspend(dir string, s Suspension) error {
	if err := CheckName(s.Worker); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	err = files.WriteNew(filepath.Join(dir, s.Worker+suspendedSuffix), append(data, '\n'), 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	return err
}

// Readmit ends a worker's suspension: the queue admits it again.
func Readmit(dir, worker string) (Suspension, error) {
	if err := CheckName(worker); err != nil {
		return Suspension{}, err
	}
	all, err := Suspended(dir)
	if err != nil {
		return Suspension{}, err
	}
	s, ok := all[worker]
	if !ok {
		return Suspension{}, fmt.Errorf("worker %s is not suspended", worker)
	}
	return s, os.Remove(filepath.Join(dir, worker+suspendedSuffix))
}

// Suspended reads the suspensions of the workers directory dir, by worker.
func Suspended(dir string) (map[string]Suspension, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Suspension{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]Suspension{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), suspendedSuffix)
		if !ok || !e.Type().IsRegular() || CheckName(name) != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var s Suspension
		if err := json.Unmarshal(data, &s); err != nil {
			// Unreadable, it still suspends: a file put there says so.
			s = Suspension{Reason: "suspended (" + e.Name() + " does not read: " + err.Error() + ")"}
		}
		s.Worker = name
		out[name] = s
	}
	return out, nil
}

// SuspensionList is Suspended in the order they came.
func SuspensionList(dir string) ([]Suspension, error) {
	all, err := Suspended(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Suspension, 0, len(all))
	for _, s := range all {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].Worker < out[j].Worker
	})
	return out, nil
}

// Admitted are the enrolled workers that are not suspended: those the
// queue lets in.
func Admitted(dir string) (map[string]string, error) {
	enrolled, err := Enrolled(dir)
	if err != nil {
		return nil, err
	}
	suspended, err := Suspended(dir)
	if err != nil {
		return nil, err
	}
	for w := range suspended {
		delete(enrolled, w)
	}
	return enrolled, nil
}

// IsSuspended says whether worker is suspended in the workers directory
// dir now.
func IsSuspended(dir, worker string) bool {
	if CheckName(worker) != nil {
		return false
	}
	_, err := os.Lstat(filepath.Join(dir, worker+suspendedSuffix))
	return err == nil
}
