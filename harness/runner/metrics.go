package runner

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/roster"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
)

// ServeMetrics makes the metrics of the tournament in dir (NewMetrics) and
// serves them on /metrics at addr until stop; set them as Options.Metrics.
func ServeMetrics(ctx context.Context, addr, dir string, remote *Exchange, log *slog.Logger) (m *metrics.Tournament, stop func(), err error) {
	m = NewMetrics(dir, remote, log)
	stop, err = metrics.Serve(ctx, addr, m.Handler(), log)
	if err != nil {
		return nil, nil, err
	}
	return m, stop, nil
}

// NewMetrics makes the metrics of the tournament in dir: its games by
// state, read from its store at each scrape, and with remote its queue's
// figures and its enrolled workers. Run counts the games it records in them
// (Options.Metrics).
func NewMetrics(dir string, remote *Exchange, log *slog.Logger) *metrics.Tournament {
	m := metrics.NewTournament(func(ctx context.Context) (metrics.TournamentGauges, error) {
		return gauges(ctx, dir, remote != nil)
	}, log)
	if remote != nil {
		q := remote.Queue
		m.WatchQueue(func() metrics.QueueStats { return q.Stats().QueueStats() })
	}
	return m
}

// gauges are the tournament's games by state and, with workers, its
// workers by state.
func gauges(ctx context.Context, dir string, workers bool) (metrics.TournamentGauges, error) {
	var g metrics.TournamentGauges
	var err error
	if g.Games, err = gamesByState(ctx, dir); err != nil {
		return g, err
	}
	if !workers {
		return g, nil
	}
	g.Workers, err = WorkerCounts(dir)
	return g, err
}

// WorkerCounts are the workers enrolled for the tournament (or event) in
// dir by state: admitted, suspended.
func WorkerCounts(dir string) (map[string]int, error) {
	wdir := tournament.WorkersDir(dir)
	admitted, err := roster.Admitted(wdir)
	if err != nil {
		return nil, err
	}
	out, err := roster.Suspended(wdir)
	if err != nil {
		return nil, err
	}
	return map[string]int{"admitted": len(admitted), "suspended": len(out)}, nil
}

// metricsStates are the states the metrics name the games' statuses by.
var metricsStates = map[string]string{tournament.Pending: "pending", tournament.Running: "playing", tournament.Done: "done", tournament.Unplayed: "unplayed"}

// gamesByState counts the games of the tournament in dir by state, read
// from its store as arena standings reads it; none before it is begun.
func gamesByState(ctx context.Context, dir string) (counts map[string]int, err error) {
	if _, err := os.Stat(filepath.Join(dir, tournament.DBFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	st, err := tournament.OpenStore(dir, true)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			counts, err = nil, cerr
		}
	}()
	if ok, err := st.Initialized(ctx); err != nil || !ok {
		return nil, err
	}
	byStatus, err := st.CountByStatus(ctx)
	if err != nil {
		return nil, err
	}
	counts = map[string]int{}
	for _, state := range metricsStates {
		counts[state] = 0 // every state is there, zero or not
	}
	for status, n := range byStatus {
		if state, ok := metricsStates[status]; ok {
			counts[state] += n
		}
	}
	return counts, nil
}

// observe counts a game recorded (played or unplayed) in the metrics, with
// the turns of its transcript (an unplayed game's last attempt's; none when
// no transcript was handed in).
func (o *Options) observe(g tournament.Record) {
	if o.Metrics == nil {
		return
	}
	winner := g.Winner
	if g.Status != tournament.Done {
		winner = "aborted"
	}
	var turns []metrics.Turn
	lines, err := transcript.ReadFile(filepath.Join(o.Dir, g.Dir, transcript.FileName))
	switch {
	case err == nil:
		turns = metrics.TurnsOf(lines)
	case !errors.Is(err, fs.ErrNotExist):
		// A refused attempt's transcript may not read back: the game is
		// counted, its turns are not.
		slog.Warn("tournament: a game's turns are not counted in the metrics", "game", g.ID, "err", err)
	}
	o.Metrics.Game(winner, turns)
}

// ServeWorkerMetrics makes the metrics of a worker that plays slots games
// at once and serves them on /metrics at addr until stop; set them as
// Join.Metrics.
func ServeWorkerMetrics(ctx context.Context, addr string, slots int, log *slog.Logger) (m *metrics.Worker, stop func(), err error) {
	m = metrics.NewWorker(slots)
	stop, err = metrics.Serve(ctx, addr, m.Handler(), log)
	if err != nil {
		return nil, nil, err
	}
	return m, stop, nil
}

// observe counts a game this worker played to its end in its metrics,
// with the turns of its transcript in dir; a game stopped half-way is
// handed back, not counted.
func (w *Worker) observe(ctx context.Context, game int, dir string, res transcript.Result) {
	if w.Metrics == nil || ctx.Err() != nil {
		return
	}
	result := res.Winner
	if res.Reason == transcript.ReasonAborted {
		result = "aborted"
		w.Metrics.HostFault()
	}
	lines, err := transcript.ReadFile(filepath.Join(dir, transcript.FileName))
	if err != nil {
		// The coordinator judges the transcript; only the metrics lose its
		// turns.
		slog.Warn("worker: a game's turns are not counted in the metrics", "game", game, "err", err)
	}
	w.Metrics.Played(result, metrics.TurnsOf(lines))
}
