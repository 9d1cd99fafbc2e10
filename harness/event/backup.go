package event

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/internal/sqlitedb"
)

// BackupPart is one top-level entry of an event's directory as a backup
// copied it.
type BackupPart struct {
	Name  string `json:"name"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// Databases counts the SQLite databases copied as of one instant.
	Databases int `json:"databases"`
}

// BackupReport says what a backup copied, and how long it took.
type BackupReport struct {
	Parts []BackupPart  `json:"parts"`
	Files int           `json:"files"`
	Bytes int64         `json:"bytes"`
	Took  time.Duration `json:"took"`
	// Skipped are the entries left out, each with the reason.
	Skipped []string `json:"skipped,omitempty"`
}

// notBackedUp are the parts of an event's directory a backup leaves out:
// uploads on their way in, and the queue's own store (the runs publish
// their games again when the copy is served).
var notBackedUp = map[string]string{
	tmpDir: "uploads on their way in",
	"nats": "the workers' queue: its runs publish their games again when the copy is served",
}

// Backup writes a consistent copy of the whole event to out (which must not
// exist) while it runs: the event's database as of one instant (VACUUM INTO
// reads it in one transaction), then each tournament's database (the
// final, every ladder pair and scrimmage) likewise, then every other file:
// event.toml, the signing key, the final log's key and name (LogKeyFile,
// LogOriginFile: the copy's log is the event's wherever it is served from),
// the enrolled workers' keys, the uploads, validations, games and
// disputes, which are never changed once written.
// A game the event's database records was complete before its snapshot,
// so the copy holds it whole; a game under way when the copy was taken is
// played again, or resumed, when the copy is served.
func (s *Store) Backup(ctx context.Context, out string) (BackupReport, error) {
	start := time.Now()
	var rep BackupReport
	if err := checkBackupDir(s.Dir, out); err != nil {
		return rep, err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return rep, err
	}
	parts := backupParts{}
	if _, err := s.w.ExecContext(ctx, `VACUUM INTO ?`, filepath.Join(out, DBFile)); err != nil {
		return rep, fmt.Errorf("copy the database: %w", err)
	}
	if err := parts.counted(DBFile, filepath.Join(out, DBFile), true); err != nil {
		return rep, err
	}
	// The tournaments' databases next, each as of one instant: a game one
	// records as played was written whole before it.
	dbs, err := tournamentDBs(s.Dir)
	if err != nil {
		return rep, err
	}
	if err := snapshotAll(ctx, s.Dir, out, dbs, parts); err != nil {
		return rep, err
	}
	if err := copyTheRest(ctx, s.Dir, out, dbs, parts, &rep); err != nil {
		return rep, err
	}
	for _, p := range parts {
		rep.Parts = append(rep.Parts, *p)
		rep.Files += p.Files
		rep.Bytes += p.Bytes
	}
	slices.SortFunc(rep.Parts, func(a, b BackupPart) int { return strings.Compare(a.Name, b.Name) })
	rep.Took = time.Since(start)
	return rep, syncDir(out)
}

// checkBackupDir refuses out as a backup of the event in dir when it
// exists already or lies inside dir.
func checkBackupDir(dir, out string) error {
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists: name a new directory", out)
	}
	src, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	dst, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(src, dst); err == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is inside the event's directory: name a directory outside it", out)
	}
	return nil
}

// backupParts tallies what a backup copied by the top-level entry of the
// event's directory it is under.
type backupParts map[string]*BackupPart

// counted adds the file copied to path, rel in the event's directory, to
// its part; db says it is a database.
func (parts backupParts) counted(rel, path string, db bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	if parts[top] == nil {
		parts[top] = &BackupPart{Name: top}
	}
	p := parts[top]
	p.Files++
	p.Bytes += fi.Size()
	if db {
		p.Databases++
	}
	return nil
}

// tournamentDBs lists the tournaments' databases in the event's directory
// dir (the final, every ladder pair and scrimmage), each relative to dir,
// leaving out the parts a backup does not copy.
func tournamentDBs(dir string) ([]string, error) {
	var dbs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() && notBackedUp[rel] != "" {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && d.Name() == tournament.DBFile && rel != tournament.DBFile {
			dbs = append(dbs, rel)
		}
		return nil
	})
	return dbs, err
}

// snapshotAll copies each of the databases dbs of the event's directory
// dir to the same place in out, each as of one instant.
func snapshotAll(ctx context.Context, dir, out string, dbs []string, parts backupParts) error {
	for _, rel := range dbs {
		to := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		if err := snapshot(ctx, filepath.Join(dir, rel), to); err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
		if err := parts.counted(rel, to, true); err != nil {
			return err
		}
	}
	return nil
}

// copyTheRest copies every other file of the event's directory dir to
// out: all but the databases (dbs and the event's, copied before) and
// their journals, and the parts a backup leaves out, which it notes in rep
// with anything that is not a regular file.
func copyTheRest(ctx context.Context, dir, out string, dbs []string, parts backupParts, rep *BackupReport) error {
	linked := map[fileID]string{}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while the copy ran (a validation run again)
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		if why := notBackedUp[rel]; why != "" {
			rep.Skipped = append(rep.Skipped, rel+"/: "+why)
			return fs.SkipDir
		}
		base := d.Name()
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(out, rel), 0o700)
		case rel == DBFile || slices.Contains(dbs, rel):
			return nil // copied above
		case isSQLiteSidecar(base):
			return nil // the databases' journals: in their snapshots
		case !d.Type().IsRegular():
			rep.Skipped = append(rep.Skipped, rel+": not a regular file")
			return nil
		}
		to := filepath.Join(out, rel)
		// A blob the games share (one file, many links) is copied once and
		// linked as it is here.
		var id fileID
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				id = fileID{uint64(st.Dev), st.Ino}
				if first, ok := linked[id]; ok && os.Link(first, to) == nil {
					return nil
				}
			}
		}
		if err := copyFile(p, to); errors.Is(err, fs.ErrNotExist) {
			return nil // removed while the copy ran
		} else if err != nil {
			return err
		}
		if id != (fileID{}) {
			linked[id] = to
		}
		return parts.counted(rel, to, false)
	})
}

// fileID is a file whatever its names: its device and inode.
type fileID struct{ dev, ino uint64 }

// isSQLiteSidecar says whether a file is a SQLite database's journal.
func isSQLiteSidecar(name string) bool {
	for _, suf := range []string{"-wal", "-shm", "-journal"} {
		if strings.HasSuffix(name, ".db"+suf) {
			return true
		}
	}
	return false
}

// snapshot copies the SQLite database at path to to as of one instant.
func snapshot(ctx context.Context, path, to string) error {
	db, err := sqlitedb.Open(path, "_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, to)
	return errors.Join(err, db.Close())
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&0o700|0o600)
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
