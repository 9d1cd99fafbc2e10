package proc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/arenabots/arena/sandbox"
)

// CheckName accepts a single path element that is safe to create in a directory.
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("bad file name %q: want a single path element", name)
	}
	return nil
}

// Prepare readies the game directory for a turn: optionally empties it, removes
// the named files and writes the turn's files. A planted symlink or directory
// under a name we write is removed, never followed. A file marked Owned is
// given to owner (the bot's user) when owner is set.
func Prepare(dir string, t sandbox.Turn, owner *syscall.Credential) error {
	if t.Clean {
		if err := Wipe(dir); err != nil {
			return err
		}
	}
	for _, name := range t.Remove {
		if err := CheckName(name); err != nil {
			return err
		}
		if err := removeAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	for _, f := range t.Put {
		to := owner
		if !f.Owned {
			to = nil
		}
		if err := writeFile(dir, f, to); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile creates f in dir, replacing whatever had its name.
func WriteFile(dir string, f sandbox.File) error { return writeFile(dir, f, nil) }

// writeFile is WriteFile that gives the file to owner when set.
func writeFile(dir string, f sandbox.File, owner *syscall.Credential) error {
	if err := CheckName(f.Name); err != nil {
		return err
	}
	p := filepath.Join(dir, f.Name)
	if err := removeAll(p); err != nil {
		return err
	}
	mode := f.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return fmt.Errorf("create %s: %w", f.Name, err)
	}
	file := os.NewFile(uintptr(fd), p)
	if _, err := file.Write(f.Data); err != nil {
		file.Close()
		return fmt.Errorf("write %s: %w", f.Name, err)
	}
	if owner != nil {
		if err := file.Chown(int(owner.Uid), int(owner.Gid)); err != nil {
			file.Close()
			return fmt.Errorf("give %s to the bot: %w", f.Name, err)
		}
	}
	// The umask may have narrowed the mode (and a chown cleared set-id bits).
	if err := file.Chmod(mode); err != nil {
		file.Close()
		return fmt.Errorf("chmod %s: %w", f.Name, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name, err)
	}
	return nil
}

// Collect reads the answer file without following a symlink and without blocking
// on a FIFO. At most max bytes are read; a larger file is marked Truncated.
func Collect(dir, name string, max int64) (sandbox.Collected, error) {
	var c sandbox.Collected
	if err := CheckName(name); err != nil {
		return c, err
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	c.Present = true
	c.Type = typeOf(fi.Mode())
	c.Size = fi.Size()
	if c.Type != sandbox.TypeFile {
		return c, nil
	}
	data, truncated, err := readCapped(dir, name, max)
	if err != nil {
		return c, err
	}
	c.Data, c.Truncated = data, truncated
	return c, nil
}

// ReadFile returns a regular file's contents, refusing links, FIFOs and anything
// larger than max.
func ReadFile(dir, name string, max int64) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	data, truncated, err := readCapped(dir, name, max)
	if err != nil {
		return nil, err
	}
	if truncated {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return data, nil
}

func readCapped(dir, name string, max int64) ([]byte, bool, error) {
	fd, err := unix.Open(filepath.Join(dir, name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is a %s, not a regular file", name, typeOf(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > max {
		return data[:max], true, nil
	}
	return data, false, nil
}

// List describes every entry of dir, sorted by name, hashing regular files of at
// most hashMax bytes. With a non-nil h, a file h hashed before and that has not
// changed since is not read again.
func List(dir string, hashMax int64, h *Hashes) ([]sandbox.Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.Entry, 0, len(des))
	for _, de := range des {
		fi, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		e := sandbox.Entry{Name: de.Name(), Type: typeOf(fi.Mode()), Size: fi.Size(), Mode: fi.Mode().Perm()}
		if e.Type == sandbox.TypeFile && e.Size <= hashMax {
			// A file the bot made unreadable, or replaced or grew since it was
			// listed, is listed without a hash: the bot's doing, for the
			// harness to judge, never a fault of the sandbox.
			if sum, size, err := h.sum(dir, e.Name, hashMax); err == nil {
				e.SHA256, e.Size = sum, size
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Hashes remembers the SHA-256 of files by what a bot cannot forge: device,
// inode, size and change time. The change time is set by the kernel on every
// write, rename or chmod, and a process without CAP_SYS_TIME cannot choose it;
// so a file whose four are unchanged holds what it held. A file changed in the
// same clock tick as it was hashed is not remembered (its change time could
// equal a later write's), as git treats a racily clean index entry. The zero
// value is ready; a nil *Hashes remembers nothing.
type Hashes struct {
	known map[string]hashed
	// Read counts the bytes read to hash, over the Hashes' life.
	Read int64
}

type hashed struct {
	dev, ino uint64
	size     int64
	ctime    unix.Timespec
	sum      string
}

// Forget drops everything remembered (a box returned to a new game).
func (h *Hashes) Forget() {
	if h != nil {
		h.known = nil
	}
}

// sum hashes dir/name, streaming, without following a link, unless h knows
// it unchanged.
func (h *Hashes) sum(dir, name string, max int64) (string, int64, error) {
	fd, err := unix.Open(filepath.Join(dir, name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", 0, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > max {
		return "", 0, fmt.Errorf("%s: not a regular file of at most %d bytes", name, max)
	}
	key := hashed{dev: st.Dev, ino: st.Ino, size: st.Size, ctime: st.Ctim}
	if h != nil {
		if k, ok := h.known[name]; ok && k.dev == key.dev && k.ino == key.ino && k.size == key.size && k.ctime == key.ctime {
			return k.sum, k.size, nil
		}
	}
	var now unix.Timespec
	clockErr := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now)
	sha := sha256.New()
	n, err := io.Copy(sha, io.LimitReader(f, max+1))
	if err != nil {
		return "", 0, err
	}
	if n > max {
		return "", 0, fmt.Errorf("%s grew past %d bytes", name, max)
	}
	key.sum = hex.EncodeToString(sha.Sum(nil))
	if h != nil {
		h.Read += n
		if h.known == nil {
			h.known = map[string]hashed{}
		}
		delete(h.known, name)
		// Only a file last changed before this clock tick is remembered, and
		// only if nothing wrote to it while it was read; without the time,
		// nothing is.
		if clockErr == nil && n == key.size && before(key.ctime, now) {
			var again unix.Stat_t
			if unix.Fstat(fd, &again) == nil && again.Ctim == key.ctime && again.Size == key.size {
				h.known[name] = key
			}
		}
	}
	return key.sum, n, nil
}

func before(a, b unix.Timespec) bool {
	return a.Sec < b.Sec || (a.Sec == b.Sec && a.Nsec < b.Nsec)
}

// Wipe removes everything inside dir, whatever its permissions.
func Wipe(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	for _, de := range des {
		if err := removeAll(filepath.Join(dir, de.Name())); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// WipeScratch empties each scratch directory; one that does not exist (a
// container without /dev/shm) is fine. It wipes them all and returns every
// failure: a directory it could not empty may still hold what a bot left.
func WipeScratch(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if err := Wipe(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("wipe %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// removeAll is os.RemoveAll that first makes directories the bot locked (mode 000)
// writable again. It never follows symlinks.
func removeAll(p string) error {
	err := os.RemoveAll(p)
	// Each pass unlocks one more level of directories the bot made unreadable.
	// A walk or chmod that fails is not an error of its own: the RemoveAll after
	// it fails then, and that error is returned.
	for pass := 0; err != nil && errors.Is(err, fs.ErrPermission) && pass < 64; pass++ {
		filepath.WalkDir(p, func(q string, d fs.DirEntry, _ error) error {
			if d != nil && d.IsDir() {
				os.Chmod(q, 0o700)
			}
			return nil
		})
		err = os.RemoveAll(p)
	}
	return err
}

func typeOf(m fs.FileMode) sandbox.EntryType {
	switch {
	case m.IsRegular():
		return sandbox.TypeFile
	case m.IsDir():
		return sandbox.TypeDir
	case m&fs.ModeSymlink != 0:
		return sandbox.TypeSymlink
	case m&fs.ModeNamedPipe != 0:
		return sandbox.TypeFIFO
	}
	return sandbox.TypeOther
}

// RunTurn is one whole turn in gameDir: prepare the directory, run the process
// described by s, then wipe the scratch directories, collect the answer file and
// list the directory. oomKills, when set, counts the OOM kills so far; a rise
// during the turn marks the report OOMKilled.
//
// h, when set, remembers the hashes of the game directory's files from turn
// to turn; Report.Hashed says how many bytes this turn read to hash.
func RunTurn(ctx context.Context, gameDir string, scratch []string, t sandbox.Turn, s Spec, oomKills func() int64, h *Hashes) (sandbox.Report, error) {
	var rep sandbox.Report
	if err := Prepare(gameDir, t, s.Cred); err != nil {
		return rep, fmt.Errorf("prepare game_dir: %w", err)
	}
	var before int64
	if oomKills != nil {
		before = oomKills()
	}
	res, err := Run(ctx, s)
	if err != nil {
		return rep, err
	}
	rep = sandbox.Report{
		StartError: res.StartError,
		ExitCode:   res.ExitCode,
		Signal:     res.Signal,
		TimedOut:   res.TimedOut,
		Wall:       res.Wall,
		CPU:        res.CPU,
		PeakMemory: res.PeakRSS,
		Survivors:  res.Survivors,
		Stdout:     res.Stdout,
		Stderr:     res.Stderr,
		OOMKilled:  oomKills != nil && oomKills() > before,

		HostWait:      res.HostWait,
		HostWaitError: res.MeterError,
		HostStalled:   res.HostStalled,
	}
	if err := WipeScratch(scratch); err != nil {
		return rep, err
	}
	if t.Collect != "" {
		if rep.Answer, err = Collect(gameDir, t.Collect, t.CollectMax); err != nil {
			return rep, fmt.Errorf("collect %s: %w", t.Collect, err)
		}
	}
	var read int64
	if h != nil {
		read = h.Read
	}
	if rep.GameDir, err = List(gameDir, t.HashMax, h); err != nil {
		return rep, fmt.Errorf("list game_dir: %w", err)
	}
	if h != nil {
		rep.Hashed = h.Read - read
	}
	return rep, nil
}

// CheckEmpty says what dir still holds, or returns nil when it holds nothing.
// A missing dir counts as empty when missingOK.
func CheckEmpty(dir string, missingOK bool) error {
	des, err := os.ReadDir(dir)
	if err != nil && !(missingOK && errors.Is(err, fs.ErrNotExist)) {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	if len(des) == 0 {
		return nil
	}
	names := make([]string, 0, len(des))
	for _, de := range des {
		names = append(names, de.Name())
	}
	return fmt.Errorf("%s still holds %s", dir, strings.Join(names, ", "))
}
