package event

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/arenabots/arena/harness/transcript"
)

// DBFile is the event's database inside its directory.
const DBFile = "event.db"

// Directories inside the event directory.
const (
	UploadsDir     = "uploads"     // every upload, by content hash
	ValidationsDir = "validations" // one directory per validated upload
	tmpDir         = "tmp"         // uploads on their way in
)

// Submission states.
const (
	Queued     = "queued"
	Building   = "building"
	Validating = "validating"
	Passed     = "passed"
	Failed     = "failed"
	// Errored is a validation the host could not finish (the engine went
	// away): not the team's fault; the organizer validates it again.
	Errored = "error"
)

// Done says whether a submission in state s has its validation behind it.
func Done(s string) bool { return s == Passed || s == Failed || s == Errored }

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
CREATE INDEX IF NOT EXISTS disputes_state ON disputes(state, id);
`

// Store is the event's state: its database and its files. Writes go through
// one connection; reads run in parallel on others (WAL).
type Store struct {
	Dir   string
	w     *sql.DB
	r     *sql.DB
	stmts sync.Map // query text -> *sql.Stmt on r
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
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// readAll runs query q and scans every row it returns with scan.
func readAll[T any](ctx context.Context, s *Store, scan func(interface{ Scan(...any) error }) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.read(ctx, q, args...)
	if err != nil {
		return nil, err
	}
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
	st, err := s.stmt(ctx, q)
	if err != nil {
		return rowScanner{err: err}
	}
	return rowScanner{row: st.QueryRowContext(ctx, args...)}
}

// Open opens (creating when needed) the store of the event in dir.
func Open(dir string) (*Store, error) {
	for _, d := range []string{UploadsDir, ValidationsDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, DBFile)
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	return &Store{Dir: dir, w: w, r: r}, nil
}

// SigningKey is the key, in the event directory, that signs the
// transcripts of the event's games.
const SigningKey = "signing.key"

// Signer is the event's signing key, made on first use.
func (s *Store) Signer() (ed25519.PrivateKey, error) {
	return transcript.LoadOrCreateKey(filepath.Join(s.Dir, SigningKey))
}

// Close closes the database.
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

// Team is one team of the event.
type Team struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	Members  string    `json:"members,omitempty"`
	Contact  string    `json:"contact,omitempty"`
	Disabled bool      `json:"disabled"`
	Created  time.Time `json:"created"`
}

// NewTeam is a team just added and its token, shown once.
type NewTeam struct {
	Team
	Token string
}

// CheckTeamName refuses a name that would be confusing on a page or in a
// file listing: empty, too long, not UTF-8, or with control characters.
func CheckTeamName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("a team needs a name")
	case len(name) > 100:
		return fmt.Errorf("team name %.20q... is longer than 100 bytes", name)
	case !utf8.ValidString(name):
		return fmt.Errorf("team name %q is not UTF-8", name)
	case strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return fmt.Errorf("team name %q has a control character", name)
	}
	return nil
}

// AddTeam adds a team and returns its token.
func (s *Store) AddTeam(ctx context.Context, name, members, contact string) (NewTeam, error) {
	name = strings.TrimSpace(name)
	if err := CheckTeamName(name); err != nil {
		return NewTeam{}, err
	}
	token := NewToken()
	t := NewTeam{Team: Team{Name: name, Members: members, Contact: contact, Created: time.Now().UTC()}, Token: token}
	res, err := s.w.ExecContext(ctx, `INSERT INTO teams (name, members, contact, token_hash, created) VALUES (?, ?, ?, ?, ?)`,
		name, members, contact, HashToken(token), t.Created.Format(time.RFC3339Nano))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return NewTeam{}, fmt.Errorf("a team named %q exists", name)
		}
		return NewTeam{}, err
	}
	t.ID, err = res.LastInsertId()
	return t, err
}

// ImportTeams adds the teams of a CSV file (name, then optional members and
// contact; a first row "name,..." is a header). Teams that exist are
// skipped and listed in existing; a bad row stops the import with its line,
// after the rows before it were added.
func (s *Store) ImportTeams(ctx context.Context, r io.Reader) (added []NewTeam, existing []string, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return added, existing, nil
		}
		if err != nil {
			return added, existing, err
		}
		if len(rec) == 0 || (line == 1 && strings.EqualFold(strings.TrimSpace(rec[0]), "name")) {
			continue
		}
		if len(rec) > 3 {
			return added, existing, fmt.Errorf("line %d: want name, members, contact; got %d fields", line, len(rec))
		}
		rec = append(rec, "", "")
		if _, err := s.TeamByName(ctx, strings.TrimSpace(rec[0])); err == nil {
			existing = append(existing, strings.TrimSpace(rec[0]))
			continue
		}
		t, err := s.AddTeam(ctx, rec[0], strings.TrimSpace(rec[1]), strings.TrimSpace(rec[2]))
		if err != nil {
			return added, existing, fmt.Errorf("line %d: %w", line, err)
		}
		added = append(added, t)
	}
}

// ErrNotFound is a team, submission, game or session that is not there.
var ErrNotFound = errors.New("not found")

const teamColumns = `id, name, members, contact, disabled, created`

func scanTeam(row interface{ Scan(...any) error }) (Team, error) {
	var t Team
	var created string
	err := row.Scan(&t.ID, &t.Name, &t.Members, &t.Contact, &t.Disabled, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	t.Created = parseTime(created)
	return t, err
}

// Team is the team with that id.
func (s *Store) Team(ctx context.Context, id int64) (Team, error) {
	return scanTeam(s.readRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE id = ?`, id))
}

// TeamByName is the team of that name.
func (s *Store) TeamByName(ctx context.Context, name string) (Team, error) {
	return scanTeam(s.readRow(ctx, `SELECT `+teamColumns+` FROM teams WHERE name = ?`, name))
}

// Teams lists every team by name.
func (s *Store) Teams(ctx context.Context) ([]Team, error) {
	return readAll(ctx, s, scanTeam, `SELECT `+teamColumns+` FROM teams ORDER BY name`)
}

// NewTeamToken gives a team a new token; the old one, and every session
// opened with it, stop working at once.
func (s *Store) NewTeamToken(ctx context.Context, team int64) (string, error) {
	token := NewToken()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE teams SET token_hash = ? WHERE id = ?`, HashToken(token), team)
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", ErrNotFound
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE team_id = ?`, team); err != nil {
		return "", err
	}
	return token, tx.Commit()
}

// SetDisabled disables or enables a team; a disabled team's sessions end.
func (s *Store) SetDisabled(ctx context.Context, team int64, disabled bool) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE teams SET disabled = ? WHERE id = ?`, disabled, team)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	if disabled {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE team_id = ?`, team); err != nil {
			return err
		}
	}
	return tx.Commit()
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

// Backup writes a consistent copy of the event to out (which must not
// exist) while it runs: the database as of one instant (VACUUM INTO reads
// it in one transaction), then the configuration and the uploads and
// validations, which are never changed once written.
func (s *Store) Backup(ctx context.Context, out string) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists: name a new directory", out)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `VACUUM INTO ?`, filepath.Join(out, DBFile)); err != nil {
		return fmt.Errorf("copy the database: %w", err)
	}
	for _, name := range []string{ConfigFile, UploadsDir, ValidationsDir} {
		if err := copyTree(filepath.Join(s.Dir, name), filepath.Join(out, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("copy %s: %w", name, err)
		}
	}
	return nil
}

// copyTree copies regular files and directories from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, to)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
