// Package submission turns what a team handed in (an executable, a directory,
// or a ZIP) into a sandbox.Program, treating every byte as hostile: ZIP entries
// are checked for path escapes, links, duplicates, encryption and compression
// bombs before a byte is inflated, and every size is capped.
//
// It never writes outside the directory it is given and never executes anything.
package submission

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Limits cap what a submission may hold.
type Limits struct {
	MaxArchiveBytes int64 // size of the ZIP file itself
	MaxTotalBytes   int64 // sum of uncompressed sizes
	MaxFileBytes    int64 // largest single file
	MaxEntries      int
	// MaxRatio is the largest compression ratio accepted, for the archive
	// as a whole and for each entry of ratioFloor bytes or more; beyond it,
	// a compression bomb.
	MaxRatio int64
}

// DefaultLimits are generous for one-file executables (PyInstaller bundles run
// to tens of MiB) and tight against abuse.
func DefaultLimits() Limits {
	return Limits{
		MaxArchiveBytes: 256 << 20,
		MaxTotalBytes:   512 << 20,
		MaxFileBytes:    256 << 20,
		MaxEntries:      10000,
		MaxRatio:        200,
	}
}

// Bot is a loaded submission.
type Bot struct {
	Name   string // given (LoadOptions.Name), or from the file or directory name
	Source string // the path it was loaded from
	// SHA256 is the hash of the executable that runs; SubmissionSHA256 that of
	// the file handed in (the ZIP, or the executable itself).
	SHA256           string
	SubmissionSHA256 string
	Program          sandbox.Program
	// Choice explains how the executable was picked.
	Choice string
	// SourceEntry is the source file a bot handed in as source is built
	// from; such a bot has no Program.Entry until it is built (see
	// harness/build). Language is its extension and Toolchain the version
	// that built it; BuildError says why it did not build.
	SourceEntry string
	Language    string
	Toolchain   string
	BuildError  string
}

// Error is a refusal that names the entry and the rule.
type Error struct {
	Entry string
	Rule  string // for people: what is wrong, with the numbers
	// Kind is the rule broken, for programs: choose advice by it, never by
	// the text of Rule.
	Kind ErrorKind
}

func (e *Error) Error() string {
	if e.Entry == "" {
		return e.Rule
	}
	return fmt.Sprintf("%s: %s", e.Entry, e.Rule)
}

// ErrorKind is the rule an Error is about.
type ErrorKind string

// Kinds of Error. Reading a submission (Load, ReadAny, ReadZip, CheckName) can
// refuse with any of them but KindNameClash (Package) and KindExtract
// (Extract).
const (
	// KindTooLarge: the file handed in, an entry, or the whole submission is
	// over a size limit.
	KindTooLarge ErrorKind = "too-large"
	// KindTooManyEntries: more entries or files than the limit.
	KindTooManyEntries ErrorKind = "too-many-entries"
	// KindBomb: an entry compresses beyond the ratio limit, or inflates to
	// more than its header declares.
	KindBomb ErrorKind = "compression-bomb"
	// KindPathEscape: an entry name with ".." or an absolute path.
	KindPathEscape ErrorKind = "path-escape"
	// KindBadName: an entry name that is empty, holds a NUL byte or a
	// backslash, or has an empty or "." element.
	KindBadName ErrorKind = "bad-name"
	// KindSymlink: a symbolic link (a ZIP entry, or a link in a directory).
	KindSymlink ErrorKind = "symlink"
	// KindSpecialFile: a device, pipe or socket; in a directory, anything
	// that is neither a regular file, a directory nor a symbolic link.
	KindSpecialFile ErrorKind = "special-file"
	// KindEncrypted: an encrypted entry.
	KindEncrypted ErrorKind = "encrypted"
	// KindCompression: a compression method other than deflate or store.
	KindCompression ErrorKind = "compression-method"
	// KindDuplicate: two entries with the same name.
	KindDuplicate ErrorKind = "duplicate"
	// KindNotZip: the archive's structure cannot be read.
	KindNotZip ErrorKind = "not-a-zip"
	// KindCorrupt: an entry cannot be opened or inflated.
	KindCorrupt ErrorKind = "corrupt"
	// KindEmpty: the archive holds no files.
	KindEmpty ErrorKind = "empty"
	// KindNameClash: a file has the name of one the game's adapter adds.
	KindNameClash ErrorKind = "name-clash"
	// KindExtract: a file could not be written out.
	KindExtract ErrorKind = "extract"
)

func refuse(kind ErrorKind, entry, format string, a ...any) error {
	return &Error{Entry: entry, Rule: fmt.Sprintf(format, a...), Kind: kind}
}

// LoadOptions say how Load reads a submission.
type LoadOptions struct {
	Limits Limits
	// Packager turns the submission into a program for a game that runs
	// modules through an adapter; nil: the submission is a program.
	Packager rules.Packager
	// IsSource tells a source file; nil takes executables only.
	IsSource func(name string) bool
	// Entry names the file that runs (a path inside the submission, as
	// PickEntry takes it); "" picks it by the rules of PickEntry. A named
	// source file that IsSource accepts is built.
	Entry string
	// Name is the bot's name (see NameBots); "" gives it the name of its
	// path (DefaultName).
	Name string
}

// Load reads a bot from an executable file, a directory holding one
// executable (or, with IsSource, one source file), or a submission ZIP, as
// o says.
func Load(p string, o LoadOptions) (*Bot, error) {
	lim, pack, isSource := o.Limits, o.Packager, o.IsSource
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	var files []sandbox.File
	var subSum string
	name := strings.TrimSuffix(filepath.Base(filepath.Clean(p)), filepath.Ext(p))
	switch {
	case fi.IsDir():
		if files, err = readDir(p, lim); err != nil {
			return nil, err
		}
		name = filepath.Base(filepath.Clean(p))
	case fi.Mode().IsRegular():
		if fi.Size() > max(lim.MaxArchiveBytes, lim.MaxFileBytes) {
			return nil, refuse(KindTooLarge, filepath.Base(p), "is %d bytes; the limit is %d", fi.Size(), max(lim.MaxArchiveBytes, lim.MaxFileBytes))
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		subSum = sum(data)
		if isZip(data) {
			if files, err = ReadZip(data, lim); err != nil {
				return nil, err
			}
		} else {
			files = []sandbox.File{{Name: filepath.Base(p), Data: data, Mode: fi.Mode().Perm() | 0o500}}
		}
	default:
		return nil, fmt.Errorf("%s is neither a file nor a directory", p)
	}
	if o.Name != "" {
		if err := CheckBotName(o.Name); err != nil {
			return nil, err
		}
		name = o.Name
	}
	var entry, why string
	if pack != nil {
		if o.Entry != "" {
			return nil, fmt.Errorf("%s: this game runs a submission through its adapter; an entry point (%q) cannot be named", p, o.Entry)
		}
		files, entry, err = Package(files, pack)
		why = "run by the game's adapter " + entry
	}
	src := ""
	if err == nil && entry == "" {
		entry, why, err = PickEntry(files, o.Entry)
		var np *notProgramError
		if o.Entry != "" && isSource != nil && errors.As(err, &np) && isSource(np.name) {
			src, err = np.name, nil
		}
	}
	if errors.Is(err, ErrNoExecutable) && isSource != nil {
		var serr error
		if src, serr = PickSource(files, isSource); serr != nil {
			return nil, fmt.Errorf("%s: %w", p, serr)
		}
		err = nil
	}
	if src != "" {
		if subSum == "" {
			subSum = filesSum(files)
		}
		choice := src + " is the source to build"
		if o.Entry != "" {
			choice = src + " was named as the entry point: the source to build"
		}
		return &Bot{Name: name, Source: p, SHA256: subSum, SubmissionSHA256: subSum,
			Program: sandbox.Program{Name: name, Files: files}, Choice: choice, SourceEntry: src}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var exe []byte
	for _, f := range files {
		if f.Name == entry {
			exe = f.Data
		}
	}
	if subSum == "" {
		subSum = filesSum(files)
	}
	exeSum := sum(exe)
	if why != "" && pack != nil && strings.HasPrefix(why, "run by the game's adapter") {
		// The adapter is the same for everyone: the bot is its module.
		exeSum = subSum
	}
	return &Bot{
		Name:             name,
		Source:           p,
		SHA256:           exeSum,
		SubmissionSHA256: subSum,
		Program:          sandbox.Program{Name: name, Files: files, Entry: entry},
		Choice:           why,
	}, nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// filesSum hashes a set of files: names and contents, in name order.
func filesSum(files []sandbox.File) string {
	sorted := append([]sandbox.File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Limits of a name: what every file system takes (255 bytes a name) and a
// path well within what Linux does.
const (
	maxElement = 255
	maxPath    = 1024
)

// Package adds a game's adapter to a submission's files.
func Package(files []sandbox.File, pack rules.Packager) ([]sandbox.File, string, error) {
	m := map[string][]byte{}
	for _, f := range files {
		m[f.Name] = f.Data
	}
	extra, entry, err := pack.Package(m)
	if err != nil {
		return nil, "", err
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		if _, clash := m[name]; clash {
			return nil, "", refuse(KindNameClash, name, "clashes with a file the game's adapter needs; rename it")
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		files = append(files, sandbox.File{Name: name, Data: extra[name], Mode: 0o755})
	}
	return files, entry, nil
}

// Executable kinds.
const (
	ELF    Kind = "ELF executable"
	Script Kind = "script"
	PE     Kind = "Windows executable"
	MachO  Kind = "macOS executable"
	// SharedLibrary and ObjectFile are ELF files that are not programs;
	// only ClassifyFile tells them from ELF.
	SharedLibrary Kind = "ELF shared library"
	ObjectFile    Kind = "ELF object file"
)

// ReadAny loads the files of a ZIP or a directory, for validation.
func ReadAny(p string, lim Limits) ([]sandbox.File, string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, "", err
	}
	if fi.IsDir() {
		files, err := readDir(p, lim)
		return files, "", err
	}
	if fi.Size() > lim.MaxArchiveBytes {
		return nil, "", refuse(KindTooLarge, filepath.Base(p), "is %d bytes; the limit is %d", fi.Size(), lim.MaxArchiveBytes)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, "", err
	}
	if !isZip(data) {
		return []sandbox.File{{Name: filepath.Base(p), Data: data, Mode: fi.Mode().Perm()}}, sum(data), nil
	}
	files, err := ReadZip(data, lim)
	return files, sum(data), err
}

// Sum is the hex SHA-256 of data.
func Sum(data []byte) string { return sum(data) }

// InDirs lists the submissions held in dirs: every entry of each, but
// hidden ones, in name order.
func InDirs(dirs []string) ([]string, error) {
	var all []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				all = append(all, filepath.Join(dir, e.Name()))
			}
		}
	}
	return all, nil
}
