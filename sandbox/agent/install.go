package agent

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/proc"
)

// ProgramTar packs the bot's files for the bot directory: owned by root, the
// entry executable, nothing writable by the bot, no special bits. A backend
// copies it in before the box starts (Docker) or sends it with "install".
func ProgramTar(p sandbox.Program) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	found := false
	for _, f := range p.Files {
		name := path.Clean(f.Name)
		if name != f.Name || path.IsAbs(name) || name == "." || strings.HasPrefix(name, "../") || name == ".." {
			return nil, fmt.Errorf("bot file name %q is not a clean relative path", f.Name)
		}
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)})
			}
		}
		mode := int64(0o444)
		if f.Mode&0o111 != 0 || name == p.Entry {
			mode = 0o555
		}
		found = found || name == p.Entry
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(f.Data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, fmt.Errorf("bot %q has no file named %q to execute", p.Name, p.Entry)
	}
	return buf.Bytes(), tw.Close()
}

// install puts the bot's program into the bot directory and sets the
// resource limits of the agent, and so of every bot it starts. It is the box's first request or none: once a
// bot ran, the directory is no longer known to be what was sent, and a
// directory that holds anything is refused.
func (sv *server) install(req Request) error {
	if sv.started {
		return errors.New("install: a bot already ran in this box")
	}
	if err := proc.CheckEmpty(sv.cfg.Bot, false); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := os.Chown(sv.cfg.Bot, 0, 0); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := os.Chmod(sv.cfg.Bot, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := unpack(sv.cfg.Bot, req.Program); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if req.BotID != 0 {
		if req.BotID < 1000 {
			return fmt.Errorf("install: bot user %d is a system one", req.BotID)
		}
		sv.cfg.UID, sv.cfg.GID = req.BotID, req.BotID
		if err := prepareGameDir(sv.cfg); err != nil {
			return fmt.Errorf("install: %w", err)
		}
	}
	for _, rl := range req.Rlimits {
		// syscall's Setrlimit, so that the Go runtime starts children with
		// this open files limit, not the one it found at its start.
		if err := syscall.Setrlimit(rl.Resource, &syscall.Rlimit{Cur: rl.Value, Max: rl.Value}); err != nil {
			return fmt.Errorf("install: set resource limit %d to %d: %w", rl.Resource, rl.Value, err)
		}
	}
	return nil
}

// unpack writes a ProgramTar's directories and regular files under dir,
// creating each (never following or replacing anything), readable by all
// and writable by none.
func unpack(dir string, data []byte) error {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimSuffix(h.Name, "/"))
		if name != strings.TrimSuffix(h.Name, "/") || path.IsAbs(name) || name == "." || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("%q is not a clean relative path", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			mode := os.FileMode(0o444)
			if h.Mode&0o111 != 0 {
				mode = 0o555
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			err = errors.Join(err, f.Chmod(mode), f.Close())
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%q is neither a file nor a directory", h.Name)
		}
	}
}
