// Package static finds arena's own programs that run inside a box (the
// agent, the built-in random bot) beside the running executable, and checks
// that each is a static Linux x86-64 executable, so that it runs in any
// image whatever its libc. It must never build, fetch or run anything.
package static

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Find looks for the program name next to the running executable, then in
// PATH; the error says how to build it (make builds every one into bin/).
func Find(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found next to arena or in PATH; build it with make (or CGO_ENABLED=0 go build -o bin/%s ./cmd/%s)", name, name, name)
}

// Check refuses anything but a static Linux x86-64 executable at path.
func Check(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not an ELF executable: %w", path, err)
	}
	defer f.Close() // read only
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s is built for %s, want x86-64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}
