// Package submission turns what a team handed in (an executable, a directory,
// or a ZIP) into a sandbox.Program, treating every byte as hostile: ZIP entries
// are checked for path escapes, links, duplicates, encryption and compression
// bombs before a byte is inflated, and every size is capped.
//
// It never writes outside the directory it is given and never executes anything.
package submission

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
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

// Load reads a bot from an executable file, a directory holding one executable,
// or a submission ZIP.
func Load(p string, lim Limits) (*Bot, error) { return LoadFor(p, lim, nil) }

// LoadFor is Load for a game whose submissions a Packager turns into a
// program (nil: pick the executable).
func LoadFor(p string, lim Limits, pack rules.Packager) (*Bot, error) {
	return LoadSource(p, lim, pack, nil)
}

// LoadSource is LoadFor that also takes a bot handed in as source: with no
// executable, the one file (at the top, or the only one anywhere) that
// isSource accepts is the bot's SourceEntry, to be built.
func LoadSource(p string, lim Limits, pack rules.Packager, isSource func(name string) bool) (*Bot, error) {
	return LoadWith(p, LoadOptions{Limits: lim, Packager: pack, IsSource: isSource})
}

// LoadOptions say how LoadWith reads a submission.
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

// LoadWith reads a bot from an executable file, a directory or a submission
// ZIP, as o says.
func LoadWith(p string, o LoadOptions) (*Bot, error) {
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

func isZip(data []byte) bool {
	return bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06"))
}

// ignored is debris that archivers add and that is never a bot.
func ignored(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(name, "__MACOSX/") || base == ".DS_Store" || strings.HasPrefix(base, "._") || base == "Thumbs.db"
}

// CheckName refuses entry names that could escape the extraction directory.
func CheckName(name string) error {
	switch {
	case name == "":
		return refuse(KindBadName, name, "empty name")
	case strings.ContainsRune(name, 0):
		return refuse(KindBadName, name, "name contains a NUL byte")
	case strings.Contains(name, `\`):
		return refuse(KindBadName, name, `backslash in the name (use / as the separator)`)
	case path.IsAbs(name) || filepath.VolumeName(name) != "" || (len(name) > 1 && name[1] == ':'):
		return refuse(KindPathEscape, name, "absolute path")
	}
	if len(name) > maxPath {
		return refuse(KindBadName, name[:64]+"...", "the name is %d bytes long; the limit is %d", len(name), maxPath)
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".." {
			return refuse(KindPathEscape, name, `path escapes the archive with ".."`)
		}
		if part == "" || part == "." {
			return refuse(KindBadName, name, "path has an empty or '.' element")
		}
		if len(part) > maxElement {
			return refuse(KindBadName, name[:min(len(name), 64)]+"...", "a file or folder name of %d bytes; the limit is %d", len(part), maxElement)
		}
	}
	return nil
}

// Limits of a name: what every file system takes (255 bytes a name) and a
// path well within what Linux does.
const (
	maxElement = 255
	maxPath    = 1024
)

// ratioFloor is the size from which an entry's own compression ratio is
// checked: below it, an entry can hold nothing that matters, however well
// it compresses (the archive's ratio as a whole still counts it).
const ratioFloor = 4 << 10

// ReadZip checks and inflates a ZIP held in memory. Every refusal names the
// entry and the rule it broke; nothing is inflated beyond the limits.
func ReadZip(data []byte, lim Limits) ([]sandbox.File, error) {
	if int64(len(data)) > lim.MaxArchiveBytes {
		return nil, refuse(KindTooLarge, "", "the ZIP is %d bytes; the limit is %d", len(data), lim.MaxArchiveBytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, refuse(KindNotZip, "", "not a readable ZIP archive: %v", err)
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, refuse(KindTooManyEntries, "", "the ZIP has %d entries; the limit is %d", len(zr.File), lim.MaxEntries)
	}
	// Check everything before inflating anything.
	seen := map[string]string{}
	var total uint64
	for _, f := range zr.File {
		if err := CheckName(f.Name); err != nil {
			return nil, err
		}
		key := strings.TrimSuffix(f.Name, "/")
		if prev, dup := seen[key]; dup {
			return nil, refuse(KindDuplicate, f.Name, "duplicate entry (also %s)", prev)
		}
		seen[key] = f.Name
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, refuse(KindSymlink, f.Name, "symbolic links are not allowed")
		case mode&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeSocket|fs.ModeCharDevice) != 0:
			return nil, refuse(KindSpecialFile, f.Name, "special files are not allowed")
		case f.Flags&0x1 != 0:
			return nil, refuse(KindEncrypted, f.Name, "encrypted entries are not allowed")
		case f.Method != zip.Store && f.Method != zip.Deflate:
			return nil, refuse(KindCompression, f.Name, "compression method %d is not supported (use deflate or store)", f.Method)
		}
		if f.FileInfo().IsDir() {
			continue
		}
		if f.UncompressedSize64 >= ratioFloor && f.UncompressedSize64 > uint64(lim.MaxRatio)*max(f.CompressedSize64, 1) {
			return nil, refuse(KindBomb, f.Name, "compresses %d:1 (%d to %d bytes): a compression bomb", f.UncompressedSize64/max(f.CompressedSize64, 1), f.UncompressedSize64, f.CompressedSize64)
		}
		if f.UncompressedSize64 > uint64(lim.MaxFileBytes) {
			return nil, refuse(KindTooLarge, f.Name, "is %d bytes uncompressed; the limit per file is %d", f.UncompressedSize64, lim.MaxFileBytes)
		}
		total += f.UncompressedSize64
		if total > uint64(lim.MaxTotalBytes) {
			return nil, refuse(KindTooLarge, f.Name, "the archive inflates to more than %d bytes", lim.MaxTotalBytes)
		}
	}
	// A bomb split into many entries, each under the ratio, is one as a
	// whole.
	if total >= ratioFloor && total > uint64(lim.MaxRatio)*uint64(len(data)) {
		return nil, refuse(KindBomb, "", "the archive inflates %d:1 as a whole (%d to %d bytes): a compression bomb", total/uint64(len(data)), total, len(data))
	}
	var files []sandbox.File
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || ignored(f.Name) {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, refuse(KindCorrupt, f.Name, "cannot be read: %v", err)
		}
		// The header's sizes are the bot author's claim; never inflate past them.
		content, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
		rc.Close()
		if err != nil {
			return nil, refuse(KindCorrupt, f.Name, "is corrupt: %v", err)
		}
		if uint64(len(content)) != f.UncompressedSize64 {
			return nil, refuse(KindBomb, f.Name, "inflates to more bytes than its header declares: a compression bomb")
		}
		mode := f.Mode().Perm()
		if f.CreatorVersion>>8 != 3 { // not made on Unix: no permission bits
			mode = 0o644
		}
		files = append(files, sandbox.File{Name: f.Name, Data: content, Mode: mode})
	}
	if len(files) == 0 {
		return nil, refuse(KindEmpty, "", "the ZIP holds no files")
	}
	return files, nil
}

// readDir reads every regular file under dir; links and special files are
// refused, not followed.
func readDir(dir string, lim Limits) ([]sandbox.File, error) {
	var files []sandbox.File
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || ignored(rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			kind := KindSpecialFile
			if d.Type()&fs.ModeSymlink != 0 {
				kind = KindSymlink
			}
			return refuse(kind, rel, "only regular files are allowed (found a %s)", d.Type())
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if len(files) >= lim.MaxEntries {
			return refuse(KindTooManyEntries, rel, "more than %d files", lim.MaxEntries)
		}
		if total += fi.Size(); fi.Size() > lim.MaxFileBytes || total > lim.MaxTotalBytes {
			return refuse(KindTooLarge, rel, "the submission is larger than the limits (%d bytes per file, %d in all)", lim.MaxFileBytes, lim.MaxTotalBytes)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, sandbox.File{Name: rel, Data: data, Mode: fi.Mode().Perm()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no files", dir)
	}
	return files, nil
}

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

// Kind says what an executable candidate is.
type Kind string

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

// Classify says what kind of executable data is, or "" for none. It reads
// the magic bytes only: every ELF file is ELF (see ClassifyFile).
func Classify(data []byte) Kind {
	switch {
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		return ELF
	case hasShebang(data):
		return Script
	case bytes.HasPrefix(data, []byte("MZ")):
		return PE
	case len(data) >= 4 && (bytes.Equal(data[:4], []byte{0xfe, 0xed, 0xfa, 0xce}) || bytes.Equal(data[:4], []byte{0xfe, 0xed, 0xfa, 0xcf}) ||
		bytes.Equal(data[:4], []byte{0xce, 0xfa, 0xed, 0xfe}) || bytes.Equal(data[:4], []byte{0xcf, 0xfa, 0xed, 0xfe}) ||
		bytes.Equal(data[:4], []byte{0xca, 0xfe, 0xba, 0xbe})):
		return MachO
	}
	return ""
}

// ClassifyFile is Classify that also tells an ELF program from an ELF file
// that is not one, by its headers and its name:
//
//   - a relocatable object (ET_REL, a .o file) or a core dump (ET_CORE) is
//     ObjectFile;
//   - an ET_DYN file is a position-independent executable (ELF) when its
//     DT_FLAGS_1 has DF_1_PIE (what current linkers mark PIE and static-pie
//     executables with); otherwise it is SharedLibrary when its name ends in
//     .so or .so.N (libfoo.so.1, _mod.cpython-312-x86_64-linux-gnu.so), when
//     it has a DT_SONAME, or when it has neither a PT_INTERP (a loader) nor an
//     entry point; what is left (a loader, or an entry point and no SONAME: a
//     PIE or static-pie from an older linker) is ELF;
//   - any other ELF file, one whose headers cannot be read included, is ELF
//     (validate's format check says what is wrong with it).
func ClassifyFile(name string, data []byte) Kind {
	k := Classify(data)
	if k != ELF {
		return k
	}
	return elfKind(name, data)
}

// soName matches the names of shared libraries.
var soName = regexp.MustCompile(`\.so(\.[0-9]+)*$`)

func elfKind(name string, data []byte) (k Kind) {
	defer func() {
		if recover() != nil { // a hostile header; the format check will say so
			k = ELF
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return ELF
	}
	defer f.Close()
	switch f.Type {
	case elf.ET_REL, elf.ET_CORE:
		return ObjectFile
	case elf.ET_DYN:
	default:
		return ELF
	}
	interp := false
	var flags1 uint64
	soname := false
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			interp = true
		case elf.PT_DYNAMIC:
			tags := dynTags(f, p)
			flags1 |= tags[elf.DT_FLAGS_1]
			_, soname = tags[elf.DT_SONAME]
		}
	}
	switch {
	case flags1&uint64(elf.DF_1_PIE) != 0:
		return ELF
	case soName.MatchString(path.Base(name)), soname, !interp && f.Entry == 0:
		return SharedLibrary
	}
	return ELF
}

// dynTags reads the tags of a PT_DYNAMIC segment (no section headers are
// needed), with the value of each.
func dynTags(f *elf.File, p *elf.Prog) map[elf.DynTag]uint64 {
	tags := map[elf.DynTag]uint64{}
	size := uint64(16)
	if f.Class == elf.ELFCLASS32 {
		size = 8
	}
	const maxTags = 4096
	buf := make([]byte, size)
	for off := uint64(0); off+size <= p.Filesz && off/size < maxTags; off += size {
		if _, err := p.ReadAt(buf, int64(off)); err != nil {
			break
		}
		var tag, val uint64
		if size == 16 {
			tag, val = f.ByteOrder.Uint64(buf), f.ByteOrder.Uint64(buf[8:])
		} else {
			tag, val = uint64(f.ByteOrder.Uint32(buf)), uint64(f.ByteOrder.Uint32(buf[4:]))
		}
		if elf.DynTag(tag) == elf.DT_NULL {
			break
		}
		tags[elf.DynTag(tag)] = val
	}
	return tags
}

// RunName is the name of the file that is a submission's entry point by
// name, at its top (see PickEntry).
const RunName = "run"

// PickExecutable chooses the file that runs by the rules of PickEntry.
func PickExecutable(files []sandbox.File) (entry, why string, err error) {
	return PickEntry(files, "")
}

// PickEntry chooses the file that runs, and says by which rule (why):
//
//  1. named: the file the caller names (a path inside the submission; in a
//     ZIP or directory that wraps everything in one folder, a path inside that
//     folder works too). It must be an ELF executable or a #! script; a name
//     that is not in the submission is ErrEntryNotFound.
//  2. by name: a file called run at the top of the submission (or of the one
//     folder wrapping it), an ELF executable or a #! script.
//  3. the candidates are the ELF executables and #! scripts (ClassifyFile:
//     never a shared library or an object file). When any has the run bit
//     set, only those with it count. Of those, the one ELF executable; with
//     none, the one script.
//
// It refuses, naming the candidates, when the choice is ambiguous, and
// explains a Windows or macOS executable. The entry point chosen is made
// runnable as its author meant, in files itself: a script written on
// Windows (a byte order mark, CRLF line endings) is read as a Unix one,
// and why says so.
func PickEntry(files []sandbox.File, named string) (entry, why string, err error) {
	entry, why, err = pickEntry(files, named)
	if err == nil {
		why += runnable(files, entry)
	}
	return entry, why, err
}

func pickEntry(files []sandbox.File, named string) (entry, why string, err error) {
	if named != "" {
		return pickNamed(files, named)
	}
	top := topDir(files)
	for _, f := range files {
		if f.Name != top+RunName {
			continue
		}
		switch k := ClassifyFile(f.Name, f.Data); k {
		case ELF, Script:
			return f.Name, fmt.Sprintf("%s is the entry point by its name (a file called %s at the top of the submission)", f.Name, RunName), nil
		default:
			return "", "", fmt.Errorf("%s is the entry point by its name, but it is %s: make it an ELF executable or a script with a #! line", f.Name, describe(k))
		}
	}

	var elves, scripts, skipped []string // the candidates and the ELF files that are not programs
	var runELF, runScripts []string      // the candidates with the run bit set
	var pe, macho []string
	for _, f := range files {
		switch k := ClassifyFile(f.Name, f.Data); k {
		case ELF:
			elves = append(elves, f.Name)
			if f.Mode&0o111 != 0 {
				runELF = append(runELF, f.Name)
			}
		case Script:
			scripts = append(scripts, f.Name)
			if f.Mode&0o111 != 0 {
				runScripts = append(runScripts, f.Name)
			}
		case SharedLibrary, ObjectFile:
			skipped = append(skipped, fmt.Sprintf("%s (%s)", f.Name, describe(k)))
		case PE:
			pe = append(pe, f.Name)
		case MachO:
			macho = append(macho, f.Name)
		}
	}
	for _, names := range [][]string{elves, scripts, skipped, runELF, runScripts, pe, macho} {
		sort.Strings(names)
	}
	notes := ""
	if len(skipped) > 0 {
		notes = "; never the entry point: " + list(skipped)
	}
	const advice = "keep exactly one, or call the one that runs \"" + RunName + "\""

	if len(runELF)+len(runScripts) > 0 {
		if len(elves) > len(runELF) || len(scripts) > len(runScripts) {
			notes += "; without the run bit, not considered: " + list(without(append(append([]string(nil), elves...), scripts...), append(append([]string(nil), runELF...), runScripts...)))
		}
		switch {
		case len(runELF) == 1:
			w := fmt.Sprintf("%s is the only ELF executable with the run bit set", runELF[0])
			if len(runScripts) > 0 {
				noun := "script"
				if len(runScripts) > 1 {
					noun = "scripts"
				}
				w += fmt.Sprintf(" (an ELF executable comes before the %s %s; to run a script, call it %s)", noun, list(runScripts), RunName)
			}
			return runELF[0], w + notes, nil
		case len(runELF) > 1:
			return "", "", fmt.Errorf("%d ELF executables with the run bit set (%s): %s", len(runELF), strings.Join(runELF, ", "), advice)
		case len(runScripts) == 1:
			return runScripts[0], fmt.Sprintf("%s is the only script with a #! line and the run bit set, and no ELF executable has the run bit", runScripts[0]) + notes, nil
		default:
			return "", "", fmt.Errorf("no ELF executable with the run bit set and %d scripts with #! lines and the run bit (%s): %s", len(runScripts), strings.Join(runScripts, ", "), advice)
		}
	}

	// No candidate has the run bit (a ZIP made on Windows has none).
	switch {
	case len(elves) == 1:
		return elves[0], fmt.Sprintf("%s is the only ELF executable (no ELF executable or script has the run bit set)", elves[0]) + notes, nil
	case len(elves) > 1:
		return "", "", fmt.Errorf("%d ELF executables (%s): %s", len(elves), strings.Join(elves, ", "), advice)
	case len(scripts) == 1:
		return scripts[0], fmt.Sprintf("%s is the only script with a #! line and there is no ELF executable (no script has the run bit set)", scripts[0]) + notes, nil
	case len(scripts) > 1:
		return "", "", fmt.Errorf("no ELF executable and %d scripts with #! lines (%s): %s", len(scripts), strings.Join(scripts, ", "), advice)
	}
	if len(pe) > 0 {
		return "", "", fmt.Errorf("%s is a Windows executable; build the bot for Linux x86-64", pe[0])
	}
	if len(macho) > 0 {
		return "", "", fmt.Errorf("%s is a macOS executable; build the bot for Linux x86-64", macho[0])
	}
	if len(skipped) > 0 {
		return "", "", fmt.Errorf("%w; not programs: %s", ErrNoExecutable, list(skipped))
	}
	return "", "", ErrNoExecutable
}

// pickNamed is rule 1 of PickEntry.
func pickNamed(files []sandbox.File, named string) (entry, why string, err error) {
	named = strings.TrimPrefix(named, "./")
	var f *sandbox.File
	for _, want := range []string{named, topDir(files) + named} {
		for i := range files {
			if files[i].Name == want {
				f = &files[i]
				break
			}
		}
		if f != nil {
			break
		}
	}
	if f == nil {
		var names []string
		for _, f := range files {
			if k := ClassifyFile(f.Name, f.Data); k == ELF || k == Script {
				names = append(names, f.Name)
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return "", "", fmt.Errorf("%w: no file %q in the submission, which holds no ELF executable or #! script", ErrEntryNotFound, named)
		}
		return "", "", fmt.Errorf("%w: no file %q in the submission (its ELF executables and #! scripts: %s)", ErrEntryNotFound, named, list(names))
	}
	switch k := ClassifyFile(f.Name, f.Data); k {
	case ELF, Script:
		return f.Name, fmt.Sprintf("%s was named as the entry point", f.Name), nil
	case PE:
		return "", "", fmt.Errorf("%s is a Windows executable; build the bot for Linux x86-64", f.Name)
	case MachO:
		return "", "", fmt.Errorf("%s is a macOS executable; build the bot for Linux x86-64", f.Name)
	default:
		return "", "", &notProgramError{name: f.Name, kind: k}
	}
}

// notProgramError is a named entry point that is not a program; LoadWith
// builds it when it is a source file.
type notProgramError struct {
	name string
	kind Kind
}

func (e *notProgramError) Error() string {
	return fmt.Sprintf("%s was named as the entry point, but it is %s: name an ELF executable or a script with a #! line", e.name, describe(e.kind))
}

// describe names a kind for a sentence.
func describe(k Kind) string {
	switch k {
	case "":
		return "neither an ELF executable nor a script starting with #!"
	case SharedLibrary:
		return "a shared library"
	case ObjectFile:
		return "an ELF object file, not an executable"
	}
	return "a " + string(k)
}

// topDir is the one folder, with its slash, that holds every file; "" when
// there is none.
func topDir(files []sandbox.File) string {
	dir := ""
	for i, f := range files {
		d, _, ok := strings.Cut(f.Name, "/")
		if !ok || (i > 0 && d != dir) {
			return ""
		}
		dir = d
	}
	if dir == "" {
		return ""
	}
	return dir + "/"
}

// list joins names for a message, the first few only.
func list(names []string) string {
	const most = 5
	if len(names) > most {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
	}
	return strings.Join(names, ", ")
}

// without is the names of all that are not in some.
func without(all, some []string) []string {
	var out []string
	for _, n := range all {
		if !slices.Contains(some, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ErrNoExecutable is a submission that holds no executable at all.
var ErrNoExecutable = errors.New("no executable found: expected one ELF executable built for Linux x86-64 (or one script starting with #!)")

// ErrEntryNotFound is an entry point named (to PickEntry or LoadWith) that
// is not a file of the submission.
var ErrEntryNotFound = errors.New("entry point not found")

// PickSource finds the one source file of a submission without an
// executable: the one at the top, else the only one anywhere.
func PickSource(files []sandbox.File, isSource func(string) bool) (string, error) {
	var top, all []string
	for _, f := range files {
		if !isSource(f.Name) {
			continue
		}
		all = append(all, f.Name)
		if !strings.Contains(f.Name, "/") {
			top = append(top, f.Name)
		}
	}
	sort.Strings(top)
	switch {
	case len(top) == 1:
		return top[0], nil
	case len(top) > 1:
		return "", fmt.Errorf("no executable and %d source files at the top (%s): hand in one source file, or one executable", len(top), strings.Join(top, ", "))
	case len(all) == 1:
		return all[0], nil
	}
	return "", ErrNoExecutable
}

// Extract writes files into dir, which must be empty or missing, through an
// os.Root so that no name can land outside it.
func Extract(files []sandbox.File, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		if err := CheckName(f.Name); err != nil {
			return err
		}
		if d := path.Dir(f.Name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return refuse(KindExtract, f.Name, "cannot be extracted: %v", err)
			}
		}
		out, err := root.OpenFile(f.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.Mode.Perm()|0o600)
		if err != nil {
			return refuse(KindExtract, f.Name, "cannot be extracted: %v", err)
		}
		_, err = out.Write(f.Data)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

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
