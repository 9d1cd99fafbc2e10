package images_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestbaseTakesTheHostsDebianMirror runs the recipe's --print-mirror on
// apt directories of sample sources.
func TestTestbaseTakesTheHostsDebianMirror(t *testing.T) {
	const debian822 = `Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
# a comment inside the stanza
URIs: http://mirror.example/debian/
Suites: bookworm
  bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`
	cases := []struct {
		name  string
		files map[string]string // under the apt directory
		env   string            // ARENA_DEBIAN_MIRROR
		want  string            // the mirror
		from  string            // where it comes from, under the apt directory
	}{
		{"deb822", map[string]string{
			"sources.list.d/debian.sources": debian822,
		}, "", "http://mirror.example/debian", "sources.list.d/debian.sources"},
		{"one-line", map[string]string{
			"sources.list": `# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main
deb http://security.debian.org/debian-security bookworm-security main
deb [ arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] http://proxy.local:3142/debian trixie main contrib
`,
		}, "", "http://proxy.local:3142/debian", "sources.list"},
		{"sources.list before sources.list.d", map[string]string{
			"sources.list":                  "deb http://first.example/debian stable main\n",
			"sources.list.d/debian.sources": debian822,
		}, "", "http://first.example/debian", "sources.list"},
		{"sources.list.d in name order, and disabled stanzas", map[string]string{
			"sources.list":                   "# moved to sources.list.d\n",
			"sources.list.d/a-off.sources":   "Types: deb\nURIs: http://off.example/debian\nSuites: trixie\nEnabled: no\n",
			"sources.list.d/b-node.sources":  "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n",
			"sources.list.d/c.list.disabled": "deb http://disabled.example/debian trixie main\n",
			"sources.list.d/d-src.sources":   "Types: deb-src\nURIs: http://src.example/debian\nSuites: trixie\n",
			"sources.list.d/e-cdrom.list":    "deb cdrom:[Debian 13]/ trixie main\n",
			"sources.list.d/f.list":          "deb file:/srv/debian sid main\n",
		}, "", "file:/srv/debian", "sources.list.d/f.list"},
		{"ARENA_DEBIAN_MIRROR overrides", map[string]string{
			"sources.list.d/debian.sources": debian822,
		}, "http://override.example/debian", "http://override.example/debian", "ARENA_DEBIAN_MIRROR"},
		{"an Ubuntu host: the default", map[string]string{
			"sources.list.d/ubuntu.sources": "Types: deb\nURIs: http://archive.ubuntu.com/ubuntu/\nSuites: noble noble-updates\n",
		}, "", "http://deb.debian.org/debian", "the default"},
		{"no apt at all: the default", nil, "", "http://deb.debian.org/debian", "the default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apt := filepath.Join(t.TempDir(), "apt")
			for name, text := range c.files {
				p := filepath.Join(apt, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("bash", "testbase/build.sh", "--print-mirror", apt)
			cmd.Env = append(os.Environ(), "ARENA_DEBIAN_MIRROR="+c.env)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("build.sh --print-mirror: %v", err)
			}
			mirror, from, ok := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\t")
			if !ok || mirror != c.want || !strings.HasPrefix(strings.TrimPrefix(from, apt+"/"), c.from) {
				t.Fatalf("mirror %q from %q, want %q from %q", mirror, from, c.want, c.from)
			}
		})
	}
}
