package event

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/transcript"
)

// Gauges are the event's state as its metrics read it at a scrape: the
// submissions and scrimmages by state (their queues), the final's games
// recorded, the database's size. Each count is one grouped query.
func (s *Store) Gauges(ctx context.Context) (metrics.Gauges, error) {
	g := metrics.Gauges{Submissions: map[string]int{}, Scrimmages: map[string]int{}, Final: map[string]int{}}
	for _, q := range []struct {
		query string
		into  map[string]int
	}{
		{`SELECT state, count(*) FROM submissions GROUP BY state`, g.Submissions},
		{`SELECT state, count(*) FROM scrimmages GROUP BY state`, g.Scrimmages},
		{`SELECT 'done', count(*) FROM games WHERE kind = 'final'`, g.Final},
	} {
		rows, err := s.read(ctx, q.query)
		if err != nil {
			return g, err
		}
		for rows.Next() {
			var state string
			var n int
			if err := rows.Scan(&state, &n); err != nil {
				rows.Close()
				return g, err
			}
			q.into[state] = n
		}
		if err := rows.Close(); err != nil {
			return g, err
		}
	}
	for _, f := range []string{DBFile, DBFile + "-wal"} {
		if fi, err := os.Stat(filepath.Join(s.Dir, f)); err == nil {
			g.DBBytes += fi.Size()
		}
	}
	return g, nil
}

// observeGame tells the metrics of a game just recorded, with its turns'
// times from its transcript's lines.
func (s *Store) observeGame(kind, winner string, lines []transcript.Line) {
	if s.Metrics == nil {
		return
	}
	if winner == "" {
		winner = "aborted"
	}
	s.Metrics.Game(kind, winner, metrics.TurnsOf(lines))
}

// timed observes how long a write took.
func (s *Store) timed(start time.Time) { s.Metrics.Write(time.Since(start)) }
