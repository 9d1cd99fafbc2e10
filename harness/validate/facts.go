package validate

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/arenabots/arena/sandbox"
)

// ImageFacts is what the runtime image offers a bot, read from inside it.
type ImageFacts struct {
	Glibc     string          `json:"glibc"`
	Libraries map[string]bool `json:"-"`
	// Commands holds the names and absolute paths of the interpreters
	// present, and "python3-<module>" for each of PythonModules python3
	// imports.
	Commands map[string]bool `json:"-"`
	// Versions holds python3's version and each importable module's, by the
	// name Commands uses ("python3", "python3-numpy"); a module without a
	// __version__ has an empty one.
	Versions map[string]string `json:"versions,omitempty"`
}

// PythonModules are the Python modules the probe looks for, in the order
// reports name them: the ones the event's script bots import. A game that
// needs one names it "python3-<module>" (rules.Packager's Needs).
var PythonModules = []string{"numpy", "pandas", "tabulate"}

// HasCommand reports whether an interpreter (a name or an absolute path) exists.
func (f *ImageFacts) HasCommand(prog string) bool {
	return f.Commands[prog] || (!path.IsAbs(prog) && f.Commands[path.Base(prog)])
}

// probeScript writes facts.txt: one "key=value" per line. The Python part
// imports each module in turn, so a module that fails to import (a missing
// dependency) is reported absent without hiding the others.
func probeScript() string {
	return `#!/bin/sh
{
echo "glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
ldconfig -p 2>/dev/null | awk 'NR > 1 {print "lib=" $1}'
for d in /lib64 /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /usr/lib /usr/local/lib; do
  for f in "$d"/*.so*; do [ -e "$f" ] && echo "lib=${f##*/}"; done
done
for c in sh bash dash env python3 python perl node nodejs java ruby lua php; do
  p=$(command -v "$c" 2>/dev/null) && echo "cmd=$c" && echo "cmd=$p"
done
if command -v python3 >/dev/null 2>&1; then
  python3 -c '
import importlib, sys
print("ver=python3=%d.%d.%d" % sys.version_info[:3])
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except Exception:
        continue
    print("cmd=python3-" + name)
    print("ver=python3-%s=%s" % (name, getattr(module, "__version__", "")))
' ` + strings.Join(PythonModules, " ") + ` 2>/dev/null
fi
for p in /bin/sh /bin/bash /usr/bin/env /usr/bin/python3 /usr/bin/python /usr/local/bin/python3 /usr/bin/perl /usr/bin/node; do
  [ -x "$p" ] && echo "cmd=$p"
done
} > facts.txt
exit 0
`
}

// probeTime is the least time the probe is given, whatever the bots' turn
// limit: importing pandas alone takes most of a second on an idle host.
const probeTime = 30 * time.Second

// ProbeImage runs a small script in the sandbox to learn the image's glibc
// version, shared libraries and interpreters, python3's version, and which
// of PythonModules it imports, with their versions. The probe runs under lim,
// with at least probeTime to finish: it is arena's program, not a bot's turn.
func ProbeImage(ctx context.Context, b sandbox.Backend, lim sandbox.Limits) (*ImageFacts, error) {
	lim.TurnTimeout = max(lim.TurnTimeout, probeTime)
	prog := sandbox.Program{Name: "probe", Entry: "probe", Files: []sandbox.File{{Name: "probe", Data: []byte(probeScript()), Mode: 0o755}}}
	box, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim, Labels: map[string]string{"org.arenabots.arena.validate": "probe"}})
	if err != nil {
		return nil, err
	}
	defer box.Close(ctx)
	r, err := box.Run(ctx, sandbox.Turn{Collect: "facts.txt", CollectMax: 4 << 20})
	if err != nil {
		return nil, err
	}
	if r.ExitCode != 0 || !r.Answer.Present {
		return nil, fmt.Errorf("the image probe failed (exit %d): %s", r.ExitCode, r.Stderr.Data)
	}
	f := parseFacts(r.Answer.Data)
	if f.Glibc == "" {
		return nil, fmt.Errorf("the image probe could not read the glibc version")
	}
	return f, nil
}

// parseFacts reads the probe's facts.txt.
func parseFacts(data []byte) *ImageFacts {
	f := &ImageFacts{Libraries: map[string]bool{}, Commands: map[string]bool{}, Versions: map[string]string{}}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || v == "" {
			continue
		}
		switch k {
		case "glibc":
			f.Glibc = v
		case "lib":
			f.Libraries[v] = true
		case "cmd":
			f.Commands[v] = true
		case "ver":
			if name, ver, ok := strings.Cut(v, "="); ok && name != "" {
				f.Versions[name] = ver
			}
		}
	}
	return f
}
