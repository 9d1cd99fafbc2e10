package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Tournament are a tournament coordinator's metrics (arena tournament,
// its games played here or by workers): the games it records and their
// turns under kind tournament, the same metrics as the event server's, its
// games by state, and with workers its queue's figures.
type Tournament struct {
	exposed
	recorded

	aborted prometheus.Counter
}

// TournamentGauges are what a coordinator reads of its tournament at each
// scrape.
type TournamentGauges struct {
	Games   map[string]int // by state: pending, playing, done, unplayed
	Workers map[string]int // with workers, by state: admitted, suspended
}

var tournamentGamesDesc = prometheus.NewDesc("arena_tournament_games",
	"The tournament's games by state: pending (to play), playing (claimed: played here, or queued for or held by a worker), done, unplayed (aborted on every attempt).",
	[]string{"state"}, nil)

// NewTournament makes a coordinator's metrics; gauges is read at each
// scrape (an error is logged, and the scrape goes on without them).
func NewTournament(gauges func(context.Context) (TournamentGauges, error), log *slog.Logger) *Tournament {
	t := &Tournament{recorded: newRecorded()}
	t.aborted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "arena_tournament_attempts_aborted_total",
		Help: "Attempts of the tournament's games that did not count, since the process started: aborted by the host or sandbox (here or on a worker), a worker's result refused, or none within its deadline. Each is played again, up to its attempts.",
	})
	t.exposed = newExposed(append(t.recorded.collectors(), t.aborted,
		&tournamentCollector{read: gauges, log: log})...)
	return t
}

// Game counts a game recorded: played (won by "white", "black" or a
// "draw") or unplayed ("aborted"), with the turns of its transcript.
func (t *Tournament) Game(winner string, turns []Turn) {
	if t != nil {
		t.game(KindTournament, winner, turns)
	}
}

// Aborted counts an attempt that did not count (the host aborted it, a
// worker's result was refused or late).
func (t *Tournament) Aborted() {
	if t != nil {
		t.aborted.Inc()
	}
}

// WatchQueue adds the tournament's worker queue's figures, read at each
// scrape: the event server's own.
func (t *Tournament) WatchQueue(read func() QueueStats) {
	t.reg.MustRegister(queueCollector(read))
}

// tournamentCollector reads the tournament's games at each scrape.
type tournamentCollector struct {
	read func(context.Context) (TournamentGauges, error)
	log  *slog.Logger
}

func (c *tournamentCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- tournamentGamesDesc
	ch <- workersDesc
}

func (c *tournamentCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := c.read(ctx)
	if err != nil {
		if c.log != nil {
			c.log.Warn("metrics: the tournament's games could not be read", "err", err)
		}
		return
	}
	emitStates(ch, tournamentGamesDesc, g.Games)
	emitStates(ch, workersDesc, g.Workers)
}
