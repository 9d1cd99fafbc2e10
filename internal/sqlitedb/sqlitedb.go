package sqlitedb

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // the driver: pure Go, no cgo
)

// DB is a database opened through SQLite.
type DB struct {
	*sql.DB
	path   string
	closed atomic.Bool
}

// Open opens the database at path with the connection parameters params
// (the DSN's query, such as "_pragma=busy_timeout(10000)"; may be empty).
// Nothing is read before the first statement.
func Open(path, params string) (*DB, error) {
	dsn := "file:" + path
	if params != "" {
		dsn += "?" + params
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &DB{DB: db, path: path}, nil
}

// Path is the database's file.
func (d *DB) Path() string { return d.path }

// Close checks that the process still holds SQLite's lock on the file
// (CheckLock), then closes every connection. A lost lock is an error even
// though the close itself succeeds: writes made after it may be gone.
// A second Close does nothing, as sql.DB's does.
func (d *DB) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	return errors.Join(d.CheckLock(context.Background()), d.DB.Close())
}

// ErrLockLost is a database whose lock this process lost while it held it
// open: some code opened and closed another descriptor of the file.
var ErrLockLost = errors.New("this process no longer holds SQLite's lock on the database: a descriptor of the file was opened and closed outside SQLite, and another process closing it may have deleted its journal")

// CheckLock says whether the process holds the lock SQLite keeps on a
// database in WAL mode while a connection is open. A database in another
// journal mode takes its locks a transaction at a time: nothing to check.
func (d *DB) CheckLock(ctx context.Context) error {
	conn, err := d.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return nil
	}
	// A read, so that a connection has begun a transaction (and taken the
	// lock, if SQLite believes it does not hold it) before the look.
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	held, err := Held(d.path, os.Getpid())
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no /proc/locks (not Linux): nothing to read the locks from
	}
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	if !held {
		return fmt.Errorf("%s: %w", d.path, ErrLockLost)
	}
	return nil
}

// Held says whether process pid holds a POSIX lock on the file at path,
// as /proc/locks lists them (fs.ErrNotExist where there is no such file:
// not Linux).
func Held(path string, pid int) (bool, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false, err
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false, err
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "5: POSIX  ADVISORY  READ 4675 fe:00:9979281 1073741826 1073742335";
		// a waiter's line has "->" after the number, and is not a lock held.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "POSIX" {
			continue
		}
		if p, err := strconv.Atoi(fields[4]); err == nil && p == pid && fields[5] == want {
			return true, nil
		}
	}
	return false, sc.Err()
}

// ReadAhead reads the database's pages in order, at most atMost bytes,
// through SQLite (its sqlite_dbpage table), so that the kernel caches them;
// it returns how many bytes it read. A server whose host's cache is cold
// would otherwise read them from the disk one by one as its first pages
// ask for them. It stops when ctx ends.
func (d *DB) ReadAhead(ctx context.Context, atMost int64) (int64, error) {
	conn, err := d.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var size int64
	if err := conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return 0, err
	}
	var n int64
	err = conn.QueryRowContext(ctx, `SELECT coalesce(sum(length(data)), 0) FROM sqlite_dbpage WHERE pgno <= ?`, max(atMost/size, 1)).Scan(&n)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	return n, nil
}
