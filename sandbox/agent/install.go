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
// resource limits of the agent, and so of every bot it starts. It is the
// box's first request or none: once a bot ran, the directory is no longer
// known to be what was sent, and a directory that holds anything is
// refused. A program sent in parts is unpacked as each part comes, never
// held whole; the last part is answered once every file is in place.
func (sv *server) install(req Request) error {
	if sv.installing == nil {
		in, err := sv.startInstall()
		if err != nil {
			return fmt.Errorf("install: %w", err)
		}
		sv.installing = in
	}
	in := sv.installing
	// The pipe's write returns once the unpacker read it all, or with why
	// it stopped.
	if _, err := in.w.Write(req.Program); err != nil {
		in.w.Close()
		<-in.done
		sv.installing = nil
		return fmt.Errorf("install: %w", err)
	}
	if req.More {
		return nil
	}
	in.w.Close()
	err := <-in.done
	sv.installing = nil
	if err != nil {
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

// installing is an install under way: the parts written to w are
// unpacked into the bot directory; done says how that ended.
type installing struct {
	w    *io.PipeWriter
	done chan error
}

// startInstall checks that the bot directory may take a program and
// starts unpacking what is written to the install it returns.
func (sv *server) startInstall() (*installing, error) {
	if sv.started {
		return nil, errors.New("a bot already ran in this box")
	}
	if err := proc.CheckEmpty(sv.cfg.Bot, false); err != nil {
		return nil, err
	}
	if err := os.Chown(sv.cfg.Bot, 0, 0); err != nil {
		return nil, err
	}
	if err := os.Chmod(sv.cfg.Bot, 0o755); err != nil {
		return nil, err
	}
	r, w := io.Pipe()
	in := &installing{w: w, done: make(chan error, 1)}
	go func() {
		err := unpack(sv.cfg.Bot, r)
		if err == nil {
			// What follows the tar's end is read and ignored, as the tar
			// reader ignores it: a write must not wait for a reader gone.
			_, err = io.Copy(io.Discard, r)
		}
		r.CloseWithError(err)
		in.done <- err
	}()
	return in, nil
}

// unpack writes a ProgramTar's directories and regular files under dir,
// creating each (never following or replacing anything), readable by all
// and writable by none.
func unpack(dir string, r io.Reader) error {
	tr := tar.NewReader(r)
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
