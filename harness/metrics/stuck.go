package metrics

import "github.com/prometheus/client_golang/prometheus"

// stuckDesc is the games workers hold that look stuck: held past half
// their deadline, or far past the time their peers take (distrib's rule,
// Holding.Stuck), while their deadline has not passed yet.
var stuckDesc = prometheus.NewDesc("arena_worker_games_stuck",
	"Games held by a worker that look stuck before their deadline: held past half of it, or past five times the median game's time and 30 s; they are among the held.", nil, nil)

// stuckMetric is the stuck games' gauge of a queue's figures.
func stuckMetric(s QueueStats) prometheus.Metric {
	return prometheus.MustNewConstMetric(stuckDesc, prometheus.GaugeValue, float64(s.Stuck))
}
