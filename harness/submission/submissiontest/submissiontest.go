// Package submissiontest builds hostile submissions for tests: at least one
// for every way reading a submission can be refused, as the ZIP, file or
// directory a team could hand in, each with the refusal it must get. The
// reader's tests, its fuzz seeds and the advice of validate use them.
package submissiontest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/gobuild"
	"github.com/arenabots/arena/internal/ziptest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// Limits are the small limits every case is refused under: a few MiB at most
// is built, and the compression-ratio rule (entries over 1 MiB) still applies.
func Limits() submission.Limits {
	return submission.Limits{
		MaxArchiveBytes: 2 << 20,
		MaxTotalBytes:   3 << 19,
		MaxFileBytes:    1 << 20,
		MaxEntries:      4,
		MaxRatio:        200,
	}
}

// Case is one hostile submission.
type Case struct {
	Name string
	// Path is the ZIP, file or directory to hand to submission.ReadAny.
	Path string
	// Zip is the archive's bytes when Path is a ZIP, for ReadZip and fuzz seeds.
	Zip []byte
	// Kind, Entry and Rule are the refusal expected under Limits: Rule is a
	// part of the rule's text.
	Kind  submission.ErrorKind
	Entry string
	Rule  string
}

// ELF is the start of an ELF executable, enough for the reader to pick it.
var ELF = append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...)

// Noise is n incompressible bytes, the same for the same n.
func Noise(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

type entry = ziptest.Entry

// Cases writes every hostile submission into dir and returns them.
func Cases(t testing.TB, dir string) []Case {
	t.Helper()
	var out []Case
	n := 0
	zipCase := func(name string, kind submission.ErrorKind, ent, rule string, data []byte) {
		n++
		p := filepath.Join(dir, fmt.Sprintf("%02d-%s.zip", n, sanitize(name)))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, Case{Name: name, Path: p, Zip: data, Kind: kind, Entry: ent, Rule: rule})
	}
	fileCase := func(name string, kind submission.ErrorKind, file, ent, rule string, data []byte) {
		p := filepath.Join(dir, file)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		c := Case{Name: name, Path: p, Kind: kind, Entry: ent, Rule: rule}
		if bytes.HasPrefix(data, []byte("PK")) {
			c.Zip = data
		}
		out = append(out, c)
	}
	dirCase := func(name string, kind submission.ErrorKind, ent, rule string, build func(d string) error) {
		d := filepath.Join(dir, "dir-"+sanitize(name))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := build(d); err != nil {
			t.Fatal(err)
		}
		out = append(out, Case{Name: name, Path: d, Kind: kind, Entry: ent, Rule: rule})
	}
	z := func(entries ...entry) []byte { return ziptest.Bytes(t, entries...) }
	bot := entry{Name: "bot", Data: ELF, Mode: 0o755}

	// Sizes and counts.
	fileCase("a file over the archive limit", submission.KindTooLarge, "huge.bin", "huge.bin", "the limit is 2097152", Noise(2<<20+1))
	zipCase("an entry over the file limit", submission.KindTooLarge, "big", "limit per file is 1048576", z(bot, entry{Name: "big", Data: Noise(1<<20 + 1)}))
	zipCase("entries over the total limit", submission.KindTooLarge, "b", "inflates to more than 1572864 bytes", z(entry{Name: "a", Data: Noise(800 << 10)}, entry{Name: "b", Data: Noise(800 << 10)}))
	dirCase("a directory over the limits", submission.KindTooLarge, "big", "larger than the limits", func(d string) error {
		return os.WriteFile(filepath.Join(d, "big"), Noise(1<<20+1), 0o644)
	})
	zipCase("too many entries", submission.KindTooManyEntries, "", "5 entries; the limit is 4", z(bot, entry{Name: "a"}, entry{Name: "b"}, entry{Name: "c"}, entry{Name: "d"}))
	dirCase("a directory with too many files", submission.KindTooManyEntries, "e", "more than 4 files", func(d string) error {
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(name), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	zipCase("a compression bomb", submission.KindBomb, "zeros", "a compression bomb", z(entry{Name: "zeros", Data: make([]byte, 2<<20)}))
	// archive/zip itself stops at the declared size and calls the rest a
	// format error, so a lie is refused as corrupt, never inflated.
	zipCase("a header that lies about the size", submission.KindCorrupt, "x", "is corrupt", lyingHeader(t))

	// Names.
	zipCase("zip slip", submission.KindPathEscape, "../evil", `escapes the archive with ".."`, z(entry{Name: "../evil", Data: ELF}))
	zipCase("nested zip slip", submission.KindPathEscape, "bot/../../evil", `".."`, z(entry{Name: "bot/../../evil", Data: ELF}))
	zipCase("an absolute path", submission.KindPathEscape, "/etc/cron.d/x", "absolute path", z(entry{Name: "/etc/cron.d/x", Data: ELF}))
	zipCase("a Windows drive", submission.KindPathEscape, "C:/x", "absolute path", z(entry{Name: "C:/x", Data: ELF}))
	zipCase("a backslash", submission.KindBadName, `..\evil`, "backslash", z(entry{Name: `..\evil`, Data: ELF}))
	zipCase("an empty path element", submission.KindBadName, "a//bot", "empty or '.' element", z(entry{Name: "a//bot", Data: ELF}))
	zipCase("a dot path element", submission.KindBadName, "./bot", "empty or '.' element", z(entry{Name: "./bot", Data: ELF}))
	zipCase("a NUL in a name", submission.KindBadName, "bot\x00.txt", "NUL byte", z(entry{Name: "bot\x00.txt", Data: ELF}))
	zipCase("an empty name", submission.KindBadName, "", "empty name", z(entry{Name: "", Data: ELF}))

	// Entries that are not plain files.
	zipCase("a symlink entry", submission.KindSymlink, "bot", "symbolic links", z(entry{Name: "bot", Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink | 0o777}))
	dirCase("a symlink in a directory", submission.KindSymlink, "passwd", "only regular files", func(d string) error {
		if err := os.WriteFile(filepath.Join(d, "bot"), ELF, 0o755); err != nil {
			return err
		}
		return os.Symlink("/etc/passwd", filepath.Join(d, "passwd"))
	})
	zipCase("a named pipe entry", submission.KindSpecialFile, "fifo", "special files", z(bot, entry{Name: "fifo", Mode: fs.ModeNamedPipe | 0o644}))
	zipCase("a device entry", submission.KindSpecialFile, "sda", "special files", z(bot, entry{Name: "sda", Mode: fs.ModeDevice | 0o644}))
	dirCase("a named pipe in a directory", submission.KindSpecialFile, "fifo", "only regular files", func(d string) error {
		if err := os.WriteFile(filepath.Join(d, "bot"), ELF, 0o755); err != nil {
			return err
		}
		return syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644)
	})
	zipCase("an encrypted entry", submission.KindEncrypted, "bot", "encrypted", z(entry{Name: "bot", Data: ELF, Edit: func(h *zip.FileHeader) { h.Flags |= 1 }}))
	zipCase("an unknown compression method", submission.KindCompression, "bot", "compression method 99", method99(t))
	zipCase("a duplicate entry", submission.KindDuplicate, "bot", "duplicate entry (also bot)", z(bot, entry{Name: "bot", Data: []byte("#!/bin/sh\n")}))
	zipCase("a file and a directory of one name", submission.KindDuplicate, "bot/", "duplicate entry (also bot)", z(bot, entry{Name: "bot/"}))

	// Archives that cannot be read.
	fileCase("not a ZIP after all", submission.KindNotZip, "garbage.zip", "", "not a readable ZIP archive", append([]byte("PK\x03\x04"), Noise(100)...))
	zipCase("a checksum mismatch", submission.KindCorrupt, "bot", "is corrupt", badChecksum(t))
	zipCase("a broken local header", submission.KindCorrupt, "bot", "cannot be read", badLocalHeader(t))
	zipCase("an empty ZIP", submission.KindEmpty, "", "holds no files", z())
	zipCase("only archiver debris", submission.KindEmpty, "", "holds no files", z(entry{Name: "__MACOSX/._bot", Data: ELF}, entry{Name: ".DS_Store", Data: []byte("x")}))
	return out
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// lyingHeader is an entry whose central directory declares 10 bytes but that
// inflates to 1 MiB.
func lyingHeader(t testing.TB) []byte {
	var raw bytes.Buffer
	zw := zip.NewWriter(&raw)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.Repeat([]byte("a"), 1<<20))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := raw.Bytes()
	cd := bytes.LastIndex(data, []byte("PK\x01\x02"))
	data[cd+24], data[cd+25], data[cd+26], data[cd+27] = 10, 0, 0, 0
	return data
}

// method99 is a stored entry whose headers name compression method 99.
func method99(t testing.TB) []byte {
	var raw bytes.Buffer
	zw := zip.NewWriter(&raw)
	zw.RegisterCompressor(99, func(w io.Writer) (io.WriteCloser, error) { return nopCloser{w}, nil })
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "bot", Method: 99})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(ELF)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return raw.Bytes()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// stored is two stored (uncompressed) entries, README and bot, so that the
// archive starts as a ZIP even when bot's headers are broken.
func stored(t testing.TB) []byte {
	store := func(h *zip.FileHeader) { h.Method = zip.Store }
	return ziptest.Bytes(t, entry{Name: "README", Data: []byte("# bot\n"), Edit: store}, entry{Name: "bot", Data: ELF, Mode: 0o755, Edit: store})
}

// badChecksum is a stored entry with one byte of its content changed.
func badChecksum(t testing.TB) []byte {
	data := stored(t)
	i := bytes.Index(data, ELF)
	if i < 0 {
		t.Fatal("stored content not found")
	}
	data[i+10] ^= 0xff
	return data
}

// badLocalHeader is a stored entry whose local header signature is broken.
func badLocalHeader(t testing.TB) []byte {
	data := stored(t)
	i := bytes.LastIndex(data, []byte("PK\x03\x04"))
	if i <= 0 {
		t.Fatal("no second local header")
	}
	data[i+3] = 0x05 // PK\x03\x04 -> PK\x03\x05
	return data
}

// Fixture is the Go program pkg (a module path such as
// "./internal/testbots/linefixture"), built static, handed in as the
// executable name: fixture bots read their mode from the name they run
// under.
func Fixture(tb testing.TB, pkg, name string) *submission.Bot {
	tb.Helper()
	data, err := os.ReadFile(gobuild.MustStatic(tb, pkg))
	if err != nil {
		tb.Fatal(err)
	}
	return &submission.Bot{Name: name, SHA256: submission.Sum(data), Source: name,
		Program: sandbox.Program{Name: name, Entry: name, Files: []sandbox.File{{Name: name, Data: data, Mode: 0o755}}}}
}

// Example is the example bot at file (a path from the module's root, such
// as "examples/checkers/random_bot.py") handed in as name, loaded for game
// g as a submission of that name would be.
func Example(tb testing.TB, g rules.Game, file, name string) *submission.Bot {
	tb.Helper()
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			break
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
		} else {
			err = fmt.Errorf("no go.mod above the test's directory")
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	pack, _ := g.(rules.Packager)
	b, err := submission.Load(p, submission.LoadOptions{Limits: submission.DefaultLimits(), Packager: pack})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
