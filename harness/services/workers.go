package services

import (
	"github.com/arenabots/arena/harness/runner"
)

// Workers are the machines an event's games go to when its server was
// started with workers (arena serve --listen): every pair and the final
// share one queue, whose collector the server runs, and each result counts
// only once re-judged and signed by its worker's enrolled key, as in a
// distributed tournament.
type Workers struct {
	Exchange *runner.Exchange // runner.Shared
	// Key is the key a worker was enrolled with (runner.WorkerKey of
	// the event's directory).
	Key func(worker string) (string, error)
}

// apply sends the games of o to the workers as jobs offset+1, offset+2...
// (nil: o plays them here).
func (w *Workers) apply(o *runner.Options, offset int) {
	if w == nil {
		return
	}
	o.Remote, o.WorkerKey, o.JobOffset = w.Exchange, w.Key, offset
}
