package validate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFactsReadsVersions(t *testing.T) {
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
}

// The probe script on this host, as a plain process, with stand-ins for the
// Python modules: one with a version, one without, one that fails to import.
func TestProbeScriptReportsPythonAndItsModules(t *testing.T) {
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
