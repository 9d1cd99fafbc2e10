package sqlitedb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestMain lets a test run this binary as another process that opens the
// file outside SQLite: what it does with its descriptors cannot drop this
// process's locks.
func TestMain(m *testing.M) {
	if what, path := os.Getenv("SQLITEDB_HELPER"), os.Getenv("SQLITEDB_PATH"); what != "" {
		n, err := outside(what, path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(n)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// outside evicts the file from the kernel's cache ("evict") or counts its
// pages in it and not ("cached": in*1e6+all).
func outside(what, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	switch what {
	case "evict":
		return 0, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	case "cached":
		m, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return 0, err
		}
		defer unix.Munmap(m)
		vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			return 0, errno
		}
		in := 0
		for _, v := range vec {
			in += int(v & 1)
		}
		return in*1_000_000 + len(vec), nil
	}
	return 0, fmt.Errorf("no helper %q", what)
}

// fromOutside runs outside(what, path) in another process.
func fromOutside(t *testing.T, what, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SQLITEDB_HELPER="+what, "SQLITEDB_PATH="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v", what, path, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// openWAL opens a new database in WAL mode with one table written.
func openWAL(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (b BLOB); INSERT INTO t VALUES (randomblob(100))`); err != nil {
		t.Fatal(err)
	}
	return db
}

// A descriptor of the database opened and closed outside SQLite drops the
// process's lock, and CheckLock and Close say so; one kept by SQLite does
// not.
func TestALockDroppedOutsideSQLiteIsCaught(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openWAL(t)
	if err := db.CheckLock(ctx); err != nil {
		t.Fatalf("a database just opened: %v", err)
	}
	// A second pool of the same file, opened and closed through SQLite,
	// leaves the lock alone.
	other, err := Open(db.Path(), "_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatalf("a second pool closed: %v", err)
	}
	if err := db.CheckLock(ctx); err != nil {
		t.Fatalf("after a second pool of the file closed: %v", err)
	}
	f, err := os.Open(db.Path()) // the mistake this package exists to prevent
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := db.CheckLock(ctx); !errors.Is(err, ErrLockLost) {
		t.Errorf("after a descriptor was closed outside SQLite: %v, want ErrLockLost", err)
	}
	if err := db.Close(); !errors.Is(err, ErrLockLost) {
		t.Errorf("Close after the lock was lost: %v, want ErrLockLost", err)
	}
}

// A database in another journal mode holds no lock between transactions:
// nothing to check, and closing it is no error.
func TestARollbackJournalHasNoLockToCheck(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// ReadAhead brings the whole database into the kernel's cache through
// SQLite, with the lock kept; it stops when its context ends.
func TestReadAheadBringsTheDatabaseIntoTheCache(t *testing.T) {
	t.Parallel()
	for name, params := range map[string]string{"read": "", "mapped": "_pragma=mmap_size(1073741824)"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			readsAhead(t, params)
		})
	}
}

func readsAhead(t *testing.T, params string) {
	ctx := context.Background()
	db := openWAL(t)
	if _, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO t SELECT randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	// A new pool, as a server just started has: pages a connection has
	// in its own cache are not read again.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(db.Path(), params)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := os.Stat(db.Path())
	if err != nil {
		t.Fatal(err)
	}
	fromOutside(t, "evict", db.Path())
	if c := fromOutside(t, "cached", db.Path()); c/1_000_000 == c%1_000_000 {
		t.Skipf("the kernel kept all %d pages of the file when told to let them go: nothing to see", c%1_000_000)
	}
	n, err := db.ReadAhead(ctx, 1<<30)
	if err != nil || n != info.Size() {
		t.Fatalf("ReadAhead read %d bytes of %d, %v", n, info.Size(), err)
	}
	if c := fromOutside(t, "cached", db.Path()); c/1_000_000 != c%1_000_000 {
		t.Errorf("after ReadAhead, %d pages of %d in the cache", c/1_000_000, c%1_000_000)
	}
	if n, err := db.ReadAhead(ctx, 3*4096); err != nil || n != 3*4096 {
		t.Errorf("ReadAhead of 3 pages read %d bytes, %v", n, err)
	}
	if err := db.CheckLock(ctx); err != nil {
		t.Errorf("after ReadAhead: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if n, err := db.ReadAhead(done, 1<<30); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("ReadAhead with its context ended: read %d bytes, %v", n, err)
	}
}
