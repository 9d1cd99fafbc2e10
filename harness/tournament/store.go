package tournament

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/sqlitedb"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// DBFile is the tournament database inside the tournament directory.
const DBFile = "tournament.db"

// Game states in the database.
const (
	Pending  = "pending"
	Running  = "running"
	Done     = "done"
	Unplayed = "unplayed" // aborted by the host or sandbox too many times
)

// Config is everything that decides the tournament's games and standings. It is
// stored before the first game; a resume with a different one is refused.
type Config struct {
	Format       string            `json:"format"`
	Challenger   string            `json:"challenger,omitempty"`
	GamesPerPair int               `json:"gamesPerPair"`
	Seed         uint64            `json:"seed"`
	Game         string            `json:"game"`
	Rules        map[string]string `json:"rules"`
	Limits       sandbox.Limits    `json:"limits"`
	OnFault      string            `json:"onFault"`
	Sandbox      string            `json:"sandbox"`
	Image        string            `json:"image,omitempty"`
	Scoring      Scoring           `json:"scoring"`
	TieBreaks    []string          `json:"tieBreaks"`
	// Evidence is how much data-file content each game keeps.
	Evidence transcript.Evidence `json:"evidence"`
	// Openings are the positions the pairs start from, in the order they
	// are played (none: the game's own start, or its seed's).
	Openings []rules.Opening `json:"openings,omitempty"`
	Bots     []BotEntry      `json:"bots"`
	// Rounds is a Swiss tournament's rounds, or a stages tournament's
	// qualifier's (0: SwissRounds of its bots).
	Rounds int `json:"rounds,omitempty"`
	// Advance is how many bots a stages tournament's qualifier sends to
	// its second stage, and Then that stage's format (SecondStages).
	Advance int    `json:"advance,omitempty"`
	Then    string `json:"then,omitempty"`
	// Budget is the games a rating tournament plays at most (0: its
	// default, RatingBudget).
	Budget int `json:"budget,omitempty"`
	// Playoff are the places decided by playoff games when level after
	// every tie-break but the lot (nil: PlayoffPlaces' default; NoPlayoff:
	// none, the lot decides).
	Playoff []int `json:"playoff,omitempty"`
}

// BotEntry is one participant.
type BotEntry struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Source string `json:"source"`
	// Team is the name of the team the bot plays for, when it is not the
	// bot's (an event's final): people read it, the games name the bot.
	Team string `json:"team,omitempty"`
}

// Diff lists how now differs from stored, one line per field, for a refusal
// message.
func Diff(stored, now Config) []string {
	out := diffBots(stored.Bots, now.Bots)
	stored.Bots, now.Bots = nil, nil
	return append(diffValues("", reflect.ValueOf(stored), reflect.ValueOf(now)), out...)
}

var durationType = reflect.TypeOf(time.Duration(0))

func diffValues(prefix string, a, b reflect.Value) []string {
	if a.Kind() == reflect.Struct {
		var out []string
		for i := 0; i < a.NumField(); i++ {
			name := strings.Split(a.Type().Field(i).Tag.Get("json"), ",")[0]
			if prefix != "" {
				name = prefix + "." + name
			}
			out = append(out, diffValues(name, a.Field(i), b.Field(i))...)
		}
		return out
	}
	if reflect.DeepEqual(a.Interface(), b.Interface()) {
		return nil
	}
	show := func(v reflect.Value) string {
		if v.Type() == durationType {
			return v.Interface().(time.Duration).String()
		}
		j, err := json.Marshal(v.Interface())
		if err != nil {
			return fmt.Sprint(v.Interface()) // only a refusal message shows it
		}
		return string(j)
	}
	return []string{fmt.Sprintf("%s: stored %s, now %s", prefix, show(a), show(b))}
}

func diffBots(a, b []BotEntry) []string {
	var out []string
	byName := func(list []BotEntry) map[string]BotEntry {
		m := map[string]BotEntry{}
		for _, e := range list {
			m[e.Name] = e
		}
		return m
	}
	ma, mb := byName(a), byName(b)
	for _, e := range a {
		switch f, ok := mb[e.Name]; {
		case !ok:
			out = append(out, fmt.Sprintf("bot %s: in the stored tournament, missing now", e.Name))
		case f.SHA256 != e.SHA256:
			out = append(out, fmt.Sprintf("bot %s: its executable changed (sha256 %.12s stored, %.12s now)", e.Name, e.SHA256, f.SHA256))
		}
	}
	for _, e := range b {
		if _, ok := ma[e.Name]; !ok {
			out = append(out, fmt.Sprintf("bot %s: new, not in the stored tournament", e.Name))
		}
	}
	if len(out) == 0 && !reflect.DeepEqual(names(a), names(b)) {
		out = append(out, "bot order: "+moved(names(a), names(b)))
	}
	return out
}

// moved says which bots of the same list stand elsewhere now: "greedy-06
// was 5th, now 37th", the first three, and how many more.
func moved(stored, now []string) string {
	at := map[string]int{}
	for i, n := range now {
		at[n] = i
	}
	var moves []string
	for i, n := range stored {
		if j := at[n]; j != i {
			moves = append(moves, fmt.Sprintf("%s was %s, now %s", n, words.Ordinal(i+1), words.Ordinal(j+1)))
		}
	}
	if len(moves) > 3 {
		return strings.Join(moves[:3], "; ") + fmt.Sprintf("; and %d more moved", len(moves)-3)
	}
	return strings.Join(moves, "; ")
}

func names(list []BotEntry) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Name
	}
	return out
}

// Record is one game as stored.
type Record struct {
	Game
	Status      string             `json:"status"`
	Attempts    int                `json:"attempts"`
	Winner      string             `json:"winner,omitempty"`
	Reason      string             `json:"reason,omitempty"`
	Plies       int                `json:"plies"`
	Turns       int                `json:"turns"`
	Faults      []transcript.Fault `json:"faults,omitempty"`
	AbortReason string             `json:"abortReason,omitempty"`
	Dir         string             `json:"dir,omitempty"` // relative to the tournament directory
	DurationMs  float64            `json:"durationMs"`
	BotMs       float64            `json:"botMs"` // time inside the bots' processes
	// TurnMs is the game's median turn, wall time as the harness measured it.
	TurnMs float64 `json:"turnMs"`
	// SlotMs is how long it held its place among the games played at once
	// (Times.SlotMs; 0 for a worker's).
	SlotMs float64 `json:"slotMs,omitempty"`
	// Worker played the game ("" for this machine).
	Worker string `json:"worker,omitempty"`
	// Tries counts the game's tries that ended without a result, charged
	// (Attempts) or not: a result a worker handed in that was refused is
	// charged to the worker, and a host that aborts the game again is
	// charged once. The next try is Tries+1: the job's attempt number.
	Tries int `json:"tries,omitempty"`
	// Rejected counts the results of the game refused for what they
	// claimed (a worker suspended for each).
	Rejected int `json:"rejected,omitempty"`
	// AbortedBy are the hosts whose aborts were charged to the game
	// (a worker's name, "" for this machine), in order.
	AbortedBy []string `json:"abortedBy,omitempty"`
	// HostBusy counts the tries aborted because the host kept a bot waiting
	// for a CPU past its turn's wall-clock cap (sandbox.ErrHostStalled):
	// played again, never charged to a bot.
	HostBusy int `json:"hostBusy,omitempty"`
	// Checked: the coordinator played the game again itself from the
	// hand-out its worker played, and got the same game (see Checks).
	Checked bool `json:"checked,omitempty"`
}

// Try is the number of the game's next try: the job's attempt number,
// new for every try so that a worker's result names the one it played.
func (r Record) Try() int { return r.Tries + 1 }

// Store is the tournament database.
type Store struct {
	db  *sqlitedb.DB
	dir string
}

const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
	id INTEGER PRIMARY KEY,
	round INTEGER NOT NULL,
	white INTEGER NOT NULL,
	black INTEGER NOT NULL,
	seed INTEGER NOT NULL,
	status TEXT NOT NULL DEFAULT 'pending',
	attempts INTEGER NOT NULL DEFAULT 0,
	winner TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	plies INTEGER NOT NULL DEFAULT 0,
	turns INTEGER NOT NULL DEFAULT 0,
	faults TEXT NOT NULL DEFAULT '[]',
	abort_reason TEXT NOT NULL DEFAULT '',
	dir TEXT NOT NULL DEFAULT '',
	duration_ms REAL NOT NULL DEFAULT 0,
	bot_ms REAL NOT NULL DEFAULT 0,
	turn_ms REAL NOT NULL DEFAULT 0,
	slot_ms REAL NOT NULL DEFAULT 0,
	worker TEXT NOT NULL DEFAULT '',
	pair INTEGER NOT NULL DEFAULT 0,
	opening INTEGER NOT NULL DEFAULT 0,
	checked INTEGER NOT NULL DEFAULT 0,
	playoff INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS workers (name TEXT PRIMARY KEY, machine TEXT NOT NULL);`

// migrations add what later versions keep to a database an earlier one
// made: each column is added when it is missing.
var migrations = []struct{ table, column, def string }{
	{"games", "turn_ms", "REAL NOT NULL DEFAULT 0"},
	{"games", "worker", "TEXT NOT NULL DEFAULT ''"},
	{"games", "pair", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "opening", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "tries", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "rejected", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "aborted_by", "TEXT NOT NULL DEFAULT '[]'"},
	{"games", "host_busy", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "checked", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "playoff", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "slot_ms", "REAL NOT NULL DEFAULT 0"},
}

// hasColumn says whether table has column ("": whether table exists).
func hasColumn(ctx context.Context, db *sql.DB, table, column string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info(?) WHERE ? = '' OR name = ?`, table, column, column).Scan(&n)
	return n > 0, err
}

func migrate(db *sql.DB) error {
	for _, m := range migrations {
		has, err := hasColumn(context.Background(), db, m.table, m.column)
		if err != nil {
			return err
		}
		if !has {
			if _, err := db.Exec(`ALTER TABLE ` + m.table + ` ADD COLUMN ` + m.column + ` ` + m.def); err != nil {
				return err
			}
			// Before tries were kept, the attempts were all of them.
			if m.column == "tries" {
				if _, err := db.Exec(`UPDATE games SET tries = attempts`); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// OpenStore opens (or creates) the database in dir. Writes are synchronous so a
// power loss keeps every committed result.
func OpenStore(dir string, readOnly bool) (*Store, error) {
	params := "_pragma=busy_timeout(10000)"
	if readOnly {
		params += "&mode=ro" // the journal mode is the writer's: it is in the file
	} else {
		params += "&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	}
	db, err := sqlitedb.Open(filepath.Join(dir, DBFile), params)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if !readOnly {
		if _, err := db.Exec(schema); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, DBFile), err)
		}
		if err := migrate(db.DB); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, DBFile), err)
		}
	}
	return &Store{db: db, dir: dir}, nil
}

// Close closes the database. It fails if the process lost SQLite's lock on
// the file while the store was open (sqlitedb.ErrLockLost).
func (s *Store) Close() error { return s.db.Close() }

// initialized says whether the schema exists: a reader may open the file
// between its creation and the writer's first transaction.
func (s *Store) Initialized(ctx context.Context) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&n)
	return n > 0, err
}

// Config returns the stored configuration, or nil when there is none yet.
func (s *Store) Config(ctx context.Context) (*Config, error) {
	var raw string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'config'`).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return nil, fmt.Errorf("stored configuration: %w", err)
	}
	return &c, nil
}

// Init stores the configuration and the schedule in one transaction.
func (s *Store) Init(ctx context.Context, c Config, games []Game) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('config', ?)`, string(raw)); err != nil {
		return err
	}
	for _, g := range games {
		if err := insertGame(ctx, tx, g); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func insertGame(ctx context.Context, tx *sql.Tx, g Game) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO games (id, round, white, black, seed, pair, opening, playoff) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.Round, g.White, g.Black, int64(g.Seed), g.Pair, g.Opening, g.Playoff)
	return err
}

// AddGames adds a round's games (a Swiss round paired from the rounds
// before it), all at once or none.
func (s *Store) AddGames(ctx context.Context, games []Game) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, g := range games {
		if err := insertGame(ctx, tx, g); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// ResetRunning puts games that were in flight when arena stopped back to
// pending and returns them: they are played again from scratch.
func (s *Store) ResetRunning(ctx context.Context) ([]Record, error) {
	recs, err := s.Games(ctx)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range recs {
		if r.Status == Running {
			out = append(out, r)
		}
	}
	_, err = s.db.ExecContext(ctx, `UPDATE games SET status = 'pending' WHERE status = 'running'`)
	return out, err
}

// Claim marks the next pending game running, with the directory dirFor names
// for it, and returns it; ok is false when none is left. Claims must not run
// concurrently.
func (s *Store) Claim(ctx context.Context, dirFor func(Record) string) (Record, bool, error) {
	var id int
	err := s.db.QueryRowContext(ctx, `SELECT id FROM games WHERE status = 'pending' ORDER BY id LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	r, err := s.Game(ctx, id)
	if err != nil {
		return r, false, err
	}
	r.Status, r.Dir = Running, dirFor(r)
	if _, err := s.db.ExecContext(ctx, `UPDATE games SET status = 'running', dir = ? WHERE id = ?`, r.Dir, id); err != nil {
		return Record{}, false, err
	}
	return r, true, nil
}

// Finish records a played game, with its times and the worker that played
// it ("" for this machine).
func (s *Store) Finish(ctx context.Context, id int, res transcript.Result, dir string, t Times, worker string) error {
	faults, err := json.Marshal(res.Faults)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `UPDATE games SET status = 'done', attempts = attempts + 1, winner = ?, reason = ?, plies = ?, turns = ?,
		faults = ?, abort_reason = '', dir = ?, duration_ms = ?, bot_ms = ?, turn_ms = ?, slot_ms = ?, worker = ? WHERE id = ?`,
		res.Winner, res.Reason, res.Plies, res.TurnsPlayed(), string(faults), dir, res.DurationMs, t.BotMs, t.TurnMs, t.SlotMs, worker, id)
	return err
}

// SetMachine records what a worker says of its machine (the latest word).
func (s *Store) SetMachine(ctx context.Context, worker string, machine json.RawMessage) error {
	if len(machine) == 0 {
		machine = json.RawMessage("{}")
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO workers (name, machine) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET machine = excluded.machine`, worker, string(machine))
	return err
}

// Machines returns what each worker said of its machine.
func (s *Store) Machines(ctx context.Context) (map[string]Machine, error) {
	// A database from before workers (opened read-only, so not migrated)
	// has no such table: no machines.
	if has, err := hasColumn(ctx, s.db.DB, "workers", ""); err != nil || !has {
		return map[string]Machine{}, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name, machine FROM workers`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Machine{}
	for rows.Next() {
		var name, raw string
		if err := rows.Scan(&name, &raw); err != nil {
			return nil, err
		}
		var m Machine
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("worker %s: stored machine: %w", name, err)
		}
		out[name] = m
	}
	return out, rows.Err()
}

// Abort records an attempt aborted by the host or sandbox: the game goes back
// to pending, or is marked unplayed after maxAttempts.
func (s *Store) Abort(ctx context.Context, id int, reason string, maxAttempts int, host string) (status string, err error) {
	r, err := s.Game(ctx, id)
	if err != nil {
		return "", err
	}
	// A host that aborts the game again is charged once: a broken worker
	// taking a game over and over never spends its attempts; a game the
	// sandbox cannot hold aborts on every host, or here every time.
	charged := host == "" || !slices.Contains(r.AbortedBy, host)
	attempts, by := r.Attempts, r.AbortedBy
	if charged {
		attempts, by = attempts+1, append(by, host)
	}
	status = Pending
	if attempts >= maxAttempts {
		status = Unplayed
	}
	list, err := json.Marshal(by)
	if err != nil {
		return "", err
	}
	busy := 0
	if strings.Contains(reason, sandbox.ErrHostStalled.Error()) {
		busy = 1
	}
	_, err = s.db.ExecContext(ctx, `UPDATE games SET status = ?, attempts = ?, tries = tries + 1, aborted_by = ?, abort_reason = ?, host_busy = host_busy + ? WHERE id = ?`,
		status, attempts, string(list), reason, busy, id)
	return status, err
}

// Reject puts a game whose result a worker handed in was refused back to
// pending at once: the try is the worker's, the game's attempts are not
// spent.
func (s *Store) Reject(ctx context.Context, id int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE games SET status = 'pending', tries = tries + 1, rejected = rejected + 1, abort_reason = '' WHERE id = ?`, id)
	return err
}

// ReopenUnplayed puts the games left unplayed back to pending, their
// attempts fresh: a run after the fault was mended plays exactly those.
// It returns how many.
func (s *Store) ReopenUnplayed(ctx context.Context) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE games SET status = 'pending', attempts = 0, aborted_by = '[]', tries = tries + 1 WHERE status = 'unplayed'`)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// MarkChecked records that a worker's game was checked: the coordinator
// played it again and got the same game.
func (s *Store) MarkChecked(ctx context.Context, id int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE games SET checked = 1 WHERE id = ?`, id)
	return err
}

// UncheckedWorkers are the workers that played games counted unchecked.
func (s *Store) UncheckedWorkers(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT worker FROM games WHERE status = 'done' AND checked = 0 AND worker != '' ORDER BY worker`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// VoidUnchecked puts the games worker played that count unchecked back to
// pending, to be played again (a new try, the attempt it spent given back,
// counted as a refused result): a worker shut out for a lie may have lied
// in any game nobody checked. It returns the games.
func (s *Store) VoidUnchecked(ctx context.Context, worker string) ([]int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // after Commit, a no-op
	rows, err := tx.QueryContext(ctx, `SELECT id FROM games WHERE status = 'done' AND checked = 0 AND worker = ? ORDER BY id`, worker)
	if err != nil {
		return nil, err
	}
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE games SET status = 'pending', attempts = max(attempts - 1, 0), tries = tries + 1, rejected = rejected + 1,
		winner = '', reason = '', abort_reason = '' WHERE status = 'done' AND checked = 0 AND worker = ?`, worker); err != nil {
		return nil, err
	}
	return ids, tx.Commit()
}

// Release puts a game interrupted by the operator back to pending without
// counting an attempt.
func (s *Store) Release(ctx context.Context, id int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE games SET status = 'pending' WHERE id = ?`, id)
	return err
}

const columns = `id, round, white, black, seed, status, attempts, winner, reason, plies, turns, faults, abort_reason, dir, duration_ms, bot_ms, turn_ms, slot_ms, worker, pair, opening,
	tries, rejected, aborted_by, host_busy, checked, playoff`

func scan(row interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var seed int64
	var faults, abortedBy string
	err := row.Scan(&r.ID, &r.Round, &r.White, &r.Black, &seed, &r.Status, &r.Attempts, &r.Winner, &r.Reason,
		&r.Plies, &r.Turns, &faults, &r.AbortReason, &r.Dir, &r.DurationMs, &r.BotMs, &r.TurnMs, &r.SlotMs, &r.Worker, &r.Pair, &r.Opening,
		&r.Tries, &r.Rejected, &abortedBy, &r.HostBusy, &r.Checked, &r.Playoff)
	if err != nil {
		return r, err
	}
	r.Seed = uint64(seed)
	if abortedBy != "" && abortedBy != "[]" {
		if err := json.Unmarshal([]byte(abortedBy), &r.AbortedBy); err != nil {
			return r, fmt.Errorf("game %d: stored hosts: %w", r.ID, err)
		}
	}
	if faults == "" || faults == "[]" || faults == "null" {
		return r, nil // most games: no fault to decode
	}
	if err := json.Unmarshal([]byte(faults), &r.Faults); err != nil {
		return r, fmt.Errorf("game %d: stored faults: %w", r.ID, err)
	}
	return r, nil
}

func (s *Store) Game(ctx context.Context, id int) (Record, error) {
	return scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM games WHERE id = ?`, id))
}

// Games returns every game in schedule order.
func (s *Store) Games(ctx context.Context) ([]Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM games ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, rows.Err()
}

// CountByStatus is how many games the store holds in each status.
func (s *Store) CountByStatus(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT status, count(*) FROM games GROUP BY status`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return nil, err
		}
		counts[status] = n
	}
	return counts, rows.Err()
}
