package validate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFactsReadsVersions(t *testing.T) {
	t.Parallel()
	f := parseFacts([]byte("glibc=2.41\nlib=libc.so.6\ncmd=python3\ncmd=/usr/bin/python3\nver=python3=3.13.5\n" +
		"cmd=python3-numpy\nver=python3-numpy=2.2.4\ncmd=python3-tabulate\nver=python3-tabulate=\nver=broken\n=x\n"))
	if f.Glibc != "2.41" || !f.Libraries["libc.so.6"] || !f.HasCommand("/usr/bin/python3") || !f.HasCommand("python3-numpy") || f.HasCommand("python3-pandas") {
		t.Fatalf("%+v", f)
	}
	want := map[string]string{"python3": "3.13.5", "python3-numpy": "2.2.4", "python3-tabulate": ""}
	if len(f.Versions) != len(want) {
		t.Fatalf("versions %v, want %v", f.Versions, want)
	}
	for k, v := range want {
		if got, ok := f.Versions[k]; !ok || got != v {
			t.Errorf("version of %s: %q, want %q", k, got, v)
		}
	}
	f = parseFacts([]byte("glibc=2.41\nos=Debian GNU/Linux 13 (trixie)\nlanglib=.py=the standard library of Python 3.13, numpy 2.2.4\nlanglib=.c=the C standard library of glibc 2.41 and libm (-lm); no JSON library\nlanglib=.x=\n"))
	if f.OS != "Debian GNU/Linux 13 (trixie)" || len(f.LanguageLibraries) != 2 || !strings.Contains(f.LanguageLibraries[".py"], "numpy 2.2.4") || !strings.Contains(f.LanguageLibraries[".c"], "no JSON library") {
		t.Errorf("the image's OS and its languages' libraries: %q %q", f.OS, f.LanguageLibraries)
	}
}

// The probe script on this host, as a plain process, with stand-ins for the
// Python modules: one with a version, one without, one that fails to import.
func TestProbeScriptReportsPythonAndItsModules(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this host")
	}
	dir := t.TempDir()
	mods := t.TempDir()
	for name, src := range map[string]string{
		"numpy":    "__version__ = '1.2.3'\n",
		"pandas":   "raise ImportError('a dependency is missing')\n",
		"tabulate": "def tabulate(rows):\n    return ''\n",
	} {
		if err := os.WriteFile(filepath.Join(mods, name+".py"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "probe")
	if err := os.WriteFile(script, []byte(probeScript()), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+mods, "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "facts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f := parseFacts(data)
	ver, err := exec.Command(python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Versions["python3"], strings.TrimSpace(string(ver)); !f.HasCommand("python3") || got != want {
		t.Errorf("python3 %v, version %q; python3 says %q", f.HasCommand("python3"), got, want)
	}
	for _, c := range []struct {
		module  string
		present bool
		version string
	}{{"numpy", true, "1.2.3"}, {"pandas", false, ""}, {"tabulate", true, ""}} {
		v, versioned := f.Versions["python3-"+c.module]
		if f.HasCommand("python3-"+c.module) != c.present || versioned != c.present || v != c.version {
			t.Errorf("%s: present %v, version %q (%v); want present %v, version %q", c.module, f.HasCommand("python3-"+c.module), v, versioned, c.present, c.version)
		}
	}
}

func TestParseFactsReadsToolchains(t *testing.T) {
	t.Parallel()
	tcs := []ToolchainQuery{
		{Name: ".c", Programs: []string{"gcc"}, Version: "gcc --version"},
		{Name: ".java", Programs: []string{"javac", "jar", "java"}, Version: "javac -version"},
		{Name: ".js", Programs: []string{"node"}, Version: "node --version"},
		{Name: ".rs", Programs: []string{"rustc"}, Version: "rustc --version"},
		{Name: ".go", Version: "go version"},
		{Name: ".hs", Version: "ghc --version"},
	}
	f := parseFacts([]byte("glibc=2.41\n"+
		"tcexit=0=0\ntcout=0=gcc (Debian 14.2.0-19) 14.2.0\n"+
		"tcmissing=1=jar\ntcexit=1=0\ntcout=1=javac 21.0.8\n"+
		"tcmissing=2=node\ntcexit=2=127\ntcout=2=sh: 1: node: not found\n"+
		"tcexit=3=124\ntcout=3=\n"+
		"tcexit=4=0\ntcout=4=\n"+
		"tcexit=9=0\ntcout=x=1\ntcmissing=-1=x\n"), tcs...)
	want := map[string]Toolchain{
		".c":    {Version: "gcc (Debian 14.2.0-19) 14.2.0"},
		".java": {Version: "javac 21.0.8", Missing: []string{"jar"}},
		".js":   {Missing: []string{"node"}, Error: "node --version failed (exit 127): sh: 1: node: not found"},
		".rs":   {Error: "rustc --version did not finish within 10s"},
		".go":   {Error: "go version printed nothing"},
		".hs":   {Error: "the probe did not get to run ghc --version"},
	}
	if len(f.Toolchains) != len(want) {
		t.Fatalf("toolchains %+v, want %+v", f.Toolchains, want)
	}
	for name, w := range want {
		got := f.Toolchains[name]
		if got.Version != w.Version || got.Error != w.Error || strings.Join(got.Missing, ",") != strings.Join(w.Missing, ",") {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
		if got.OK() != (name == ".c") {
			t.Errorf("%s: OK() is %v", name, got.OK())
		}
	}
	if f := parseFacts([]byte("glibc=2.41\ntcexit=0=0\n")); f.Toolchains != nil {
		t.Errorf("no queries, yet toolchains %+v", f.Toolchains)
	}
}

// The toolchain part of the probe on this host, as a plain process, with
// stand-in toolchains: one that prints its version after a blank line, one
// that fails, one that is not there, and a name that needs quoting.
func TestProbeScriptAsksToolchains(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	for name, body := range map[string]string{
		"fakecc":  "echo\necho 'fakecc (Arena) 1.2.3'\necho second line\n",
		"brokenc": "echo 'brokenc: cannot find its libraries' >&2\nexit 3\n",
		"it's":    "echo quoted 7\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tcs := []ToolchainQuery{
		{Name: ".fc", Programs: []string{"fakecc", "sh"}, Version: "fakecc --version"},
		{Name: ".bc", Programs: []string{"brokenc"}, Version: "brokenc -v"},
		{Name: ".nc", Programs: []string{"nonesuchc", "nonesuchld"}, Version: "nonesuchc --version"},
		{Name: ".q", Programs: []string{"it's"}, Version: `"it's" | tr -d 7; echo done`},
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "probe")
	if err := os.WriteFile(script, []byte(probeScript(tcs...)), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "facts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f := parseFacts(data, tcs...)
	check := func(name string, ok bool, version, missing, errPart string) {
		t.Helper()
		got := f.Toolchains[name]
		if got.OK() != ok || got.Version != version || strings.Join(got.Missing, ",") != missing || !strings.Contains(got.Error, errPart) || (errPart == "") != (got.Error == "") {
			t.Errorf("%s: %+v; want ok %v, version %q, missing %q, error with %q", name, got, ok, version, missing, errPart)
		}
	}
	check(".fc", true, "fakecc (Arena) 1.2.3", "", "")
	check(".bc", false, "", "", "brokenc -v failed (exit 3): brokenc: cannot find its libraries")
	check(".nc", false, "", "nonesuchc,nonesuchld", "nonesuchc --version failed (exit 127)")
	check(".q", true, "quoted", "", "")
}
