// Package images holds the recipes of the images bots run in and builds them
// through the Docker API: the runtime image (ubuntu:24.04 plus the arena agent)
// and the offline test base (Debian from the package mirror, no registry).
//
// Builds are cached by tag: an image whose build label matches the inputs (the
// Dockerfile, the agent binary and the base image) is not built again.
package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/arenabots/arena/sandbox/agent"
)

// RuntimeDockerfile is images/runtime/Dockerfile.
//
//go:embed runtime/Dockerfile
var RuntimeDockerfile []byte

// TestbaseScript is images/testbase/build.sh.
//
//go:embed testbase/build.sh
var TestbaseScript []byte

// Defaults.
const (
	DefaultRuntime  = "arena-runtime:latest"
	DefaultBase     = "ubuntu:24.04"
	DefaultTestbase = "arena-testbase:trixie"
	// LabelBuild holds the hash of the inputs a runtime image was built from.
	LabelBuild = "org.arenabots.arena.build"
)

// RuntimeOptions says what to build.
type RuntimeOptions struct {
	Tag   string // default DefaultRuntime
	Base  string // default DefaultBase
	Agent string // path of the static agent binary; default FindAgent()
	Force bool   // build even if the tag is up to date
	Out   io.Writer
}

// BuildRuntime builds the runtime image unless an image with the same inputs
// already carries the tag. It reports whether it built.
func BuildRuntime(ctx context.Context, cli *client.Client, o RuntimeOptions) (built bool, err error) {
	if o.Tag == "" {
		o.Tag = DefaultRuntime
	}
	if o.Base == "" {
		o.Base = DefaultBase
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Agent == "" {
		if o.Agent, err = FindAgent(); err != nil {
			return false, err
		}
	}
	agentBin, err := os.ReadFile(o.Agent)
	if err != nil {
		return false, fmt.Errorf("read agent: %w", err)
	}
	if err := CheckStatic(o.Agent); err != nil {
		return false, err
	}
	base, err := cli.ImageInspect(ctx, o.Base)
	if cerrdefs.IsNotFound(err) {
		hint := "pull it where a registry is reachable (docker pull " + o.Base + ")"
		if o.Base == DefaultBase {
			hint += ", or build offline on the test base: arena image testbase && arena image build --base " + DefaultTestbase
		} else if o.Base == DefaultTestbase {
			hint = "build it with: arena image testbase"
		}
		return false, fmt.Errorf("base image %s is not on the engine; %s", o.Base, hint)
	}
	if err != nil {
		return false, fmt.Errorf("inspect base image %s: %w", o.Base, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "agent-protocol %d\n", agent.Version)
	h.Write(RuntimeDockerfile)
	h.Write(agentBin)
	io.WriteString(h, base.ID)
	hash := hex.EncodeToString(h.Sum(nil))

	if !o.Force {
		if cur, err := cli.ImageInspect(ctx, o.Tag); err == nil && cur.Config != nil && cur.Config.Labels[LabelBuild] == hash {
			fmt.Fprintf(o.Out, "%s is up to date (built from %s)\n", o.Tag, o.Base)
			slog.Debug("runtime image up to date", "tag", o.Tag, "inputs", hash[:12])
			return false, nil
		}
	}

	start := time.Now()
	bctx, err := buildContext(map[string][]byte{"Dockerfile": RuntimeDockerfile, "arena-agent": agentBin})
	if err != nil {
		return false, err
	}
	version := strconv.Itoa(agent.Version)
	resp, err := cli.ImageBuild(ctx, bytes.NewReader(bctx), build.ImageBuildOptions{
		Tags:        []string{o.Tag},
		BuildArgs:   map[string]*string{"BASE": &o.Base, "AGENT_VERSION": &version},
		Labels:      map[string]string{LabelBuild: hash, "org.arenabots.arena.base": o.Base},
		Remove:      true,
		ForceRemove: true,
		NetworkMode: "none",
	})
	if err != nil {
		return false, fmt.Errorf("build %s: %w", o.Tag, err)
	}
	defer resp.Body.Close()
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, o.Out, 0, false, nil); err != nil {
		return false, fmt.Errorf("build %s: %w", o.Tag, err)
	}
	slog.Debug("runtime image built", "tag", o.Tag, "base", o.Base, "inputs", hash[:12], "took", time.Since(start))
	return true, nil
}

// BuildTestbase runs the embedded testbase recipe (needs root and the Debian
// mirror) unless tag already exists.
func BuildTestbase(ctx context.Context, tag string, stdout, stderr io.Writer) error {
	if tag == "" {
		tag = DefaultTestbase
	}
	dir, err := os.MkdirTemp("", "arena-testbase-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(script, TestbaseScript, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "bash", script, tag)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testbase recipe: %w", err)
	}
	return nil
}

// FindAgent looks for arena-agent next to the running executable, then in PATH.
func FindAgent() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "arena-agent")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("arena-agent"); err == nil {
		return p, nil
	}
	return "", errors.New("arena-agent not found next to arena or in PATH; build it with `make` (or CGO_ENABLED=0 go build -o bin/arena-agent ./cmd/arena-agent) or pass --agent")
}

// CheckStatic refuses anything but a static Linux x86-64 executable: the agent
// must run in any base image, whatever its libc.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("agent %s is not an ELF executable: %w", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("agent %s is built for %s, want x86-64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("agent %s is dynamically linked; build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}

func buildContext(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"Dockerfile", "arena-agent"} {
		data := files[name]
		mode := int64(0o644)
		if name == "arena-agent" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
