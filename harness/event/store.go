package event

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/harness/eventlog"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// DBFile is the event's database inside its directory.
const DBFile = "event.db"

// Directories inside the event directory.
const (
	UploadsDir     = "uploads"     // every upload, by content hash
	ValidationsDir = "validations" // one directory per validated upload
	tmpDir         = "tmp"         // uploads on their way in
	// EvidenceDir holds the data-file versions every game of the event
	// kept (its blobs/), each stored once and linked into the games that
	// hold it: ladder, scrimmages and the final share them.
	EvidenceDir = "evidence"
	// AsideDir keeps the directories of games the event's database does
	// not record (SetAside): never read by the event, never deleted.
	AsideDir = "aside"
)

// SetAside moves dir, inside the event's directory, into AsideDir under a
// name of its own (its path's parts joined by dashes, then the time), and
// returns where it went: a number the database gives again is then never
// met by what an earlier holder of it left.
func (s *Store) SetAside(dir string) (string, error) {
	rel, err := filepath.Rel(s.Dir, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside the event's directory", dir)
	}
	to := filepath.Join(s.Dir, AsideDir, strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")+"-"+time.Now().UTC().Format("20060102T150405.000000000"))
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return "", err
	}
	if err := os.Rename(dir, to); err != nil {
		return "", err
	}
	return to, syncDir(filepath.Dir(dir))
}

// Submission states (api's).
const (
	Queued     = api.Queued
	Building   = api.Building
	Validating = api.Validating
	Passed     = api.Passed
	Failed     = api.Failed
	// Errored is a validation the host could not finish (the engine went
	// away): not the team's fault; the organizer validates it again.
	Errored = api.Errored
)

// Done says whether a submission in state s has its validation behind it.
func Done(s api.State) bool { return s.Done() }

var schema = `
CREATE TABLE IF NOT EXISTS teams (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	members TEXT NOT NULL DEFAULT '',
	contact TEXT NOT NULL DEFAULT '',
	token_hash TEXT NOT NULL UNIQUE,
	disabled INTEGER NOT NULL DEFAULT 0,
	pinned INTEGER,
	created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS admin (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	token_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
	id_hash TEXT PRIMARY KEY,
	team_id INTEGER,
	admin INTEGER NOT NULL DEFAULT 0,
	csrf TEXT NOT NULL,
	expires TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
	id INTEGER PRIMARY KEY,
	team_id INTEGER NOT NULL REFERENCES teams(id),
	sha256 TEXT NOT NULL,
	size INTEGER NOT NULL,
	filename TEXT NOT NULL,
	uploaded TEXT NOT NULL,
	state TEXT NOT NULL,
	summary TEXT NOT NULL DEFAULT '',
	started TEXT NOT NULL DEFAULT '',
	finished TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS submissions_team ON submissions(team_id, id);
CREATE INDEX IF NOT EXISTS submissions_state ON submissions(state, id);
CREATE TABLE IF NOT EXISTS games (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,
	white_team INTEGER,
	black_team INTEGER,
	white_submission INTEGER,
	black_submission INTEGER,
	white_name TEXT NOT NULL,
	black_name TEXT NOT NULL,
	white_sha256 TEXT NOT NULL,
	black_sha256 TEXT NOT NULL,
	dir TEXT NOT NULL,
	winner TEXT NOT NULL,
	reason TEXT NOT NULL,
	plies INTEGER NOT NULL,
	finished TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS games_white ON games(white_team, id);
CREATE UNIQUE INDEX IF NOT EXISTS games_dir ON games(dir);
CREATE TABLE IF NOT EXISTS scrimmages (
	id INTEGER PRIMARY KEY,
	team_id INTEGER NOT NULL REFERENCES teams(id),
	rival_team INTEGER,
	submission INTEGER NOT NULL,
	rival_submission INTEGER,
	state TEXT NOT NULL,
	message TEXT NOT NULL DEFAULT '',
	created TEXT NOT NULL,
	finished TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS scrimmages_team ON scrimmages(team_id, id);
CREATE INDEX IF NOT EXISTS scrimmages_state ON scrimmages(state, id);
CREATE TABLE IF NOT EXISTS ratings (
	team_id INTEGER PRIMARY KEY REFERENCES teams(id),
	submission INTEGER NOT NULL,
	rating REAL NOT NULL,
	deviation REAL NOT NULL,
	volatility REAL NOT NULL,
	games INTEGER NOT NULL DEFAULT 0,
	updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ladder_pairs (
	id INTEGER PRIMARY KEY,
	a_team INTEGER NOT NULL,
	b_team INTEGER NOT NULL,
	a_submission INTEGER NOT NULL,
	b_submission INTEGER NOT NULL,
	state TEXT NOT NULL,
	created TEXT NOT NULL,
	finished TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS ladder_pairs_state ON ladder_pairs(state, id);
CREATE TABLE IF NOT EXISTS host_replays (
	dir TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	n INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS closing (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	closed TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS final_entries (
	team_id INTEGER PRIMARY KEY REFERENCES teams(id),
	submission INTEGER NOT NULL,
	sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS games_black ON games(black_team, id);
CREATE INDEX IF NOT EXISTS games_kind ON games(kind, id);
CREATE TABLE IF NOT EXISTS final_run (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	games_per_pair INTEGER NOT NULL,
	concurrency INTEGER NOT NULL,
	max_attempts INTEGER NOT NULL,
	seed INTEGER NOT NULL,
	started TEXT NOT NULL,
	finished TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS final_players (
	team INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS freeze (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rating_history (
	team_id INTEGER NOT NULL REFERENCES teams(id),
	pair INTEGER NOT NULL,
	submission INTEGER NOT NULL,
	rating REAL NOT NULL,
	deviation REAL NOT NULL,
	at TEXT NOT NULL,
	PRIMARY KEY (team_id, pair)
);
CREATE TABLE IF NOT EXISTS disputes (
	id INTEGER PRIMARY KEY,
	game_id INTEGER NOT NULL REFERENCES games(id),
	team_id INTEGER NOT NULL REFERENCES teams(id),
	message TEXT NOT NULL,
	filed TEXT NOT NULL,
	verdict TEXT NOT NULL DEFAULT '',
	state TEXT NOT NULL DEFAULT 'open',
	answer TEXT NOT NULL DEFAULT '',
	answered TEXT NOT NULL DEFAULT '',
	rerun_ply INTEGER NOT NULL DEFAULT 0,
	rerun TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS disputes_team ON disputes(team_id, id);
CREATE TABLE IF NOT EXISTS dispute_reruns (
	id INTEGER PRIMARY KEY,
	dispute_id INTEGER NOT NULL REFERENCES disputes(id),
	ply INTEGER NOT NULL,
	text TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dispute_reruns_dispute ON dispute_reruns(dispute_id, id);
CREATE INDEX IF NOT EXISTS disputes_state ON disputes(state, id);
CREATE TABLE IF NOT EXISTS audit (
	id INTEGER PRIMARY KEY,
	at TEXT NOT NULL,
	action TEXT NOT NULL,
	detail TEXT NOT NULL
);
`

// columns are the columns added to the schema's tables since events were
// first kept: an event made before them gains them when it is opened.
var columns = []struct{ table, column, def string }{
	{"teams", "bot_name", "TEXT"},
	{"submissions", "admitted", "TEXT NOT NULL DEFAULT ''"},
	{"submissions", "admitted_at", "TEXT NOT NULL DEFAULT ''"},
	{"submissions", "cannot_play", "TEXT NOT NULL DEFAULT ''"},
	{"games", "rated", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "course", "TEXT NOT NULL DEFAULT ''"},
	{"games", "turns", "INTEGER NOT NULL DEFAULT 0"},
	{"games", "duration_ms", "REAL NOT NULL DEFAULT 0"},
	{"final_run", "format", "TEXT NOT NULL DEFAULT 'round-robin'"},
	{"final_run", "rounds", "INTEGER NOT NULL DEFAULT 0"},
	{"final_run", "top", "INTEGER NOT NULL DEFAULT 0"},
	{"final_run", "advance", "INTEGER NOT NULL DEFAULT 0"},
	{"final_run", "then_format", "TEXT NOT NULL DEFAULT ''"},
	{"final_run", "budget", "INTEGER NOT NULL DEFAULT 0"},
	// A final's player's place in the order it was started with (its
	// seed, from 1): a resumed final plays them in that order, whatever
	// the ladder, the teams' names or their state say since. 0: a final
	// started before seeds were kept.
	{"final_players", "seed", "INTEGER NOT NULL DEFAULT 0"},
	{"ladder_pairs", "opening", "TEXT NOT NULL DEFAULT ''"},
	{"ladder_pairs", "played", "INTEGER NOT NULL DEFAULT 0"},
	{"ladder_pairs", "repeats", "INTEGER NOT NULL DEFAULT 0"},
	// A rating point's number among its team's, from 1, and its stride:
	// the largest power of two that divides n-1, or 1<<62 for the first
	// point and each of a new submission (a plot of one point in every
	// 2^k keeps those of a stride of 2^k or more). Set by
	// rating_history_numbered.
	{"rating_history", "n", "INTEGER NOT NULL DEFAULT 0"},
	{"rating_history", "stride", "INTEGER NOT NULL DEFAULT 0"},
}

// indexes need the added columns.
const indexes = `
CREATE UNIQUE INDEX IF NOT EXISTS teams_bot ON teams(lower(bot_name));
CREATE INDEX IF NOT EXISTS games_course ON games(white_submission, black_submission, course);
CREATE INDEX IF NOT EXISTS games_black_submission ON games(black_submission, id);
CREATE INDEX IF NOT EXISTS games_white_kind ON games(white_team, kind);
CREATE INDEX IF NOT EXISTS games_black_kind ON games(black_team, kind);
CREATE INDEX IF NOT EXISTS scrimmages_rival ON scrimmages(rival_team, id);
CREATE INDEX IF NOT EXISTS disputes_game ON disputes(game_id, id);
CREATE INDEX IF NOT EXISTS ladder_pairs_a ON ladder_pairs(a_team, state, id);
CREATE INDEX IF NOT EXISTS ladder_pairs_b ON ladder_pairs(b_team, state, id);
CREATE INDEX IF NOT EXISTS rating_history_stride ON rating_history(team_id, stride, n, submission, rating, deviation);
CREATE TRIGGER IF NOT EXISTS rating_history_numbered AFTER INSERT ON rating_history BEGIN
	UPDATE rating_history SET
		n = COALESCE((SELECT n FROM rating_history WHERE team_id = NEW.team_id AND pair < NEW.pair ORDER BY pair DESC LIMIT 1), 0) + 1,
		stride = COALESCE((SELECT CASE WHEN submission = NEW.submission THEN n & -n ELSE 1 << 62 END
			FROM rating_history WHERE team_id = NEW.team_id AND pair < NEW.pair ORDER BY pair DESC LIMIT 1), 1 << 62)
	WHERE team_id = NEW.team_id AND pair = NEW.pair;
END;
CREATE INDEX IF NOT EXISTS submissions_failed ON submissions(finished) WHERE state IN ('failed', 'error') AND admitted = '';
CREATE TABLE IF NOT EXISTS teams_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO teams_version (id, n) VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS teams_added AFTER INSERT ON teams BEGIN UPDATE teams_version SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS teams_renamed AFTER UPDATE OF name, bot_name ON teams BEGIN UPDATE teams_version SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS teams_removed AFTER DELETE ON teams BEGIN UPDATE teams_version SET n = n + 1; END;
CREATE TABLE IF NOT EXISTS rating_plots (team_id INTEGER PRIMARY KEY REFERENCES teams(id), most INTEGER NOT NULL, points BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS team_games (team INTEGER NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL, changes INTEGER NOT NULL,
	PRIMARY KEY (team, kind)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS team_games_added AFTER INSERT ON games BEGIN
	INSERT INTO team_games (team, kind, n, changes) SELECT t, NEW.kind, 1, 1 FROM (SELECT NEW.white_team AS t UNION ALL SELECT NEW.black_team) WHERE t IS NOT NULL
	ON CONFLICT (team, kind) DO UPDATE SET n = n + 1, changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS team_games_removed AFTER DELETE ON games BEGIN
	UPDATE team_games SET n = n - 1, changes = changes + 1 WHERE kind = OLD.kind AND team IN (OLD.white_team, OLD.black_team);
END;
CREATE TRIGGER IF NOT EXISTS team_games_rated AFTER UPDATE OF rated ON games BEGIN
	UPDATE team_games SET changes = changes + 1 WHERE kind = NEW.kind AND team IN (NEW.white_team, NEW.black_team);
END;
`

// ratingHistoryBackfill numbers the rating points an event kept before
// they were numbered (rating_history_numbered numbers each one added).
const ratingHistoryBackfill = `UPDATE rating_history SET n = o.n, stride = o.stride FROM
	(SELECT t, p, n, CASE WHEN submission = prev THEN (n - 1) & -(n - 1) ELSE 1 << 62 END AS stride FROM
		(SELECT team_id AS t, pair AS p, submission, row_number() OVER w AS n, lag(submission) OVER w AS prev
		FROM rating_history WINDOW w AS (PARTITION BY team_id ORDER BY pair))) AS o
	WHERE team_id = o.t AND pair = o.p`

// teamGamesBackfill counts the games an event kept before team_games was.
const teamGamesBackfill = `INSERT INTO team_games (team, kind, n, changes)
	SELECT team, kind, count(*), 0 FROM (SELECT white_team AS team, kind FROM games WHERE white_team IS NOT NULL
	UNION ALL SELECT black_team, kind FROM games WHERE black_team IS NOT NULL) GROUP BY team, kind`

// migrate adds the columns an older event lacks, their indexes, and a bot
// name to every team made before bot names were kept: all of it or none,
// in one transaction (a migration killed halfway leaves nothing half
// counted or half numbered), taken with the write lock at once, so that a
// second process opening the event meanwhile waits for it and finds it
// done.
func migrate(ctx context.Context, w *sql.DB) error {
	conn, err := w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	if err := migrateIn(ctx, conn); err != nil {
		_, rollback := conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		return errors.Join(err, rollback)
	}
	_, err = conn.ExecContext(ctx, `COMMIT`)
	return err
}

// querier runs statements in migrate's transaction.
type querier interface {
	execer
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

func migrateIn(ctx context.Context, q querier) error {
	added := map[string]bool{}
	for _, c := range columns {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.column+` `+c.def); err != nil {
				return fmt.Errorf("add %s.%s: %w", c.table, c.column, err)
			}
			added[c.table+"."+c.column] = true
		}
	}
	// An event kept before every rerun of a dispute was kept holds its
	// last one in the dispute's row.
	if _, err := q.ExecContext(ctx, `INSERT INTO dispute_reruns (dispute_id, ply, text, at)
		SELECT id, rerun_ply, rerun, filed FROM disputes d WHERE rerun != '' AND NOT EXISTS (SELECT 1 FROM dispute_reruns r WHERE r.dispute_id = d.id)`); err != nil {
		return fmt.Errorf("keep the disputes' reruns: %w", err)
	}
	var counted, plotted int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'team_games'`).Scan(&counted); err != nil {
		return err
	}
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'rating_plots'`).Scan(&plotted); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, indexes); err != nil {
		return err
	}
	if counted == 0 {
		if _, err := q.ExecContext(ctx, teamGamesBackfill); err != nil {
			return fmt.Errorf("count each team's games: %w", err)
		}
	}
	if added["rating_history.n"] || added["rating_history.stride"] {
		if _, err := q.ExecContext(ctx, ratingHistoryBackfill); err != nil {
			return fmt.Errorf("number each team's rating points: %w", err)
		}
	}
	if plotted == 0 {
		if err := keepRatingPlots(ctx, q); err != nil {
			return fmt.Errorf("keep each team's rating plot: %w", err)
		}
	}
	return giveBotNames(ctx, q)
}

// Store is the event's state: its database and its files. Writes go through
// one connection; reads run in parallel on others (WAL).
type Store struct {
	Dir string
	// Metrics, when set, is told of every game recorded and every write's
	// time.
	Metrics *metrics.Event
	// Log, when set, is told of every organizer's action (the audit log's
	// rows) at info level.
	Log   *slog.Logger
	w     *sqlitedb.DB
	r     *sqlitedb.DB
	stmts sync.Map // query text -> *sql.Stmt on r
	// snapshots holds a turn for each Snapshot open: fewer than readers,
	// so that a read outside them, or a statement prepared for the first
	// time, always finds a connection.
	snapshots chan struct{}
	// names are the teams' names as Names last read them, at the
	// teams_version they were read at (a trigger counts every change to
	// a team's names, from this process or another).
	namesMu sync.Mutex
	names   *versionedNames
	// logMu orders the final log's appends; logSigner and logVerifier are
	// its keys (LogKeys).
	logMu       sync.Mutex
	logSigner   eventlog.Signer
	logVerifier string
}

type versionedNames struct {
	version int64
	names   TeamNames
}

// stmt is the read query q prepared once: the pages run the same few
// queries over and over, and parsing them was much of their cost.
func (s *Store) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// read runs a read query.
func (s *Store) read(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, run, err := s.statement(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(run, args...)
}

// statement is the read query q prepared, in ctx's snapshot if it has one,
// and the context to run it with.
//
// ctx is checked before the read, not during it: the driver watches a
// context that can end with a goroutine of its own for each statement,
// which costs a page's short reads about as much as they take. Every read
// is an index's range or a bounded scan (the plans' tests check the
// pages'), and a view's next read ends it.
func (s *Store) statement(ctx context.Context, q string) (*sql.Stmt, context.Context, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if snap := s.snapshotOf(ctx); snap != nil {
		tx, err := snap.begin()
		if err != nil {
			return nil, nil, err
		}
		st = tx.Stmt(st)
	}
	return st, context.WithoutCancel(ctx), nil
}

// readSnapshot is a Snapshot's read transaction, in the context its reads
// are made with: begun at the first read (a view that reads nothing, a page
// kept from before, takes no connection).
type readSnapshot struct {
	store *Store
	ctx   context.Context
	tx    *sql.Tx
	err   error // why the transaction could not begin
}

type snapshotKey struct{}

func (s *Store) snapshotOf(ctx context.Context) *readSnapshot {
	if snap, ok := ctx.Value(snapshotKey{}).(*readSnapshot); ok && snap.store == s {
		return snap
	}
	return nil
}

// begin is the snapshot's transaction, begun at its first call.
func (snap *readSnapshot) begin() (*sql.Tx, error) {
	if snap.tx != nil || snap.err != nil {
		return snap.tx, snap.err
	}
	s := snap.store
	select {
	case s.snapshots <- struct{}{}:
	case <-snap.ctx.Done():
		snap.err = snap.ctx.Err()
		return nil, snap.err
	}
	snap.tx, snap.err = s.r.BeginTx(context.WithoutCancel(snap.ctx), &sql.TxOptions{ReadOnly: true})
	if snap.err != nil {
		<-s.snapshots
	}
	return snap.tx, snap.err
}

// Snapshot calls read with a context in which every read of s sees the
// event as it stood at the first of them: one read transaction, on one
// connection, begun at that first read. A page drawn in it agrees with
// itself (a count of games and the list of them, a rating and its
// history), and its dozen reads share one transaction where each would
// begin and end its own.
//
// ctx is checked before each read, as outside a snapshot. The reads are
// made one at a time, never from two goroutines at once. Nothing may be
// written through s in read and then read back: the snapshot does not see
// it. A Snapshot inside another is the same snapshot.
func (s *Store) Snapshot(ctx context.Context, read func(context.Context) error) (err error) {
	if s.snapshotOf(ctx) != nil {
		return read(ctx)
	}
	snap := &readSnapshot{store: s, ctx: ctx}
	// Ended however read ends, a panic too: a connection held past it
	// would be one reader fewer for good.
	defer func() {
		if snap.tx == nil {
			return
		}
		// Nothing was written: ending the transaction only lets it go.
		if rerr := snap.tx.Rollback(); err == nil {
			err = rerr
		}
		<-s.snapshots
	}()
	return read(context.WithValue(ctx, snapshotKey{}, snap))
}

// readAll runs query q and scans every row it returns with scan.
func readAll[T any](ctx context.Context, s *Store, scan func(interface{ Scan(...any) error }) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.read(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanRows(rows, scan)
}

// scanRows scans every row of rows with scan, and closes them.
func scanRows[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// rowScanner is a row or the error that kept it from being read.
type rowScanner struct {
	row *sql.Row
	err error
}

func (r rowScanner) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// readRow runs a read query of one row.
func (s *Store) readRow(ctx context.Context, q string, args ...any) rowScanner {
	st, run, err := s.statement(ctx, q)
	if err != nil {
		return rowScanner{err: err}
	}
	return rowScanner{row: st.QueryRowContext(run, args...)}
}

// readers is how many connections read the database at once.
const readers = 8

// Open opens (creating when needed) the store of the event in dir.
func Open(dir string) (*Store, error) {
	for _, d := range []string{UploadsDir, ValidationsDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, DBFile)
	params := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	w, err := sqlitedb.Open(path, params)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(schema + eventlog.Schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := migrate(context.Background(), w.DB); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := sqlitedb.Open(path, params+"&_pragma=query_only(1)&_pragma=mmap_size(1073741824)")
	if err != nil {
		w.Close()
		return nil, err
	}
	// Readers are kept open between reads: one closed and opened again
	// prepares every statement again (database/sql keeps 2 idle unless
	// told).
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	return &Store{Dir: dir, w: w, r: r, snapshots: make(chan struct{}, readers-1)}, nil
}

// SigningKey is the key, in the event directory, that signs the
// transcripts of the event's games.
const SigningKey = "signing.key"

// Signer is the event's signing key, made on first use.
func (s *Store) Signer() (ed25519.PrivateKey, error) {
	return transcript.LoadOrCreateKey(filepath.Join(s.Dir, SigningKey))
}

// Close closes the database. It fails if the process lost SQLite's lock on
// the file while the store was open (sqlitedb.ErrLockLost): some code broke
// the rule that only SQLite opens it.
func (s *Store) Close() error {
	var errs []error
	s.stmts.Range(func(_, st any) bool {
		errs = append(errs, st.(*sql.Stmt).Close())
		return true
	})
	return errors.Join(append(errs, s.r.Close(), s.w.Close())...)
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func parseTime(v string) time.Time {
	if v == "" {
		return time.Time{} // not yet: no error to make
	}
	t, _ := time.Parse(time.RFC3339Nano, v)
	return t
}

// NewToken is a fresh secret: 32 random bytes, hex.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// HashToken is what is stored of a token.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewAdminToken makes the organizer's token, replacing the one before.
func (s *Store) NewAdminToken(ctx context.Context) (string, error) {
	token := NewToken()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO admin (id, token_hash) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash`, HashToken(token)); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE admin = 1`); err != nil {
		return "", err
	}
	return token, tx.Commit()
}

// Principal is who asks: a team, or the organizer.
type Principal struct {
	Team  int64 // 0 for the organizer
	Admin bool
	Name  string // the team's name
}

// ErrBadToken is a token that is nobody's, or a disabled team's.
var ErrBadToken = errors.New("unknown or disabled token")

// Authenticate says whose token this is. The token's hash is looked up and
// compared in constant time; a disabled team's token is refused.
func (s *Store) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrBadToken
	}
	h := HashToken(token)
	// One query for both kinds of token: the organizer's row has id 0.
	var id int64
	var name, stored string
	var disabled bool
	err := s.readRow(ctx, `SELECT 0, '', token_hash, 0 FROM admin WHERE token_hash = ?1
		UNION ALL SELECT id, name, token_hash, disabled FROM teams WHERE token_hash = ?1`, h).Scan(&id, &name, &stored, &disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrBadToken
	}
	if err != nil {
		return Principal{}, err
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(h)) != 1 || disabled {
		return Principal{}, ErrBadToken
	}
	if id == 0 {
		return Principal{Admin: true}, nil
	}
	return Principal{Team: id, Name: name}, nil
}

// SessionTTL is how long a login lasts.
const SessionTTL = 7 * 24 * time.Hour

// NewSession opens a session for p: the cookie's secret and the session's
// CSRF token. Only the secret's hash is stored.
func (s *Store) NewSession(ctx context.Context, p Principal) (secret, csrf string, err error) {
	secret, csrf = NewToken(), NewToken()
	var team any
	if !p.Admin {
		team = p.Team
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO sessions (id_hash, team_id, admin, csrf, expires) VALUES (?, ?, ?, ?, ?)`,
		HashToken(secret), team, p.Admin, csrf, time.Now().Add(SessionTTL).UTC().Format(time.RFC3339Nano))
	return secret, csrf, err
}

// Session is whose session the cookie's secret opens, and its CSRF token.
// An expired session, or one of a team since disabled, is ErrBadToken.
func (s *Store) Session(ctx context.Context, secret string) (Principal, string, error) {
	var team sql.NullInt64
	var name sql.NullString
	var admin bool
	var csrf, expires string
	err := s.readRow(ctx, `SELECT s.team_id, t.name, s.admin, s.csrf, s.expires FROM sessions s
		LEFT JOIN teams t ON t.id = s.team_id WHERE s.id_hash = ? AND (s.admin = 1 OR t.disabled = 0)`, HashToken(secret)).Scan(&team, &name, &admin, &csrf, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, "", ErrBadToken
	}
	if err != nil {
		return Principal{}, "", err
	}
	if time.Now().After(parseTime(expires)) {
		return Principal{}, "", ErrBadToken
	}
	return Principal{Team: team.Int64, Admin: admin, Name: name.String}, csrf, nil
}

// EndSession logs a session out.
func (s *Store) EndSession(ctx context.Context, secret string) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, HashToken(secret))
	return err
}
