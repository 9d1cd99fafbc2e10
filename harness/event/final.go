package event

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/sandbox"
)

// FinalDir is the final's tournament directory inside the event directory:
// arena standings, the report, replay and resume work on it as on any.
const FinalDir = "final"

// FinalEntry is a team's submission pinned for the final.
type FinalEntry struct {
	Team       int64  `json:"team"`
	Name       string `json:"name"`
	Submission int64  `json:"submission"`
	SHA256     string `json:"sha256"`
}

// Closed says whether (and when) uploads were closed for the final.
func (s *Store) Closed(ctx context.Context) (time.Time, bool, error) {
	var at string
	err := s.readRow(ctx, `SELECT closed FROM closing WHERE id = 1`).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return parseTime(at), err == nil, err
}

// CloseUploads stops uploads and pins every enabled team's active submission for
// the final, in one transaction. Closing again changes nothing and returns
// the entries pinned the first time.
func (s *Store) CloseUploads(ctx context.Context) ([]FinalEntry, error) {
	if _, closed, err := s.Closed(ctx); err != nil || closed {
		if err != nil {
			return nil, err
		}
		return s.FinalEntries(ctx)
	}
	playing, err := s.activeTeams(ctx)
	if err != nil {
		return nil, err
	}
	var pin []FinalEntry
	var names []string
	for _, ts := range playing {
		pin = append(pin, FinalEntry{Team: ts.team.ID, Name: ts.team.Name, Submission: ts.sub.ID, SHA256: ts.sub.SHA256})
		names = append(names, fmt.Sprintf("%s #%d", ts.team.Name, ts.sub.ID))
	}
	err = s.act(ctx, ActionClose, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO closing (id, closed) VALUES (1, ?)`, now()); err != nil {
			return "", err
		}
		for _, e := range pin {
			if _, err := tx.ExecContext(ctx, `INSERT INTO final_entries (team_id, submission, sha256) VALUES (?, ?, ?)`, e.Team, e.Submission, e.SHA256); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("uploads closed; pinned %d: %s", len(pin), strings.Join(names, ", ")), nil
	})
	if err != nil {
		return nil, err
	}
	return s.FinalEntries(ctx)
}

// ReopenUploads undoes CloseUploads: uploads (within the event's hours),
// scrimmages and the ladder go on, and nothing is pinned. Once the final
// has started it is refused: its games were played with the pinned
// submissions.
func (s *Store) ReopenUploads(ctx context.Context) error {
	return s.act(ctx, ActionReopen, func(tx *sql.Tx) (string, error) {
		var started int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM final_run`).Scan(&started); err != nil {
			return "", err
		}
		if started > 0 {
			return "", &RefusedError{"the final has started: its games were played with the pinned submissions, so uploads stay closed"}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM closing`)
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return "", &RefusedError{"uploads are not closed"}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM final_entries`); err != nil {
			return "", err
		}
		return "uploads open again; nothing pinned", nil
	})
}

// Outlook is who the final would play: the teams pinned (or, before the
// close, the teams that would be), and the teams left out with the reason.
type Outlook struct {
	Closed  bool         `json:"closed"`
	Playing []FinalEntry `json:"playing"`
	// Missing are the enabled teams without a submission that plays (none
	// passed its validation, and none was admitted) and none waiting for
	// its validation: they will not play.
	Missing []Team `json:"missing"`
	// Waiting are the enabled teams without a submission that plays yet,
	// with one queued or under validation: they play if it passes.
	Waiting []Team `json:"waiting"`
	// Disabled are the teams the organizer disabled.
	Disabled []Team `json:"disabled"`
}

// FinalOutlook is who plays the final and who does not, and why.
func (s *Store) FinalOutlook(ctx context.Context) (Outlook, error) {
	var o Outlook
	var err error
	if _, o.Closed, err = s.Closed(ctx); err != nil {
		return o, err
	}
	teams, err := s.Teams(ctx)
	if err != nil {
		return o, err
	}
	if o.Closed {
		if o.Playing, err = s.FinalEntries(ctx); err != nil {
			return o, err
		}
	} else {
		playing, err := s.activeOf(ctx, teams)
		if err != nil {
			return o, err
		}
		for _, ts := range playing {
			o.Playing = append(o.Playing, FinalEntry{Team: ts.team.ID, Name: ts.team.Name, Submission: ts.sub.ID, SHA256: ts.sub.SHA256})
		}
	}
	in := map[int64]bool{}
	for _, e := range o.Playing {
		in[e.Team] = true
	}
	pending := map[int64]bool{}
	if !o.Closed {
		rows, err := s.read(ctx, `SELECT DISTINCT team_id FROM submissions WHERE state IN (?, ?, ?)`, Queued, Building, Validating)
		if err != nil {
			return o, err
		}
		defer rows.Close()
		for rows.Next() {
			var team int64
			if err := rows.Scan(&team); err != nil {
				return o, err
			}
			pending[team] = true
		}
		if err := rows.Err(); err != nil {
			return o, err
		}
	}
	for _, t := range teams {
		switch {
		case in[t.ID]:
		case t.Disabled:
			o.Disabled = append(o.Disabled, t)
		case pending[t.ID]:
			o.Waiting = append(o.Waiting, t)
		default:
			o.Missing = append(o.Missing, t)
		}
	}
	return o, nil
}

// FinalEntries are the submissions pinned for the final, by team name.
func (s *Store) FinalEntries(ctx context.Context) ([]FinalEntry, error) {
	return readAll(ctx, s, scanFinalEntry, `SELECT f.team_id, t.name, f.submission, f.sha256 FROM final_entries f JOIN teams t ON t.id = f.team_id ORDER BY t.name`)
}

// scanFinalEntry reads a team's id and name, its pinned submission and hash.
func scanFinalEntry(row interface{ Scan(...any) error }) (FinalEntry, error) {
	var e FinalEntry
	err := row.Scan(&e.Team, &e.Name, &e.Submission, &e.SHA256)
	return e, err
}

// FinalEntryOf is team's submission pinned for the final; ok is false when
// none is (uploads open, or the team had none that plays at the close).
func (s *Store) FinalEntryOf(ctx context.Context, team int64) (e FinalEntry, ok bool, err error) {
	err = s.readRow(ctx, `SELECT f.team_id, t.name, f.submission, f.sha256 FROM final_entries f JOIN teams t ON t.id = f.team_id WHERE f.team_id = ?`, team).
		Scan(&e.Team, &e.Name, &e.Submission, &e.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return FinalEntry{}, false, nil
	}
	return e, err == nil, err
}

// Final is how the final is played: the options of arena tournament.
type Final struct {
	Settings match.Resolved
	Backend  sandbox.Backend
	Image    string
	Builder  *build.Builder
	Intake   submission.Limits
	Shape
	Seed         uint64
	Concurrency  int
	MaxAttempts  int
	ArenaVersion string
	Signer       ed25519.PrivateKey
	Progress     tournament.Progress
	// Workers, when set, play the games instead of this machine.
	Workers *Workers
	// Watch, when set, follows each game this machine plays (Watch).
	Watch Watch
}

// Watch follows a game this machine starts to play, for the event's live
// pages: its kind, its sides and its round of the final (0: none). It
// returns the game's observer, nil for none.
type Watch func(kind string, white, black Side, round int) match.Observer

// watcher is w as a tournament's Options.Watch, the sides its bots' by
// index.
func (w Watch) watcher(kind string, sides []Side) func(tournament.Record) match.Observer {
	if w == nil {
		return nil
	}
	return func(g tournament.Record) match.Observer {
		round := 0
		if kind == FinalGame {
			round = g.Round
		}
		return w(kind, sides[g.White], sides[g.Black], round)
	}
}

// FinalGame is a game of the final.
const FinalGame = "final"

// Shape is how a final is laid out: its format and that format's choices.
type Shape struct {
	// Format is one of FinalFormats ("": a round robin).
	Format string `json:"format"`
	// Rounds is a Swiss final's rounds, or a stages final's qualifier's
	// (0: ceil(log2 teams) + 2).
	Rounds int `json:"rounds,omitempty"`
	// Top, when set, is how many teams the final plays: the ladder's top
	// Top as it stood at the close (a qualifying stage), the rest out.
	Top int `json:"top,omitempty"`
	// Advance is how many of a stages final's qualifier go on to its
	// second stage (0: 16, or every team of fewer), Then that stage's
	// format (tournament.SecondStages; "": a double elimination).
	Advance int    `json:"advance,omitempty"`
	Then    string `json:"then,omitempty"`
	// Budget is the games a rating final plays at most (0: its default).
	Budget       int `json:"budget,omitempty"`
	GamesPerPair int `json:"gamesPerPair"`
}

// FinalFormats are the formats a final may be played in: every
// tournament's but the gauntlet.
func FinalFormats() []string {
	var out []string
	for _, f := range tournament.Formats() {
		if f != tournament.Gauntlet {
			out = append(out, f)
		}
	}
	return out
}

// Config is the tournament's schedule of this shape for a final of teams
// teams: its format and that format's choices, defaults filled in, tie-breaks
// the format's own.
func (s Shape) Config(teams int) tournament.Config {
	c := tournament.Config{Format: cmp.Or(s.Format, tournament.RoundRobin), Rounds: s.Rounds, GamesPerPair: s.GamesPerPair, Budget: s.Budget}
	if c.Format == tournament.Stages {
		c.Advance, c.Then = cmp.Or(s.Advance, tournament.DefaultAdvance(teams)), cmp.Or(s.Then, tournament.DoubleElimination)
	}
	c.TieBreaks = tournament.TieBreaksFor(c.Format)
	c.Bots = make([]tournament.BotEntry, teams)
	return c
}

// Check refuses a shape no final can have, whatever its teams: an unknown
// format, a second stage that is not one, numbers out of range.
func (s Shape) Check() error {
	if s.Format != "" && !slices.Contains(FinalFormats(), s.Format) {
		return fmt.Errorf("format: a final is %s, not %q", words.Or(FinalFormats()), s.Format)
	}
	if s.Then != "" && !slices.Contains(tournament.SecondStages(), s.Then) {
		return fmt.Errorf("then: a second stage is %s, not %q", words.Or(tournament.SecondStages()), s.Then)
	}
	if s.Rounds < 0 || s.Top < 0 || s.Advance < 0 || s.Budget < 0 {
		return errors.New("rounds, top, advance and budget: 0 (the default) or more")
	}
	return nil
}

// Describe says the shape in words for teams teams: "swiss, 11 rounds",
// "stages: a Swiss qualifier of 11 rounds, its top 16 then a double
// elimination", "the ladder's top 64" appended when set.
func (s Shape) Describe(teams int) string {
	c := s.Config(min(teams, max(s.Top, 0)))
	if s.Top <= 0 {
		c = s.Config(teams)
	}
	out := c.Describe()
	if s.Top > 0 {
		out += fmt.Sprintf(", the ladder's top %d", s.Top)
	}
	return out
}

// FinalRun is how the final was started, and how it ended.
type FinalRun struct {
	Shape
	Concurrency int       `json:"concurrency"`
	MaxAttempts int       `json:"maxAttempts"`
	Seed        uint64    `json:"seed"`
	Started     time.Time `json:"started"`
	// Finished is zero while the final plays, or was stopped before its
	// end (the next run resumes it).
	Finished time.Time `json:"finished,omitzero"`
	// Error says why the last run failed ("" if it did not).
	Error string `json:"error,omitempty"`
}

// Running says whether the final was started and has not ended: a server
// that starts then resumes it.
func (r FinalRun) Running() bool { return !r.Started.IsZero() && r.Finished.IsZero() }

// FinalRun is the final's last run; ok is false before it was started.
func (s *Store) FinalRun(ctx context.Context) (r FinalRun, ok bool, err error) {
	var seed int64
	var started, finished string
	err = s.readRow(ctx, `SELECT format, rounds, top, advance, then_format, budget, games_per_pair, concurrency, max_attempts, seed, started, finished, error FROM final_run WHERE id = 1`).
		Scan(&r.Format, &r.Rounds, &r.Top, &r.Advance, &r.Then, &r.Budget, &r.GamesPerPair, &r.Concurrency, &r.MaxAttempts, &seed, &started, &finished, &r.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	r.Seed, r.Started, r.Finished = uint64(seed), parseTime(started), parseTime(finished)
	return r, true, nil
}

func (s *Store) beginFinal(ctx context.Context, f Final, players []FinalEntry) error {
	teams := len(players)
	return s.act(ctx, ActionFinal, func(tx *sql.Tx) (string, error) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM final_players`); err != nil {
			return "", err
		}
		for i, p := range players {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO final_players (team, seed) VALUES (?, ?)`, p.Team, i+1); err != nil {
				return "", err
			}
		}
		var runs int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM final_run`).Scan(&runs); err != nil {
			return "", err
		}
		format := cmp.Or(f.Format, tournament.RoundRobin)
		_, err := tx.ExecContext(ctx, `INSERT INTO final_run (id, format, rounds, top, advance, then_format, budget, games_per_pair, concurrency, max_attempts, seed, started)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET format = excluded.format, rounds = excluded.rounds,
		top = excluded.top, advance = excluded.advance, then_format = excluded.then_format, budget = excluded.budget,
		games_per_pair = excluded.games_per_pair,
		concurrency = excluded.concurrency, max_attempts = excluded.max_attempts, seed = excluded.seed,
		started = CASE WHEN final_run.started = '' THEN excluded.started ELSE final_run.started END, finished = '', error = ''`, format, f.Rounds, f.Top, f.Advance, f.Then, f.Budget, f.GamesPerPair, f.Concurrency, f.MaxAttempts, int64(f.Seed), now())
		verb := "started"
		if runs > 0 {
			verb = "resumed"
		}
		return fmt.Sprintf("the final %s: %d teams, %s, %d games per pair, %d at once, seed %d", verb, teams, f.Describe(teams), f.GamesPerPair, f.Concurrency, f.Seed), err
	})
}

// endFinal records that the final's run ended: with runErr, now; played
// to its end, when its last game finished (a run that only found its games
// played, resumed after a stop, ends when they did, not when it resumed).
func (s *Store) endFinal(ctx context.Context, runErr error) error {
	msg, at := "", now()
	if runErr != nil {
		msg = runErr.Error()
	} else {
		var last sql.NullString
		if err := s.w.QueryRowContext(ctx, `SELECT finished FROM games WHERE kind = ? ORDER BY julianday(finished) DESC LIMIT 1`, FinalGame).Scan(&last); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if t := parseTime(last.String); !t.IsZero() {
			at = t.UTC().Format(time.RFC3339Nano)
		}
	}
	_, err := s.w.ExecContext(ctx, `UPDATE final_run SET finished = ?, error = ? WHERE id = 1`, at, msg)
	return err
}

// RunFinal plays the final (closing the event first if it is open): a
// round robin of the pinned submissions in DIR/final through the tournament
// runner, resumed if it was interrupted. Each game is recorded as the event's
// as it finishes (the teams' pages, the live standings and disputes read
// them); the run is recorded in final_run, so a server restarted while it
// plays resumes it. Everything the final needs is checked first
// (PrepareFinal): a final that cannot be played is refused with the
// reason before uploads are closed.
func (s *Store) RunFinal(ctx context.Context, f Final) (*tournament.Summary, error) {
	plan, err := s.PrepareFinal(ctx, f)
	if err != nil {
		return nil, err
	}
	return plan.Play(ctx)
}

// FinalPlan is a final checked and ready to play: its uploads closed, its
// bots loaded (and built).
type FinalPlan struct {
	store   *Store
	f       Final
	entries []FinalEntry
	bots    []*submission.Bot
	cfg     tournament.Config
	begun   bool
}

// Begin records that the final starts (or resumes) now: a server shows it
// playing from then on, and resumes it after a stop. Play begins it if
// nobody did.
func (p *FinalPlan) Begin(ctx context.Context) error {
	if p.begun {
		return nil
	}
	if err := p.store.beginFinal(ctx, p.f, p.entries); err != nil {
		return err
	}
	p.begun = true
	return nil
}

// Entries are the teams the final plays.
func (p *FinalPlan) Entries() []FinalEntry { return p.entries }

// PrepareFinal checks everything the final needs before anything that
// cannot be undone: at least two teams that play, each one's submission
// loaded and built, distinct bot names, a sandbox that answers, options the
// runner takes. Then it closes uploads (if they are open), pinning what it
// checked. A final that cannot start is a *RefusedError saying why; nothing
// is closed then.
func (s *Store) PrepareFinal(ctx context.Context, f Final) (*FinalPlan, error) {
	f.Concurrency, f.MaxAttempts = max(f.Concurrency, 1), max(f.MaxAttempts, 1)
	refuse := func(format string, a ...any) (*FinalPlan, error) {
		return nil, &RefusedError{"the final cannot start: " + fmt.Sprintf(format, a...)}
	}
	look, err := s.FinalOutlook(ctx)
	if err != nil {
		return nil, err
	}
	seeded, err := s.finalSeeds(ctx)
	if err != nil {
		return nil, err
	}
	if len(seeded) > 0 {
		// Resumed: the players and their order are the ones it started
		// with, stored then, whatever the ladder, the teams' names or
		// their state say now.
		look.Playing = seeded
	}
	if len(look.Playing) < 2 {
		var left []string
		for _, t := range look.Missing {
			left = append(left, t.Name)
		}
		why := "no other team has a submission that passed or was admitted"
		if len(left) > 0 {
			why = "without a submission that passed or was admitted: " + strings.Join(left, ", ")
		}
		return refuse("it needs at least 2 teams that play, and %d %s (%s)", len(look.Playing), map[bool]string{true: "does", false: "do"}[len(look.Playing) == 1], why)
	}
	if _, err := f.Backend.Describe(ctx); err != nil {
		return refuse("the sandbox does not answer (%v): start the engine, then try again", err)
	}
	load := func(entries []FinalEntry, have map[int64]*submission.Bot) ([]*submission.Bot, error) {
		var bots []*submission.Bot
		for _, e := range entries {
			if b := have[e.Submission]; b != nil {
				bots = append(bots, b)
				continue
			}
			b, err := s.LoadBot(ctx, e.Submission, f.Settings.Game, f.Builder, f.Intake, nil)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				return nil, &RefusedError{fmt.Sprintf("the final cannot start: %s's submission #%d cannot be played: %v", e.Name, e.Submission, err)}
			}
			bots = append(bots, b)
		}
		return bots, nil
	}
	bots, err := load(look.Playing, nil)
	if err != nil {
		return nil, err
	}
	plan := &FinalPlan{store: s, f: f, entries: look.Playing, bots: bots}
	if len(seeded) > 0 {
		if plan.cfg, err = plan.config(); err != nil {
			return refuse("%v", err)
		}
		return plan, nil
	}
	if err := plan.seedByLadder(ctx); err != nil {
		return nil, err
	}
	if plan.cfg, err = plan.config(); err != nil {
		return refuse("%v", err)
	}
	if look.Closed {
		return plan, nil
	}
	// Closing pins the active submissions as they are now: an upload that
	// passed since they were checked is loaded too.
	entries, err := s.CloseUploads(ctx)
	if err != nil {
		return nil, err
	}
	have := map[int64]*submission.Bot{}
	for i, e := range look.Playing {
		have[e.Submission] = bots[i]
	}
	if plan.bots, err = load(entries, have); err != nil {
		return nil, err
	}
	plan.entries = entries
	if err := plan.seedByLadder(ctx); err != nil {
		return nil, err
	}
	if plan.cfg, err = plan.config(); err != nil {
		return refuse("%v", err)
	}
	return plan, nil
}

// seedByLadder orders a knockout final's teams, or one of the ladder's top
// Top, by the ladder as it stood at the close (rated teams by their place,
// then the others by team): a bracket is seeded in that order, and the
// first Top play. The ladder stops at the close, so a resumed final seeds
// and picks as the first run did.
func (p *FinalPlan) seedByLadder(ctx context.Context) error {
	if cmp.Or(p.f.Format, tournament.RoundRobin) == tournament.RoundRobin && p.f.Top <= 0 {
		return nil
	}
	ladder, err := p.store.Ladder(ctx)
	if err != nil {
		return err
	}
	place := map[int64]int{}
	for _, st := range ladder {
		if st.Rank > 0 {
			place[st.Team] = st.Rank
		}
	}
	key := func(team int64) [2]int64 {
		if r, ok := place[team]; ok {
			return [2]int64{0, int64(r)}
		}
		return [2]int64{1, team}
	}
	idx := make([]int, len(p.entries))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := key(p.entries[idx[a]].Team), key(p.entries[idx[b]].Team)
		return ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1]
	})
	entries, bots := make([]FinalEntry, len(idx)), make([]*submission.Bot, len(idx))
	for i, j := range idx {
		entries[i], bots[i] = p.entries[j], p.bots[j]
	}
	if p.f.Top > 0 && p.f.Top < len(entries) {
		// The qualifying stage: the ladder's top Top play, the rest not.
		entries, bots = entries[:p.f.Top], bots[:p.f.Top]
	}
	p.entries, p.bots = entries, bots
	return nil
}

// finalSeeds are the players of a final that started, in the order it
// started with, each with its pinned submission; none before it started,
// or for a final started before the order was kept.
func (s *Store) finalSeeds(ctx context.Context) ([]FinalEntry, error) {
	return readAll(ctx, s, scanFinalEntry, `SELECT p.team, t.name, f.submission, f.sha256 FROM final_players p
		JOIN final_entries f ON f.team_id = p.team JOIN teams t ON t.id = p.team
		WHERE NOT EXISTS (SELECT 1 FROM final_players WHERE seed = 0) ORDER BY p.seed`)
}

// FinalPlayers are the teams the final plays (none before it started).
func (s *Store) FinalPlayers(ctx context.Context) (map[int64]bool, error) {
	rows, err := s.read(ctx, `SELECT team FROM final_players`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var team int64
		if err := rows.Scan(&team); err != nil {
			return nil, err
		}
		out[team] = true
	}
	return out, rows.Err()
}

// config is the final's tournament, checked.
func (p *FinalPlan) config() (tournament.Config, error) {
	if err := p.f.Check(); err != nil {
		return tournament.Config{}, err
	}
	cfg := tournament.NewConfig(p.bots, p.f.Settings, p.f.Backend, p.f.Image)
	// Every format but a round robin plays the teams in the ladder's
	// order: a bracket's seeds, a Swiss first round's halves.
	shape := p.f.Config(len(p.bots))
	cfg.Format, cfg.Rounds, cfg.Advance, cfg.Then, cfg.Budget, cfg.TieBreaks = shape.Format, shape.Rounds, shape.Advance, shape.Then, shape.Budget, shape.TieBreaks
	cfg.GamesPerPair, cfg.Seed = p.f.GamesPerPair, p.f.Seed
	for i, e := range p.entries {
		cfg.Bots[i].Team = e.Name // arena standings names the team, its bot beside it
	}
	return cfg, cfg.Validate()
}

// Play plays the final planned.
func (p *FinalPlan) Play(ctx context.Context) (*tournament.Summary, error) {
	s, f := p.store, p.f
	if err := p.Begin(ctx); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.Dir, FinalDir)
	rec := &finalRecorder{store: s, dir: dir, sides: sides(p.entries), next: f.Progress}
	o := tournament.Options{Dir: dir, Config: p.cfg, Bots: p.bots,
		Game: f.Settings.Game, Backend: f.Backend, Concurrency: f.Concurrency, MaxAttempts: f.MaxAttempts,
		ArenaVersion: f.ArenaVersion, Signer: f.Signer, Progress: rec, BlobStore: filepath.Join(s.Dir, EvidenceDir),
		Watch: f.Watch.watcher(FinalGame, rec.sides)}
	f.Workers.apply(&o, jobsFinal)
	sum, err := tournament.Run(ctx, o)
	if ctx.Err() != nil {
		return sum, errors.Join(err, ctx.Err()) // not ended: resumed by the next run
	}
	// Games whose record a crash cut off between the tournament's store and
	// the event's are recorded now.
	err = errors.Join(err, rec.err, s.recordFinalGames(context.WithoutCancel(ctx), dir, rec.sides))
	err = errors.Join(err, s.SyncFinalLog(context.WithoutCancel(ctx)))
	return sum, errors.Join(err, s.endFinal(context.WithoutCancel(ctx), err))
}

func sides(entries []FinalEntry) []Side {
	out := make([]Side, len(entries))
	for i, e := range entries {
		out[i] = Side{Team: e.Team, Submission: e.Submission}
	}
	return out
}

// finalRecorder records each game of the final as the event's when it
// finishes, then tells next.
type finalRecorder struct {
	store *Store
	dir   string
	sides []Side
	next  tournament.Progress
	err   error // the first game that could not be recorded
}

func (r *finalRecorder) Start(total, done int) {
	if done > 0 {
		r.err = errors.Join(r.err, r.store.recordFinalGames(context.Background(), r.dir, r.sides))
	}
	// Scheduled: the log commits to the final's configuration, players
	// and pairings before a game is played.
	r.err = errors.Join(r.err, r.store.SyncFinalLog(context.Background()))
	if r.next != nil {
		r.next.Start(total, done)
	}
}

func (r *finalRecorder) GameDone(g tournament.Record, white, black, leader string) {
	if g.Status == tournament.Done && g.Dir != "" {
		if _, err := r.store.AddGame(context.Background(), FinalGame, filepath.Join(r.dir, g.Dir), r.sides[g.White], r.sides[g.Black]); err != nil && r.err == nil {
			r.err = fmt.Errorf("record game %d of the final: %w", g.ID, err)
		} else if err := r.store.SyncFinalLog(context.Background()); err != nil && r.err == nil {
			r.err = err
		}
	}
	if r.next != nil {
		r.next.GameDone(g, white, black, leader)
	}
}

// Paired logs a round as it is paired, before its games are played.
func (r *finalRecorder) Paired([]tournament.Game) {
	if err := r.store.SyncFinalLog(context.Background()); err != nil && r.err == nil {
		r.err = err
	}
}

func (r *finalRecorder) Finish() {
	if r.next != nil {
		r.next.Finish()
	}
}

// recordFinalGames records every finished game of the final in dir that the
// event has not recorded yet.
func (s *Store) recordFinalGames(ctx context.Context, dir string, sides []Side) error {
	have, err := s.finalFinished(ctx)
	if err != nil {
		return err
	}
	st, err := tournament.OpenStore(dir, true)
	if err != nil {
		return err
	}
	defer st.Close() // read-only
	recs, err := st.Games(ctx)
	if err != nil {
		return err
	}
	if err := s.HostReplays(ctx, FinalGame, dir, recs); err != nil {
		return err
	}
	for _, g := range recs {
		if g.Status != tournament.Done || g.Dir == "" {
			continue
		}
		if _, ok := have[filepath.Join(FinalDir, g.Dir)]; ok {
			continue
		}
		if _, err := s.AddGame(ctx, FinalGame, filepath.Join(dir, g.Dir), sides[g.White], sides[g.Black]); err != nil {
			return fmt.Errorf("record game %d of the final: %w", g.ID, err)
		}
	}
	return nil
}

// finalFinished is when each recorded game of the final finished, by its
// directory relative to the event directory.
func (s *Store) finalFinished(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.read(ctx, `SELECT dir, finished FROM games WHERE kind = ?`, FinalGame)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var dir, fin string
		if err := rows.Scan(&dir, &fin); err != nil {
			return nil, err
		}
		out[dir] = parseTime(fin)
	}
	return out, rows.Err()
}

// FinalVersion changes whenever a game of the final is recorded, a round
// of it is paired (logged), the final starts or ends, or the scoreboard is
// frozen or revealed: a server watches it to refresh the live standings.
func (s *Store) FinalVersion(ctx context.Context) (string, error) {
	var n, last, logged int64
	var frozen, run, names sql.NullString
	var closed sql.NullString
	err := s.readRow(ctx, `SELECT count(*), coalesce(max(id), 0), (SELECT at FROM freeze WHERE id = 1),
		(SELECT started || '/' || finished || '/' || length(error) FROM final_run WHERE id = 1),
		(SELECT group_concat(id || ':' || name, '/') FROM teams), (SELECT closed FROM closing WHERE id = 1),
		(SELECT coalesce(max(n), 0) FROM log_entries) FROM games WHERE kind = ?`, FinalGame).
		Scan(&n, &last, &frozen, &run, &names, &closed, &logged)
	// A freeze set for later changes the board when its time comes.
	active := frozen.Valid && !time.Now().Before(parseTime(frozen.String))
	return fmt.Sprintf("%d/%d/%s/%t/%s/%s/%s/%d", n, last, frozen.String, active, run.String, names.String, closed.String, logged), err
}

// Freeze freezes the scoreboard from at on: teams (and visitors) see the
// final's standings as they were at that time until Reveal.
func (s *Store) Freeze(ctx context.Context, at time.Time) error {
	return s.act(ctx, ActionFreeze, func(tx *sql.Tx) (string, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO freeze (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
			at.UTC().Format(time.RFC3339Nano))
		return "teams see the standings as of " + at.UTC().Format(time.RFC3339), err
	})
}

// Reveal ends the freeze: everyone sees the standings as they are.
func (s *Store) Reveal(ctx context.Context) error {
	return s.act(ctx, ActionReveal, func(tx *sql.Tx) (string, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM freeze WHERE id = 1`)
		if err != nil {
			return "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return "", &RefusedError{"the scoreboard is not frozen"}
		}
		return "everyone sees the standings as they are", nil
	})
}

// Frozen is the time the scoreboard is frozen from, if it is.
func (s *Store) Frozen(ctx context.Context) (time.Time, bool, error) {
	var at string
	err := s.readRow(ctx, `SELECT at FROM freeze WHERE id = 1`).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return parseTime(at), err == nil, err
}

// Board is the final's scoreboard as someone may see it.
type Board struct {
	Standings []BoardRow `json:"standings"`
	// Games counts the final's games: total, done, unplayed, pending (as
	// of the freeze, for a frozen board: done counts the games shown).
	Games map[string]int `json:"games"`
	// FrozenAt is when the board shown was frozen (zero if it is live).
	FrozenAt time.Time `json:"frozenAt,omitzero"`
	// FreezesAt is the freeze the organizer set, shown to the organizer
	// only (zero if none).
	FreezesAt time.Time `json:"freezesAt,omitzero"`
	Run       FinalRun  `json:"run"`
	// TieBreaks are the tie-breaks that place teams level on points, in
	// the order they apply (a row's decidedBy names the one that did).
	TieBreaks []string `json:"tieBreaks"`
	// Stage says where the final stands, in words: its format, the round
	// under way of how many, where the cut falls ("" before it started).
	Stage string `json:"stage,omitempty"`
	// Cut is how many of a stages final's qualifier go on (0: no cut).
	Cut int `json:"cut,omitempty"`
	// Upcoming are the matches paired and not yet over, each team's next
	// (none on a frozen board: a pairing can tell a result).
	Upcoming []BoardPairing `json:"upcoming,omitempty"`
	// Rounds are a Swiss final's (a stages final's qualifier's, a rating
	// final's) rounds with their pairings, as far as they are shown (a frozen board: the rounds whose every game had
	// finished by the freeze).
	Rounds []BoardRound `json:"rounds,omitempty"`
	// Bracket is a bracket final's (a stages final's second stage's)
	// bracket, drawn (SVG), as far as the board shows its games.
	Bracket string `json:"-"`
}

// BoardRound is a round of a Swiss final: its pairings and who sat out.
type BoardRound struct {
	Round    int            `json:"round"`
	Pairings []BoardPairing `json:"pairings"`
	Bye      string         `json:"bye,omitempty"`
}

// BoardPairing is two teams' games in a round: each one's points from
// them (a win 1, a draw ½), and how many are still to finish.
type BoardPairing struct {
	// Round is an upcoming match's round (0 within a BoardRound).
	Round        int `json:"round,omitempty"`
	White, Black string
	WhitePoints  float64 `json:"whitePoints"`
	BlackPoints  float64 `json:"blackPoints"`
	Left         int     `json:"left,omitempty"`
}

// boardRounds are a Swiss final's rounds from its games; shown says which
// games' results may show (nil: all), and a round shows only when all of
// its finished games may.
func boardRounds(state *tournament.State, names TeamNames, shown func(tournament.Record) bool) []BoardRound {
	// The rounds a format pairs: a Swiss final's, a stages final's
	// qualifier's (its second stage is a round robin, or drawn as a
	// bracket), a rating final's.
	format, qualifier := state.Config.Format, 0
	switch format {
	case tournament.Swiss, tournament.Rating:
	case tournament.Stages:
		qualifier = state.Config.SwissRounds()
	default:
		return nil
	}
	team := teamOfBot(state, names)
	byRound := map[int][]tournament.Record{}
	last := 0
	for _, r := range state.Games {
		if qualifier > 0 && r.Round > qualifier {
			continue
		}
		byRound[r.Round] = append(byRound[r.Round], r)
		last = max(last, r.Round)
	}
	var out []BoardRound
	for round := 1; round <= last; round++ {
		br := BoardRound{Round: round}
		in := map[int]bool{}
		at := map[[2]int]int{}
		hidden := false
		for _, r := range byRound[round] {
			in[r.White], in[r.Black] = true, true
			key := [2]int{min(r.White, r.Black), max(r.White, r.Black)}
			i, ok := at[key]
			if !ok {
				i = len(br.Pairings)
				at[key] = i
				br.Pairings = append(br.Pairings, BoardPairing{White: team(r.White), Black: team(r.Black)})
			}
			p := &br.Pairings[i]
			points, done := r.Score(r.White)
			switch {
			case !done:
				p.Left++
			case shown != nil && !shown(r):
				hidden = true
			case team(r.White) == p.White:
				p.WhitePoints += points
				p.BlackPoints += 1 - points
			default:
				p.BlackPoints += points
				p.WhitePoints += 1 - points
			}
		}
		if hidden {
			break
		}
		for b := range state.Config.Bots {
			// A Swiss round's one bot left out sits it out, scored; a
			// rating round pairs only the teams it is unsure of.
			if !in[b] && len(byRound[round]) > 0 && format != tournament.Rating {
				br.Bye = team(b)
			}
		}
		out = append(out, br)
	}
	return out
}

// stage says where a final of cfg stands after the games shown (nil: all):
// "swiss, 11 rounds: round 4 of 11", "stages: the qualifier's round 3 of 8;
// its top 16 go on to a double elimination", and the cut.
func stage(cfg tournament.Config, recs []tournament.Record, shown func(tournament.Record) bool) (string, int) {
	round := 0
	for _, r := range recs {
		if shown == nil || shown(r) {
			round = max(round, r.Round)
		}
	}
	if round == 0 {
		return cfg.Describe() + ": not under way yet", 0
	}
	switch cfg.Format {
	case tournament.Swiss:
		return fmt.Sprintf("%s: round %d of %d", cfg.Describe(), round, cfg.SwissRounds()), 0
	case tournament.Stages:
		q, then := cfg.SwissRounds(), strings.ReplaceAll(cfg.Then, "-", " ")
		if round <= q {
			return fmt.Sprintf("stages: the qualifier's round %d of %d; its top %d go on to a %s", round, q, cfg.Advance, then), cfg.Advance
		}
		return fmt.Sprintf("stages: the second stage, a %s of the qualifier's top %d", then, cfg.Advance), 0
	case tournament.Knockout, tournament.DoubleElimination:
		return fmt.Sprintf("%s: round %d of the bracket", cfg.Describe(), round), 0
	case tournament.Rating:
		return fmt.Sprintf("%s: round %d, played where the ranks are least sure", cfg.Describe(), round), 0
	}
	return cfg.Describe(), 0
}

// teamOfBot names the team of a bot of the final by the bot's index.
func teamOfBot(state *tournament.State, names TeamNames) func(bot int) string {
	return func(bot int) string {
		name := state.Config.Bots[bot].Name
		return cmp.Or(names.ByBot[name], name)
	}
}

// upcoming are the final's matches paired and not over: its games pending
// or playing, by pair, each with what is left of it.
func upcoming(state *tournament.State, names TeamNames) []BoardPairing {
	team := teamOfBot(state, names)
	at := map[int]int{}
	var out []BoardPairing
	for _, r := range state.Games {
		if r.Status != tournament.Pending && r.Status != tournament.Running {
			continue
		}
		i, ok := at[r.Pair]
		if !ok {
			i = len(out)
			at[r.Pair] = i
			out = append(out, BoardPairing{Round: r.Round, White: team(r.White), Black: team(r.Black)})
		}
		out[i].Left++
	}
	return out
}

// BoardRow is a row of the final's standings with its team's name: Name
// is the name its bot played under.
type BoardRow struct {
	tournament.Row
	Team string `json:"team"`
	// ByLot: this place and the one it was told apart from were drawn at
	// random (seeded), their points and every other tie-break equal.
	ByLot bool `json:"byLot,omitempty"`
}

// boardRows are rows with their teams' names.
func boardRows(rows []tournament.Row, names TeamNames) []BoardRow {
	out := make([]BoardRow, 0, len(rows))
	for _, r := range rows {
		team := names.ByBot[r.Name]
		if team == "" {
			team = r.Name
		}
		out = append(out, BoardRow{Row: r, Team: team, ByLot: r.DecidedBy == tournament.RandomDraw})
	}
	// A draw separates a row from the next: both places were drawn.
	for i := 1; i < len(out); i++ {
		if out[i-1].DecidedBy == tournament.RandomDraw {
			out[i].ByLot = true
		}
	}
	return out
}

// FinalBoards is the final's scoreboard as anyone and as the organizer see
// it, both from one load of DIR/final (nil, nil before the final started).
// The organizer sees it live; anyone else, while the scoreboard is frozen,
// sees it computed from the games that had finished by the freeze. The two
// may share their standings and counts: neither is to be changed.
func (s *Store) FinalBoards(ctx context.Context) (anyone, organizer *Board, err error) {
	state, err := tournament.Load(ctx, filepath.Join(s.Dir, FinalDir))
	if errors.Is(err, tournament.ErrNotStarted) {
		// Begun, its first game not yet under way: the run, and nothing
		// played.
		run, ok, err := s.FinalRun(ctx)
		if err != nil || !ok {
			return nil, nil, err
		}
		b := Board{Standings: []BoardRow{}, Games: map[string]int{}, Run: run, TieBreaks: []string{}}
		org := b
		return &b, &org, nil
	}
	if err != nil {
		return nil, nil, err
	}
	names, err := s.Names(ctx)
	if err != nil {
		return nil, nil, err
	}
	live := Board{Standings: boardRows(state.Summary.Standings, names), Games: state.StandingsFile().Games, Rounds: boardRounds(state, names, nil),
		Bracket: state.BracketSVG(), TieBreaks: state.Config.TieBreaks, Upcoming: upcoming(state, names)}
	live.Stage, live.Cut = stage(state.Config, state.Games, nil)
	if live.Run, _, err = s.FinalRun(ctx); err != nil {
		return nil, nil, err
	}
	at, frozen, err := s.Frozen(ctx)
	if err != nil {
		return nil, nil, err
	}
	org := live
	if !frozen {
		return &live, &org, nil
	}
	org.FreezesAt = at
	if time.Now().Before(at) {
		return &live, &org, nil
	}
	finished, err := s.finalFinished(ctx)
	if err != nil {
		return nil, nil, err
	}
	shown := 0
	fb := live
	byFreeze := func(r tournament.Record) bool {
		fin, ok := finished[filepath.Join(FinalDir, r.Dir)]
		return ok && !fin.After(at)
	}
	fb.Standings = boardRows(state.StandingsOf(func(r tournament.Record) bool {
		if byFreeze(r) {
			shown++
			return true
		}
		return false
	}), names)
	fb.Rounds = boardRounds(state, names, byFreeze)
	fb.Bracket = state.BracketSVGOf(byFreeze)
	fb.Stage, fb.Upcoming = "", nil
	fb.Stage, fb.Cut = stage(state.Config, state.Games, byFreeze)
	fb.FrozenAt = at
	fb.Games = map[string]int{"total": state.Summary.Total, "done": shown}
	// Nothing after the freeze shows: not whether the final ended, or
	// failed, or how many games the host could not play.
	fb.Run = FinalRun{Shape: live.Run.Shape, Concurrency: live.Run.Concurrency, Started: live.Run.Started}
	if fb.Run.Started.After(at) {
		fb.Run.Started = time.Time{}
	}
	return &fb, &org, nil
}

// NewFinal is the final of the event in st as cfg describes it, with its
// settings resolved: played on backend in image, the bots built by builder,
// the transcripts signed with the event's key. arena event final and arena
// serve both start from it; each then sets the run's shape and seed, and
// where the games are played and watched.
func NewFinal(st *Store, cfg Config, settings match.Resolved, backend sandbox.Backend, image string, builder *build.Builder, arenaVersion string) (Final, error) {
	key, err := st.Signer()
	if err != nil {
		return Final{}, err
	}
	return Final{Settings: settings, Backend: backend, Image: image, Builder: builder, Intake: cfg.Intake(),
		ArenaVersion: arenaVersion, Signer: key}, nil
}
