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
	// logOrigin is the log's name (LogOriginFile).
	logOrigin string
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
	// The writer sets WAL itself (migrate), once it knows the database is
	// not newer than this arena: a refused database is left as it was.
	params := "_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	w, err := sqlitedb.Open(path, params)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if err := migrate(context.Background(), w.DB); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The log's name once the database is known to be this arena's.
	origin, err := FixLogOrigin(dir)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("the event's log: %w", err), w.Close())
	}
	r, err := sqlitedb.Open(path, params+"&_pragma=journal_mode(WAL)&_pragma=query_only(1)&_pragma=mmap_size(1073741824)")
	if err != nil {
		w.Close()
		return nil, err
	}
	// Readers are kept open between reads: one closed and opened again
	// prepares every statement again (database/sql keeps 2 idle unless
	// told).
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	return &Store{Dir: dir, w: w, r: r, snapshots: make(chan struct{}, readers-1), logOrigin: origin}, nil
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
