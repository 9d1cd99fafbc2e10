package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/services"
)

// The organizer's view of the queue: what waits and what plays, where and
// for how long, each worker's health, and the games and validations that
// look stuck, with what to do. It is drawn at each drawing of the page
// (kept a second at most, adminTTL), from the store and the worker queue's
// memory: no figure of it is older than that second.

// queueView is what waits and what plays.
type queueView struct {
	// At is when it was drawn: every "for how long" is from it.
	At time.Time `json:"at"`
	// Validations are those queued and running, in upload order.
	Validations []validationRow `json:"validations"`
	// Plays are the scrimmages and ladder pairs under way or waiting;
	// ScrimmagesQueued counts the scrimmages waiting in all.
	Plays            []playRow `json:"plays"`
	ScrimmagesQueued int       `json:"scrimmagesQueued"`
	// With workers: the games they hold now (the longest held first), the
	// games waiting for one, and the median time of the last games handed
	// in (hand-out to result) over Timed of them.
	Workers bool `json:"workers"`
	// PlaysOn says where games play without workers.
	PlaysOn  string          `json:"playsOn,omitempty"`
	Held     []heldRow       `json:"held,omitempty"`
	Waiting  int             `json:"waiting"`
	GameTime string          `json:"gameTime,omitempty"`
	Timed    int             `json:"timed"`
	Stuck    []stuckNote     `json:"stuck"`
	Health   []healthRow     `json:"health,omitempty"`
	Names    event.TeamNames `json:"-"`
}

// validationRow is a validation queued or running.
type validationRow struct {
	Submission int64  `json:"submission"`
	Team       int64  `json:"team"`
	State      string `json:"state"`
	// For is how long it has run ("" while queued).
	For   string `json:"for,omitempty"`
	Stuck bool   `json:"stuck,omitempty"`
}

// playRow is a scrimmage or a ladder pair, and where its games play.
type playRow struct {
	event.Play
	Name string `json:"name"`
	// For is how long since it started (a ladder pair) or was asked for
	// (a scrimmage).
	For string `json:"for"`
	// Where: "this machine", or the workers holding its games, or
	// "waiting for a worker".
	Where string `json:"where"`
}

// heldRow is a game a worker holds.
type heldRow struct {
	Name   string `json:"name"` // as the event's pages name it
	Job    int    `json:"job"`
	Worker string `json:"worker"`
	For    string `json:"for"`
	// Deadline says how long it has left, or how long past it is ("":
	// none told).
	Deadline string `json:"deadline,omitempty"`
	Stuck    bool   `json:"stuck,omitempty"`
}

// stuckNote is a game or a validation that looks stuck, what will happen
// to it by itself, and what the organizer may do.
type stuckNote struct {
	What   string `json:"what"`
	Action string `json:"action"`
}

// healthRow is a worker's health since the server started.
type healthRow struct {
	Name string `json:"name"`
	services.WorkerTally
	// Strikes are what it sent that the protocol never sends.
	Strikes int `json:"strikes"`
	// Holding are the games it holds now.
	Holding int `json:"holding"`
	// OthersTurnMs is the median turn of the other workers' games.
	OthersTurnMs float64 `json:"othersTurnMs,omitempty"`
	// Heard is when it last asked for a game, said it plays one, or handed
	// in a result (zero: not since the server started).
	Heard    time.Time `json:"heard,omitzero"`
	HeardAgo string    `json:"heardAgo,omitempty"`
}

// validationStuck is how long a validation may run before the page flags
// it: StuckFactor times the median of the last validations, and
// validationFloor at least; with fewer than StuckSamples of them to go by,
// validationAlone.
const (
	validationFloor = 10 * time.Minute
	validationAlone = 30 * time.Minute
)

// queueOf draws the queue's view at now.
func (s *Server) queueOf(ctx context.Context, queue []event.Submission, names event.TeamNames, now time.Time) (queueView, error) {
	v := queueView{At: now, Names: names, Workers: s.Queue != nil, PlaysOn: s.playsOn(), Stuck: []stuckNote{}}
	if err := s.validationsOf(ctx, &v, queue); err != nil {
		return v, err
	}
	plays, queued, err := s.Store.Plays(ctx)
	if err != nil {
		return v, err
	}
	v.ScrimmagesQueued = queued
	var held []distrib.Holding
	if s.Queue != nil {
		held = s.Queue.Holdings()
		median, n := s.Queue.GameTimes()
		v.Waiting, v.Timed = s.Queue.Stats().Waiting, n
		if n > 0 {
			v.GameTime = span(median)
		}
		for _, h := range held {
			v.Held = append(v.Held, s.heldOf(&v, h, median, n))
		}
		if v.Health, err = s.healthOf(held, now); err != nil {
			return v, err
		}
	}
	for _, p := range plays {
		v.Plays = append(v.Plays, s.playOf(p, held, names, now))
	}
	return v, nil
}

// validationsOf fills v's validations, flagging those that run far longer
// than the last ones took.
func (s *Server) validationsOf(ctx context.Context, v *queueView, queue []event.Submission) error {
	median, n, err := s.Store.ValidationTimes(ctx)
	if err != nil {
		return err
	}
	limit := validationAlone
	if n >= distrib.StuckSamples {
		limit = max(distrib.StuckFactor*median, validationFloor)
	}
	for _, sub := range queue {
		row := validationRow{Submission: sub.ID, Team: sub.Team, State: string(sub.State)}
		if !sub.Started.IsZero() && sub.State != event.Queued {
			ran := v.At.Sub(sub.Started)
			row.For = span(ran)
			if row.Stuck = ran > limit; row.Stuck {
				v.Stuck = append(v.Stuck, stuckNote{
					What: fmt.Sprintf("Submission #%d of %s has been %s for %s (validations lately took %s).", sub.ID, v.Names.Team(sub.Team), sub.State, row.For, spanOr(median, n)),
					Action: "Nothing ends it early: its bot's own time limits end it, and the team's page shows the outcome. " +
						"If this machine's sandbox is wedged (its engine does not answer), mend it and restart arena serve: validations under way are queued again as it starts.",
				})
			}
		}
		v.Validations = append(v.Validations, row)
	}
	return nil
}

// heldOf is a held game's row, with a note in v if it looks stuck.
func (s *Server) heldOf(v *queueView, h distrib.Holding, median time.Duration, n int) heldRow {
	row := heldRow{Name: event.JobName(h.Game), Job: h.Game, Worker: h.Worker, For: span(v.At.Sub(h.Since)),
		Stuck: h.Stuck(v.At, median, n)}
	left, told := h.DeadlineIn(v.At)
	switch {
	case !told:
	case left >= 0:
		row.Deadline = "in " + span(left)
	default:
		row.Deadline = span(-left) + " ago"
	}
	if row.Stuck {
		v.Stuck = append(v.Stuck, stuckNoteOf(row, h, median, n, told))
	}
	return row
}

// stuckNoteOf says of a game that looks stuck why, what will happen by
// itself, and what the organizer may do.
func stuckNoteOf(row heldRow, h distrib.Holding, median time.Duration, n int, told bool) stuckNote {
	what := fmt.Sprintf("Worker %s has held %s for %s without a result", h.Worker, row.Name, row.For)
	if told {
		what += fmt.Sprintf(" (its deadline %s)", row.Deadline)
	}
	if n > 0 {
		what += fmt.Sprintf("; the last %d games handed in took %s at the median", n, span(median))
	}
	what += "."
	action := "Readmitting is not needed: the worker is not suspended. If it still plays the game, its result counts when it comes. " +
		fmt.Sprintf("If the worker is gone, the game goes to another worker once %s has said nothing for the queue's ack wait (--ack-wait, 30 s by default). ", h.Worker)
	if told {
		action += "At its deadline the game is taken back and played again by another worker, charged to " + h.Worker + " (two such games suspend it). "
	}
	action += "To hand it out now, stop arena worker on " + h.Worker + "'s machine (Ctrl-C or SIGTERM): it hands back its games at once."
	return stuckNote{What: what, Action: action}
}

// playsOn says where games play when no worker plays them.
func (s *Server) playsOn() string {
	if s.PlaysOn == nil {
		return "on this machine"
	}
	return s.PlaysOn()
}

// playOf is a scrimmage's or a ladder pair's row: where its games play.
func (s *Server) playOf(p event.Play, held []distrib.Holding, names event.TeamNames, now time.Time) playRow {
	row := playRow{Play: p, For: span(now.Sub(p.Since)), Name: fmt.Sprintf("%s %d", p.Kind, p.ID)}
	if p.Kind == event.LadderGame {
		row.Name = fmt.Sprintf("ladder pair %d", p.ID)
	}
	switch {
	case p.State != event.ScrimmagePlaying && p.Kind == event.ScrimmageGame:
		row.Where = "waiting for a player"
	case s.Queue == nil:
		row.Where = s.playsOn()
	default:
		row.Where = "waiting for a worker"
		for _, h := range held {
			if kind, id, game := event.JobOf(h.Game); kind == p.Kind && id == p.ID {
				row.Where = fmt.Sprintf("game %d on %s", game, h.Worker)
			}
		}
	}
	return row
}

// HealthOf is worker's row of v.Health (a zero row if it has none).
func (v queueView) HealthOf(worker string) healthRow {
	for _, h := range v.Health {
		if h.Name == worker {
			return h
		}
	}
	return healthRow{Name: worker}
}

// healthOf is each enrolled worker's health since the server started.
func (s *Server) healthOf(held []distrib.Holding, now time.Time) ([]healthRow, error) {
	list, err := s.Store.EventWorkers()
	if err != nil {
		return nil, err
	}
	var tallies map[string]services.WorkerTally
	var others map[string]float64
	if s.Tally != nil {
		tallies, others = s.Tally.Workers()
	}
	heard, strikes := s.Queue.Heard(), s.Queue.Stats().Strikes
	holding := map[string]int{}
	for _, h := range held {
		holding[h.Worker]++
	}
	var rows []healthRow
	for _, w := range list {
		r := healthRow{Name: w.Name, WorkerTally: tallies[w.Name], Strikes: strikes[w.Name], Holding: holding[w.Name],
			OthersTurnMs: others[w.Name], Heard: heard[w.Name]}
		if !r.Heard.IsZero() {
			r.HeardAgo = span(now.Sub(r.Heard)) + " ago"
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

// span is a duration as a person reads it at a glance: "0.4 s", "45 s",
// "12 min", "2 h 05 min".
func span(d time.Duration) string {
	if d = max(d, 0); d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	switch d = d.Round(time.Second); {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// spanOr is span of a median, or "no time yet" when none was timed.
func spanOr(d time.Duration, n int) string {
	if n == 0 {
		return "no time yet"
	}
	return span(d)
}

// apiQueueView answers the validation queue as it always did ("queue"),
// and the queue's whole view ("view").
func (s *Server) apiQueueView(w http.ResponseWriter, r *http.Request) error {
	q, err := s.Store.Queue(r.Context())
	if err != nil {
		return err
	}
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return err
	}
	v, err := s.queueOf(r.Context(), q, names, time.Now().UTC())
	if err != nil {
		return err
	}
	if q == nil {
		q = []event.Submission{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue": q, "view": v})
	return nil
}

// workersHealth is each worker's health for the organizer's API (nil:
// no worker plays through this server).
func (s *Server) workersHealth() ([]healthRow, error) {
	if s.Queue == nil {
		return nil, nil
	}
	return s.healthOf(s.Queue.Holdings(), time.Now().UTC())
}
