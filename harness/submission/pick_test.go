package submission

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arenabots/arena/internal/ziptest"
	"github.com/arenabots/arena/sandbox"
)

// elfFile is an ELF64 x86-64 file with only what ClassifyFile reads: the
// type, the entry point, a PT_INTERP when interp, and a PT_DYNAMIC holding
// dyn when it is not nil.
func elfFile(typ elf.Type, entry uint64, interp bool, dyn map[elf.DynTag]uint64) []byte {
	le := binary.LittleEndian
	var phnum uint16
	if interp {
		phnum++
	}
	if dyn != nil {
		phnum++
	}
	const ehsize, phentsize = 64, 56
	interpPath := []byte("/lib64/ld-linux-x86-64.so.2\x00")
	interpOff := uint64(ehsize + phentsize*int(phnum))
	dynOff := interpOff + uint64(len(interpPath))
	var dynData []byte
	for tag, val := range dyn {
		dynData = le.AppendUint64(dynData, uint64(tag))
		dynData = le.AppendUint64(dynData, val)
	}
	dynData = append(dynData, make([]byte, 16)...) // DT_NULL

	h := make([]byte, ehsize)
	copy(h, "\x7fELF")
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(h[16:], uint16(typ))
	le.PutUint16(h[18:], uint16(elf.EM_X86_64))
	le.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(h[24:], entry)
	le.PutUint64(h[32:], ehsize) // e_phoff
	le.PutUint16(h[52:], ehsize)
	le.PutUint16(h[54:], phentsize)
	le.PutUint16(h[56:], phnum)
	prog := func(typ elf.ProgType, off, size uint64) []byte {
		p := make([]byte, phentsize)
		le.PutUint32(p[0:], uint32(typ))
		le.PutUint32(p[4:], uint32(elf.PF_R))
		le.PutUint64(p[8:], off)   // p_offset
		le.PutUint64(p[16:], off)  // p_vaddr
		le.PutUint64(p[24:], off)  // p_paddr
		le.PutUint64(p[32:], size) // p_filesz
		le.PutUint64(p[40:], size) // p_memsz
		le.PutUint64(p[48:], 8)
		return p
	}
	if interp {
		h = append(h, prog(elf.PT_INTERP, interpOff, uint64(len(interpPath)))...)
	}
	if dyn != nil {
		h = append(h, prog(elf.PT_DYNAMIC, dynOff, uint64(len(dynData)))...)
	}
	h = append(h, interpPath...)
	return append(h, dynData...)
}

var (
	pieFlags = map[elf.DynTag]uint64{elf.DT_FLAGS_1: uint64(elf.DF_1_PIE | elf.DF_1_NOW)}
	// A PIE executable, as gcc links one, and a static-pie one.
	pie       = elfFile(elf.ET_DYN, 0x1050, true, pieFlags)
	staticPie = elfFile(elf.ET_DYN, 0x95f0, false, pieFlags)
	// The same from a linker that does not mark PIEs.
	oldPie       = elfFile(elf.ET_DYN, 0x1050, true, map[elf.DynTag]uint64{elf.DT_FLAGS_1: uint64(elf.DF_1_NOW)})
	oldStaticPie = elfFile(elf.ET_DYN, 0x95f0, false, map[elf.DynTag]uint64{})
	static       = elfFile(elf.ET_EXEC, 0x401530, false, nil)
	// A Python extension module: no SONAME, no entry point, no loader.
	pyModule = elfFile(elf.ET_DYN, 0, false, map[elf.DynTag]uint64{elf.DT_NEEDED: 1})
	// A library with a SONAME and an entry point, as libc.so.6 has.
	library = elfFile(elf.ET_DYN, 0x27410, true, map[elf.DynTag]uint64{elf.DT_SONAME: 1})
	object  = elfFile(elf.ET_REL, 0, false, nil)
)

func TestClassifyFileTellsProgramsFromLibraries(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want Kind
	}{
		{"bot", static, ELF},
		{"bot", pie, ELF},
		{"bot", staticPie, ELF},
		{"bot", oldPie, ELF},
		{"bot", oldStaticPie, ELF},
		{"engine.so", pie, ELF}, // DF_1_PIE is the linker's word
		{"engine.so", oldPie, SharedLibrary},
		{"_ext.cpython-312-x86_64-linux-gnu.so", pyModule, SharedLibrary},
		{"ext", pyModule, SharedLibrary},
		{"libc.so.6", library, SharedLibrary},
		{"libc", library, SharedLibrary},
		{"libfoo.so.1.2", oldStaticPie, SharedLibrary},
		{"main.o", object, ObjectFile},
		{"stub", elfStub, ELF},
		{"stub.so", elfStub, ELF}, // unreadable headers: the format check says what is wrong
		{"truncated", pie[:70], ELF},
		{"bot.py", script, Script},
		{"bot.exe", pe, PE},
		{"README", []byte("hello"), ""},
	}
	for _, c := range cases {
		if got := ClassifyFile(c.name, c.data); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestClassifyFileOnWhatGccLinks checks the rule on real files, when gcc can
// build them.
func TestClassifyFileOnWhatGccLinks(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "lib.c"), []byte("int f(void){return 1;}\n"), 0o644)
	cases := []struct {
		out  string
		args []string
		want Kind
	}{
		{"pie", []string{"-pie", "-fPIE", "main.c"}, ELF},
		{"nopie", []string{"-no-pie", "main.c"}, ELF},
		{"static", []string{"-static", "main.c"}, ELF},
		{"static-pie", []string{"-static-pie", "main.c"}, ELF},
		{"libf.so", []string{"-shared", "-fPIC", "lib.c"}, SharedLibrary},
		{"ext", []string{"-shared", "-fPIC", "lib.c"}, SharedLibrary},
		{"named", []string{"-shared", "-fPIC", "-Wl,-soname,libf.so.1", "lib.c"}, SharedLibrary},
		{"main.o", []string{"-c", "main.c"}, ObjectFile},
	}
	for _, c := range cases {
		t.Run(c.out, func(t *testing.T) {
			cmd := exec.Command("gcc", append(c.args, "-o", c.out)...)
			cmd.Dir = dir
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("gcc cannot link it here: %v\n%s", err, msg)
			}
			data, err := os.ReadFile(filepath.Join(dir, c.out))
			if err != nil {
				t.Fatal(err)
			}
			if got := ClassifyFile(c.out, data); got != c.want {
				t.Fatalf("%q, want %q", got, c.want)
			}
		})
	}
}

func file(name string, data []byte, mode os.FileMode) sandbox.File {
	return sandbox.File{Name: name, Data: data, Mode: mode}
}

func TestPickEntry(t *testing.T) {
	cases := []struct {
		name  string
		files []sandbox.File
		named string
		entry string
		why   string // part of why, or of the error when entry is ""
	}{
		{"a script that starts an engine without the run bit",
			[]sandbox.File{file("bot.py", script, 0o755), file("engine", static, 0o644)}, "",
			"bot.py", "bot.py is the only script with a #! line and the run bit set, and no ELF executable has the run bit; without the run bit, not considered: engine"},
		{"an ELF data file without the run bit",
			[]sandbox.File{file("bot.sh", script, 0o755), file("data/book.bin", elfStub, 0o644), file("data/eval.bin", elfStub, 0o600)}, "",
			"bot.sh", "the run bit"},
		{"a script and an engine both with the run bit: the ELF, saying how to run the script",
			[]sandbox.File{file("bot.py", script, 0o755), file("engine", static, 0o755)}, "",
			"engine", "engine is the only ELF executable with the run bit set (an ELF executable comes before the script bot.py; to run a script, call it run)"},
		{"a script called run",
			[]sandbox.File{file("run", script, 0o755), file("engine", static, 0o755), file("other", pie, 0o755)}, "",
			"run", "run is the entry point by its name (a file called run at the top of the submission)"},
		{"an ELF called run, without the run bit",
			[]sandbox.File{file("run", pie, 0o644), file("helper.sh", script, 0o755)}, "",
			"run", "by its name"},
		{"run inside the one folder of a ZIP",
			[]sandbox.File{file("team/run", script, 0o755), file("team/engine", static, 0o755), file("team/README.md", []byte("hi"), 0o644)}, "",
			"team/run", "team/run is the entry point by its name"},
		{"run deeper down is no entry point",
			[]sandbox.File{file("tools/run", script, 0o755), file("bot", static, 0o755)}, "",
			"bot", "only ELF executable"},
		{"run that is no program",
			[]sandbox.File{file("run", []byte("python3 bot.py\n"), 0o755), file("bot", static, 0o755)}, "",
			"", "run is the entry point by its name, but it is neither an ELF executable nor a script starting with #!"},
		{"a Python module beside the bot",
			[]sandbox.File{file("bot.py", script, 0o755), file("_fast.cpython-312-x86_64-linux-gnu.so", pyModule, 0o755)}, "",
			"bot.py", "never the entry point: _fast.cpython-312-x86_64-linux-gnu.so (a shared library)"},
		{"a library beside a binary",
			[]sandbox.File{file("bot", pie, 0o755), file("lib/libstuff.so.1", library, 0o755), file("build/main.o", object, 0o644)}, "",
			"bot", "bot is the only ELF executable with the run bit set; never the entry point: build/main.o (an ELF object file, not an executable), lib/libstuff.so.1 (a shared library)"},
		{"a static-pie beside a library",
			[]sandbox.File{file("bot", staticPie, 0o755), file("libx.so", library, 0o755)}, "",
			"bot", "only ELF executable"},
		{"only a library",
			[]sandbox.File{file("libbot.so", pyModule, 0o755), file("bot.c", []byte("int main(){}"), 0o644)}, "",
			"", "no executable found: expected one ELF executable built for Linux x86-64 (or one script starting with #!); not programs: libbot.so (a shared library)"},
		{"no file with the run bit (a ZIP made on Windows)",
			[]sandbox.File{file("bot.py", script, 0o644), file("engine", static, 0o644)}, "",
			"engine", "engine is the only ELF executable (no ELF executable or script has the run bit set)"},
		{"two ELF executables with the run bit",
			[]sandbox.File{file("b", static, 0o755), file("a", pie, 0o700), file("c", static, 0o644)}, "",
			"", "2 ELF executables with the run bit set (a, b): keep exactly one, or call the one that runs \"run\""},
		{"two scripts with the run bit",
			[]sandbox.File{file("a.py", script, 0o755), file("b.sh", script, 0o755), file("engine", static, 0o644)}, "",
			"", "no ELF executable with the run bit set and 2 scripts with #! lines and the run bit (a.py, b.sh)"},
		{"named",
			[]sandbox.File{file("bot.py", script, 0o755), file("engine", static, 0o755), file("other", static, 0o755)}, "bot.py",
			"bot.py", "bot.py was named as the entry point"},
		{"named over run",
			[]sandbox.File{file("run", script, 0o755), file("engine", static, 0o755)}, "./engine",
			"engine", "engine was named as the entry point"},
		{"named inside the one folder",
			[]sandbox.File{file("team/bot.py", script, 0o755), file("team/engine", static, 0o755)}, "bot.py",
			"team/bot.py", "team/bot.py was named as the entry point"},
		{"named, but missing",
			[]sandbox.File{file("bot.py", script, 0o755), file("engine", static, 0o755), file("lib.so", library, 0o755)}, "bot",
			"", `entry point not found: no file "bot" in the submission (its ELF executables and #! scripts: bot.py, engine)`},
		{"named, a library",
			[]sandbox.File{file("bot.py", script, 0o755), file("lib.so", library, 0o755)}, "lib.so",
			"", "lib.so was named as the entry point, but it is a shared library"},
		{"named, a Windows executable",
			[]sandbox.File{file("bot.exe", pe, 0o755)}, "bot.exe",
			"", "bot.exe is a Windows executable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entry, why, err := PickEntry(c.files, c.named)
			if c.entry == "" {
				if err == nil || !strings.Contains(err.Error(), c.why) {
					t.Fatalf("picked %q (%s), error %v; want an error with %q", entry, why, err, c.why)
				}
				return
			}
			if err != nil || entry != c.entry || !strings.Contains(why, c.why) {
				t.Fatalf("picked %q (%s), error %v; want %q with %q", entry, why, err, c.entry, c.why)
			}
			if c.named == "" {
				if e, w, err := PickExecutable(c.files); e != entry || w != why || err != nil {
					t.Fatalf("PickExecutable: %q %q %v", e, w, err)
				}
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		_, _, err := PickEntry([]sandbox.File{file("bot", static, 0o755)}, "nope")
		if !errors.Is(err, ErrEntryNotFound) {
			t.Fatalf("%v is not ErrEntryNotFound", err)
		}
		_, _, err = PickEntry([]sandbox.File{file("lib.so", library, 0o755)}, "")
		if !errors.Is(err, ErrNoExecutable) {
			t.Fatalf("%v is not ErrNoExecutable", err)
		}
	})
}

func TestLoadWithAnEntryPoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "team")
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "bot.py"), script, 0o755)
	os.WriteFile(filepath.Join(dir, "engine"), static, 0o755)
	os.WriteFile(filepath.Join(dir, "lib", "_eval.so"), pyModule, 0o755)
	lim := DefaultLimits()

	b, err := Load(dir, LoadOptions{Limits: lim})
	if err != nil || b.Program.Entry != "engine" || !strings.Contains(b.Choice, "call it run") {
		t.Fatalf("picked %+v, %v", b, err)
	}
	b, err = Load(dir, LoadOptions{Limits: lim, Entry: "bot.py"})
	if err != nil || b.Program.Entry != "bot.py" || b.Choice != "bot.py was named as the entry point" || b.SHA256 != Sum(script) {
		t.Fatalf("named bot.py: %+v, %v", b, err)
	}
	_, err = Load(dir, LoadOptions{Limits: lim, Entry: "main.py"})
	if !errors.Is(err, ErrEntryNotFound) || !strings.HasPrefix(err.Error(), dir+": entry point not found: no file \"main.py\"") {
		t.Fatalf("a missing entry point: %v", err)
	}
	_, err = Load(dir, LoadOptions{Limits: lim, Entry: "bot.py", Packager: testPackager{}})
	if err == nil || !strings.Contains(err.Error(), "cannot be named") {
		t.Fatalf("an entry point for a packaged game: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\nexec python3 \"$(dirname \"$0\")/bot.py\"\n"), 0o755)
	b, err = Load(dir, LoadOptions{Limits: lim})
	if err != nil || b.Program.Entry != "run" || !strings.Contains(b.Choice, "by its name") {
		t.Fatalf("with run: %+v, %v", b, err)
	}

	// A Python bot without a #! line and with a compiled module is source.
	py := filepath.Join(t.TempDir(), "py")
	os.Mkdir(py, 0o755)
	os.WriteFile(filepath.Join(py, "bot.py"), []byte("print('e2e4')\n"), 0o644)
	os.WriteFile(filepath.Join(py, "_eval.so"), pyModule, 0o755)
	isPy := func(name string) bool { return strings.HasSuffix(name, ".py") }
	b, err = Load(py, LoadOptions{Limits: lim, IsSource: isPy})
	if err != nil || b.SourceEntry != "bot.py" || b.Program.Entry != "" {
		t.Fatalf("a Python bot with a module: %+v, %v", b, err)
	}
	// A named source file is built.
	os.WriteFile(filepath.Join(py, "helper.py"), []byte("x = 1\n"), 0o644)
	b, err = Load(py, LoadOptions{Limits: lim, IsSource: isPy, Entry: "bot.py"})
	if err != nil || b.SourceEntry != "bot.py" || b.Choice != "bot.py was named as the entry point: the source to build" {
		t.Fatalf("a named source file: %+v, %v", b, err)
	}
	if _, err := Load(py, LoadOptions{Limits: lim, Entry: "bot.py"}); err == nil || !strings.Contains(err.Error(), "neither an ELF executable nor a script") {
		t.Fatalf("a named source file without a builder: %v", err)
	}
}

type testPackager struct{}

func (testPackager) Package(map[string][]byte) (map[string][]byte, string, error) {
	return map[string][]byte{"adapter.py": script}, "adapter.py", nil
}
func (testPackager) Submission() string { return "one module" }
func (testPackager) Needs() []string    { return nil }

// A script written on Windows runs as its author meant: its CRLF line
// endings and a byte order mark before its #! line are read away, whether
// it comes alone or in a ZIP made without Unix modes; the choice says so,
// and the hash of what runs is the hash of what was run.
func TestAScriptWrittenOnWindowsRuns(t *testing.T) {
	unix := []byte("#!/usr/bin/env python3\nimport sys\nprint('hi')\n")
	crlf := bytes.ReplaceAll(unix, []byte("\n"), []byte("\r\n"))
	withBOM := append([]byte{0xEF, 0xBB, 0xBF}, unix...)
	for name, c := range map[string]struct {
		data []byte
		mode fs.FileMode
		note string
	}{
		"CRLF, run bit":     {crlf, 0o755, "Windows line endings"},
		"CRLF, no run bit":  {crlf, 0o644, "Windows line endings"},
		"a byte order mark": {withBOM, 0o644, "byte order mark"},
		"both":              {append([]byte{0xEF, 0xBB, 0xBF}, crlf...), 0o644, "byte order mark before its #! line was dropped, and its Windows line endings"},
	} {
		t.Run(name, func(t *testing.T) {
			files := []sandbox.File{{Name: "bot.py", Data: bytes.Clone(c.data), Mode: c.mode}, {Name: "README.md", Data: []byte("# bot\r\n")}}
			entry, why, err := PickExecutable(files)
			if err != nil || entry != "bot.py" {
				t.Fatalf("picked %q: %v", entry, err)
			}
			if !bytes.Equal(files[0].Data, unix) {
				t.Errorf("the script runs as %q, want %q", files[0].Data, unix)
			}
			if !strings.Contains(why, c.note) || !strings.Contains(why, "written on Windows") {
				t.Errorf("the choice says %q, want it to say %q", why, c.note)
			}
			if !bytes.Equal(files[1].Data, []byte("# bot\r\n")) {
				t.Error("a file that does not run was changed")
			}
		})
	}
	// A ZIP made on Windows: no Unix modes at all.
	dir := t.TempDir()
	p := filepath.Join(dir, "bot.zip")
	if err := os.WriteFile(p, ziptest.Bytes(t, ziptest.Entry{Name: "bot.py", Data: crlf, Edit: func(h *zip.FileHeader) { h.CreatorVersion = 0x0014 }}), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Load(p, LoadOptions{Limits: DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	if b.Program.Entry != "bot.py" || b.SHA256 != Sum(unix) || b.SubmissionSHA256 == b.SHA256 || !strings.Contains(b.Choice, "Windows") {
		t.Errorf("a ZIP made on Windows: entry %q, sha256 %.12s (want %.12s, the script as run), choice %q", b.Program.Entry, b.SHA256, Sum(unix), b.Choice)
	}
	// A Unix script is left as it is.
	files := []sandbox.File{{Name: "bot.py", Data: bytes.Clone(unix), Mode: 0o755}}
	if _, why, _ := PickExecutable(files); strings.Contains(why, "Windows") || !bytes.Equal(files[0].Data, unix) {
		t.Errorf("a Unix script was changed: %q", why)
	}
}

func TestShebangIsReadAsLinuxReadsIt(t *testing.T) {
	for line, want := range map[string][2]string{
		"#!/usr/bin/env python3\n":     {"/usr/bin/env", "python3"},
		"#!/usr/bin/env python3\r\n":   {"/usr/bin/env", "python3\r"},
		"#! /usr/bin/python3 -u \n":    {"/usr/bin/python3", "-u"},
		"#!/usr/bin/env python3 -u\n":  {"/usr/bin/env", "python3 -u"},
		"#!/usr/bin/env\tpython3 -u\n": {"/usr/bin/env", "python3 -u"},
		"#!/bin/sh":                    {"/bin/sh", ""},
		"#!\n":                         {"", ""},
	} {
		interp, arg, ok := Shebang([]byte(line))
		if !ok || interp != want[0] || arg != want[1] {
			t.Errorf("%q: %q %q, want %q %q", line, interp, arg, want[0], want[1])
		}
	}
}
