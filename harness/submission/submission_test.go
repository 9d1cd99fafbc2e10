package submission

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	elf    = append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...)
	script = []byte("#!/usr/bin/env python3\nprint('hi')\n")
	pe     = append([]byte("MZ\x90\x00"), make([]byte, 64)...)
)

type entry struct {
	name string
	data []byte
	mode fs.FileMode
	edit func(*zip.FileHeader)
}

func makeZip(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		if e.edit != nil {
			e.edit(h)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadZipRefusesHostileArchives(t *testing.T) {
	lim := DefaultLimits()
	cases := []struct {
		name    string
		zip     []byte
		entry   string
		message string
	}{
		{"zip slip", makeZip(t, entry{name: "../evil", data: elf}), "../evil", `escapes the archive with ".."`},
		{"nested zip slip", makeZip(t, entry{name: "bot/../../evil", data: elf}), "bot/../../evil", `".."`},
		{"absolute path", makeZip(t, entry{name: "/etc/cron.d/x", data: elf}), "/etc/cron.d/x", "absolute path"},
		{"windows drive", makeZip(t, entry{name: "C:/x", data: elf}), "C:/x", "absolute path"},
		{"backslash", makeZip(t, entry{name: `..\evil`, data: elf}), `..\evil`, "backslash"},
		{"symlink", makeZip(t, entry{name: "bot", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777}), "bot", "symbolic links"},
		{"duplicate", makeZip(t, entry{name: "bot", data: elf}, entry{name: "bot", data: script}), "bot", "duplicate entry"},
		{"encrypted", makeZip(t, entry{name: "bot", data: elf, edit: func(h *zip.FileHeader) { h.Flags |= 1 }}), "bot", "encrypted"},
		{"compression bomb", makeZip(t, entry{name: "zeros", data: make([]byte, 50<<20)}), "zeros", "compression bomb"},
		{"too big to inflate", makeZip(t, entry{name: "big", data: noise(16 << 20)}), "big", "limit per file"},
	}
	small := lim
	small.MaxFileBytes = 8 << 20
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadZip(c.zip, small)
			var se *Error
			if err == nil || !errorAs(err, &se) {
				t.Fatalf("want a refusal, got %v", err)
			}
			if se.Entry != c.entry || !strings.Contains(se.Rule, c.message) {
				t.Fatalf("refusal %q (entry %q), want entry %q and %q", err, se.Entry, c.entry, c.message)
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

func errorAs(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
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
		entry{name: "team/bot", data: elf, mode: 0o755},
		entry{name: "team/src/main.cpp", data: []byte("int main(){}")},
		entry{name: "team/README.md", data: []byte("# bot")},
		entry{name: "__MACOSX/team/._bot", data: elf},
	))
	b, err := Load(good, DefaultLimits())
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
		{"two ELF files", "2 ELF executables (a, b)", makeZip(t, entry{name: "a", data: elf}, entry{name: "b", data: elf})},
		{"a Windows executable", "bot.exe is a Windows executable; build the bot for Linux x86-64", makeZip(t, entry{name: "bot.exe", data: pe})},
		{"nothing executable", "no executable found", makeZip(t, entry{name: "README.md", data: []byte("hi")})},
		{"two scripts", "2 scripts", makeZip(t, entry{name: "a.py", data: script}, entry{name: "b.py", data: script})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(c.name+".zip", c.zip), DefaultLimits())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	t.Run("a script when there is no ELF", func(t *testing.T) {
		b, err := Load(write("py.zip", makeZip(t, entry{name: "bot.py", data: script, mode: 0o755}, entry{name: "lib.py", data: []byte("x=1")})), DefaultLimits())
		if err != nil || b.Program.Entry != "bot.py" {
			t.Fatalf("%+v %v", b, err)
		}
	})
	t.Run("a bare executable", func(t *testing.T) {
		b, err := Load(write("solo", elf), DefaultLimits())
		if err != nil || b.Program.Entry != "solo" || b.SHA256 != b.SubmissionSHA256 {
			t.Fatalf("%+v %v", b, err)
		}
	})
	t.Run("a directory with a symlink is refused", func(t *testing.T) {
		d := filepath.Join(dir, "linked")
		os.Mkdir(d, 0o755)
		os.WriteFile(filepath.Join(d, "bot"), elf, 0o755)
		os.Symlink("/etc/passwd", filepath.Join(d, "passwd"))
		if _, err := Load(d, DefaultLimits()); err == nil || !strings.Contains(err.Error(), "only regular files") {
			t.Fatalf("error %v", err)
		}
	})
}
