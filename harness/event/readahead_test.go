package event

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadAhead brings the whole database into the kernel's cache: its pages,
// let go first, are all there after it; it stops when its context ends.
func TestReadAheadBringsTheDatabaseIntoTheCache(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	// 2 MB of the database's own pages.
	if _, err := st.w.ExecContext(ctx, `CREATE TABLE filler (b BLOB);
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO filler SELECT randomblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(st.Dir, DBFile)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	cached := func() (in, pages int) {
		m, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(m)
		vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			t.Fatal(errno)
		}
		for _, v := range vec {
			in += int(v & 1)
		}
		return in, len(vec)
	}
	if in, pages := cached(); in == pages {
		t.Skipf("the kernel kept all %d pages of the file when told to let them go: nothing to see", pages)
	}
	n, err := st.ReadAhead(ctx)
	if err != nil || n != info.Size() {
		t.Fatalf("ReadAhead read %d bytes of %d, %v", n, info.Size(), err)
	}
	if in, pages := cached(); in != pages {
		t.Errorf("after ReadAhead, %d pages of %d in the cache", in, pages)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if n, err := st.ReadAhead(done); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("ReadAhead with its context ended: read %d bytes, %v", n, err)
	}
}
