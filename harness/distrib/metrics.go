package distrib

import (
	"github.com/arenabots/arena/harness/metrics"
)

// QueueStats are the queue's figures as its coordinator's metrics expose
// them (metrics.Event and metrics.Tournament's WatchQueue).
func (s Stats) QueueStats() metrics.QueueStats {
	return metrics.QueueStats{Waiting: s.Waiting, Held: s.Held, Stuck: s.Stuck, HandedOut: s.HandedOut, Strikes: s.Strikes, Results: s.Results}
}
