package validate

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/arenabots/arena/sandbox"
)

// ImageFacts is what the runtime image offers a bot, read from inside it.
type ImageFacts struct {
	Glibc     string          `json:"glibc"`
	Libraries map[string]bool `json:"-"`
	Commands  map[string]bool `json:"-"` // names and absolute paths of interpreters present
}

// HasCommand reports whether an interpreter (a name or an absolute path) exists.
func (f *ImageFacts) HasCommand(prog string) bool {
	return f.Commands[prog] || (!path.IsAbs(prog) && f.Commands[path.Base(prog)])
}

const probeScript = `#!/bin/sh
{
echo "glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
ldconfig -p 2>/dev/null | awk 'NR > 1 {print "lib=" $1}'
for d in /lib64 /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /usr/lib /usr/local/lib; do
  for f in "$d"/*.so*; do [ -e "$f" ] && echo "lib=${f##*/}"; done
done
for c in sh bash dash env python3 python perl node nodejs java ruby lua php; do
  p=$(command -v "$c" 2>/dev/null) && echo "cmd=$c" && echo "cmd=$p"
done
python3 -c 'import numpy' 2>/dev/null && echo "cmd=python3-numpy"
for p in /bin/sh /bin/bash /usr/bin/env /usr/bin/python3 /usr/bin/python /usr/local/bin/python3 /usr/bin/perl /usr/bin/node; do
  [ -x "$p" ] && echo "cmd=$p"
done
} > facts.txt
exit 0
`

// ProbeImage runs a small script in the sandbox to learn the image's glibc
// version, shared libraries and interpreters.
func ProbeImage(ctx context.Context, b sandbox.Backend, lim sandbox.Limits) (*ImageFacts, error) {
	prog := sandbox.Program{Name: "probe", Entry: "probe", Files: []sandbox.File{{Name: "probe", Data: []byte(probeScript), Mode: 0o755}}}
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
	f := &ImageFacts{Libraries: map[string]bool{}, Commands: map[string]bool{}}
	for _, line := range strings.Split(string(r.Answer.Data), "\n") {
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
		}
	}
	if f.Glibc == "" {
		return nil, fmt.Errorf("the image probe could not read the glibc version")
	}
	return f, nil
}
