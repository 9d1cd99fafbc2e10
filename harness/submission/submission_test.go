package submission

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/internal/ziptest"
)

var (
	elfStub = append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...)
	script  = []byte("#!/usr/bin/env python3\nprint('hi')\n")
	pe      = append([]byte("MZ\x90\x00"), make([]byte, 64)...)
)

type entry = ziptest.Entry

func makeZip(t *testing.T, entries ...entry) []byte { return ziptest.Bytes(t, entries...) }

func TestReadZipRefusesHostileArchives(t *testing.T) {
	lim := DefaultLimits()
	cases := []struct {
		name    string
		zip     []byte
		kind    ErrorKind
		entry   string
		message string
	}{
		{"zip slip", makeZip(t, entry{Name: "../evil", Data: elfStub}), KindPathEscape, "../evil", `escapes the archive with ".."`},
		{"nested zip slip", makeZip(t, entry{Name: "bot/../../evil", Data: elfStub}), KindPathEscape, "bot/../../evil", `".."`},
		{"absolute path", makeZip(t, entry{Name: "/etc/cron.d/x", Data: elfStub}), KindPathEscape, "/etc/cron.d/x", "absolute path"},
		{"windows drive", makeZip(t, entry{Name: "C:/x", Data: elfStub}), KindPathEscape, "C:/x", "absolute path"},
		{"backslash", makeZip(t, entry{Name: `..\evil`, Data: elfStub}), KindBadName, `..\evil`, "backslash"},
		{"symlink", makeZip(t, entry{Name: "bot", Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink | 0o777}), KindSymlink, "bot", "symbolic links"},
		{"duplicate", makeZip(t, entry{Name: "bot", Data: elfStub}, entry{Name: "bot", Data: script}), KindDuplicate, "bot", "duplicate entry"},
		{"encrypted", makeZip(t, entry{Name: "bot", Data: elfStub, Edit: func(h *zip.FileHeader) { h.Flags |= 1 }}), KindEncrypted, "bot", "encrypted"},
		{"compression bomb", makeZip(t, entry{Name: "zeros", Data: make([]byte, 50<<20)}), KindBomb, "zeros", "compression bomb"},
		{"too big to inflate", makeZip(t, entry{Name: "big", Data: noise(16 << 20)}), KindTooLarge, "big", "limit per file"},
		// 1 MiB of zeros compresses about 1000:1, however small: an entry's
		// ratio counts whatever its size.
		{"a bomb of exactly 1 MiB", makeZip(t, entry{Name: "zeros", Data: make([]byte, 1<<20)}), KindBomb, "zeros", "compresses"},
		{"a name too long for a file system", makeZip(t, entry{Name: strings.Repeat("n", 300) + ".py", Data: script}), KindBadName, strings.Repeat("n", 64) + "...", "a file or folder name of 303 bytes"},
		{"a path too long", makeZip(t, entry{Name: strings.Repeat("d/", 600) + "x", Data: script}), KindBadName, strings.Repeat("d/", 32) + "...", "the name is 1201 bytes"},
	}
	small := lim
	small.MaxFileBytes = 8 << 20
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadZip(c.zip, small)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("want a refusal, got %v", err)
			}
			if se.Kind != c.kind || se.Entry != c.entry || !strings.Contains(se.Rule, c.message) {
				t.Fatalf("refusal %q (kind %q, entry %q), want kind %q, entry %q and %q", err, se.Kind, se.Entry, c.kind, c.entry, c.message)
			}
		})
	}
}

func noise(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(b)
	return b
}

func TestReadZipRefusesAHeaderThatLies(t *testing.T) {
	// An entry whose header declares 10 bytes but that inflates to 1 MiB.
	var raw bytes.Buffer
	fw := zip.NewWriter(&raw)
	w, _ := fw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
	w.Write(bytes.Repeat([]byte("a"), 1<<20))
	fw.Close()
	data := raw.Bytes()
	// Patch the central directory's uncompressed size of "x" to 10.
	cd := bytes.LastIndex(data, []byte("PK\x01\x02"))
	data[cd+24], data[cd+25], data[cd+26], data[cd+27] = 10, 0, 0, 0
	_, err := ReadZip(data, DefaultLimits())
	if err == nil || !strings.HasPrefix(err.Error(), "x: ") {
		t.Fatalf("a lying header was accepted: %v", err)
	}
}

func TestLoadPicksTheExecutable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o755)
		return p
	}
	good := write("team.zip", makeZip(t,
		entry{Name: "team/bot", Data: elfStub, Mode: 0o755},
		entry{Name: "team/src/main.cpp", Data: []byte("int main(){}")},
		entry{Name: "team/README.md", Data: []byte("# bot")},
		entry{Name: "__MACOSX/team/._bot", Data: elfStub},
	))
	b, err := Load(good, LoadOptions{Limits: DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	if b.Program.Entry != "team/bot" || b.Name != "team" || len(b.Program.Files) != 3 || b.SHA256 == b.SubmissionSHA256 {
		t.Fatalf("%+v", b)
	}
	cases := []struct {
		name, want string
		zip        []byte
	}{
		{"two ELF files", "2 ELF executables (a, b)", makeZip(t, entry{Name: "a", Data: elfStub}, entry{Name: "b", Data: elfStub})},
		{"a Windows executable", "bot.exe is a Windows executable; build the bot for Linux x86-64", makeZip(t, entry{Name: "bot.exe", Data: pe})},
		{"nothing executable", "no executable found", makeZip(t, entry{Name: "README.md", Data: []byte("hi")})},
		{"two scripts", "2 scripts", makeZip(t, entry{Name: "a.py", Data: script}, entry{Name: "b.py", Data: script})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(c.name+".zip", c.zip), LoadOptions{Limits: DefaultLimits()})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	t.Run("a script when there is no ELF", func(t *testing.T) {
		b, err := Load(write("py.zip", makeZip(t, entry{Name: "bot.py", Data: script, Mode: 0o755}, entry{Name: "lib.py", Data: []byte("x=1")})), LoadOptions{Limits: DefaultLimits()})
		if err != nil || b.Program.Entry != "bot.py" {
			t.Fatalf("%+v %v", b, err)
		}
	})
	t.Run("a bare executable", func(t *testing.T) {
		b, err := Load(write("solo", elfStub), LoadOptions{Limits: DefaultLimits()})
		if err != nil || b.Program.Entry != "solo" || b.SHA256 != b.SubmissionSHA256 {
			t.Fatalf("%+v %v", b, err)
		}
	})
	t.Run("a directory with a symlink is refused", func(t *testing.T) {
		d := filepath.Join(dir, "linked")
		os.Mkdir(d, 0o755)
		os.WriteFile(filepath.Join(d, "bot"), elfStub, 0o755)
		os.Symlink("/etc/passwd", filepath.Join(d, "passwd"))
		if _, err := Load(d, LoadOptions{Limits: DefaultLimits()}); err == nil || !strings.Contains(err.Error(), "only regular files") {
			t.Fatalf("error %v", err)
		}
	})
}

// splitBomb is a ZIP of n entries of size bytes of zeros each: every one
// under the ratio floor, the whole a bomb.
func splitBomb(t *testing.T, n, size int) []byte {
	t.Helper()
	var entries []entry
	for i := range n {
		entries = append(entries, entry{Name: fmt.Sprintf("part-%03d", i), Data: make([]byte, size)})
	}
	return makeZip(t, entries...)
}

// Entries too small for their own ratio to count still count as a whole
// (each entry's headers keep tiny ones near 25:1: at 200:1 a bomb needs
// entries large enough to be caught one by one, so this is seen at 10:1).
func TestABombSplitInSmallEntriesIsOneAsAWhole(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxRatio = 10
	_, err := ReadZip(splitBomb(t, 64, 3<<10), lim)
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindBomb || !strings.Contains(se.Rule, "as a whole") {
		t.Fatalf("64 entries of 3 KiB of zeros at a 10:1 limit: %v", err)
	}
}

func TestASmallEntryThatCompressesWellIsNoBomb(t *testing.T) {
	z := makeZip(t, entry{Name: "bot", Data: script}, entry{Name: "table.bin", Data: make([]byte, 3<<10)}, entry{Name: "main.py", Data: noise(64 << 10)})
	if _, err := ReadZip(z, DefaultLimits()); err != nil {
		t.Fatalf("a 3 KiB file of zeros beside the code: %v", err)
	}
}
