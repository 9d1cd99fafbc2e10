package submission

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/arenabots/arena/sandbox"
)

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
