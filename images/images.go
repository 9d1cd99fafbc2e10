// Package images holds the recipes of the images bots run in and builds them
// through the Docker API: the runtime image (ubuntu:24.04 with python3 and
// its modules, the toolchains of the languages bots are handed in as, and the
// arena agent) and the offline test base (Debian from the package mirror, no
// registry, with the same).
//
// Builds are cached by content. A runtime image whose build label matches the
// inputs (the Dockerfile, the agent binary and the base image) is not built
// again. The test base is tagged with the hash of its recipe (TestbaseTag), so
// a changed recipe, its package list included, is a new image; the short name
// DefaultTestbase points at the newest one built, and its label tells whether
// it is stale.
//
// A build must never depend on a registry the organizer may not reach: the
// base comes from the engine, or is made offline from the package mirror.
package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
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

	"github.com/arenabots/arena/internal/setting"
	"github.com/arenabots/arena/internal/static"
	"github.com/arenabots/arena/sandbox"
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
	DefaultBase = "ubuntu:24.04"
	// DefaultTestbase is the short name of the test base: the recipe points
	// it at the image it built last (or found up to date). Tests and CI use
	// TestbaseTag, which cannot be stale.
	DefaultTestbase = "arena-testbase:trixie"
	// LabelBuild holds the hash of the inputs a runtime image was built from.
	LabelBuild = "org.arenabots.arena.build"
	// LabelTestbase holds the hash of the recipe a test base was built from
	// (TestbaseRecipe).
	LabelTestbase = "org.arenabots.arena.testbase"
)

// TestbaseRecipe is the hash of the test base recipe (images/testbase/build.sh)
// in hex: the recipe computes the same from its own file.
func TestbaseRecipe() string {
	sum := sha256.Sum256(TestbaseScript)
	return hex.EncodeToString(sum[:])
}

// TestbaseTag is the tag the recipe builds the test base under: the short
// name with the recipe's hash, so every recipe has its own image.
func TestbaseTag() string { return DefaultTestbase + "-" + TestbaseRecipe()[:12] }

// RuntimeOptions says what to build.
type RuntimeOptions struct {
	Tag   string // default sandbox.DefaultImage
	Base  string // default DefaultBase
	Agent string // path of the static agent binary; default FindAgent()
	Force bool   // build even if the tag is up to date
	Out   io.Writer
}

// BuildRuntime builds the runtime image unless an image with the same inputs
// already carries the tag. It reports whether it built.
func BuildRuntime(ctx context.Context, cli *client.Client, o RuntimeOptions) (built bool, err error) {
	if o.Tag == "" {
		o.Tag = sandbox.DefaultImage
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
	if err := static.Check(o.Agent); err != nil {
		return false, err
	}
	base, err := cli.ImageInspect(ctx, o.Base)
	if cerrdefs.IsNotFound(err) {
		hint := "pull it where a registry is reachable (docker pull " + o.Base + ")"
		if o.Base == DefaultBase {
			hint += ", or build offline on the test base: arena image testbase && arena image build --base " + DefaultTestbase
		} else if o.Base == DefaultTestbase || o.Base == TestbaseTag() {
			hint = "build it with: arena image testbase"
		}
		return false, fmt.Errorf("base image %s is not on the engine; %s", o.Base, hint)
	}
	if err != nil {
		return false, fmt.Errorf("inspect base image %s: %w", o.Base, err)
	}
	if base.Config != nil {
		if warning := StaleBase(o.Base, base.Config.Labels); warning != "" {
			fmt.Fprintln(o.Out, "warning:", warning)
			slog.Warn("stale test base", "base", o.Base, "recipe", short(base.Config.Labels[LabelTestbase]), "want", TestbaseRecipe()[:12])
		}
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
		// The engine's default network: on a base without python3 and its
		// modules, or without a toolchain (gcc, g++, a JDK, nodejs), the
		// Dockerfile installs them from the distribution's archive. A base
		// that has them all needs no network at all.
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
// mirror) unless the image is up to date: with tag "" or DefaultTestbase it
// builds TestbaseTag and points DefaultTestbase at it; with another tag it
// builds that tag, again unless it carries this recipe's label.
func BuildTestbase(ctx context.Context, tag string, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "arena-testbase-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(script, TestbaseScript, 0o755); err != nil {
		return err
	}
	args := []string{script}
	if tag != "" && tag != DefaultTestbase {
		args = append(args, tag)
	}
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("testbase recipe: %w", err)
	}
	return nil
}

// FindAgent looks for arena-agent next to the running executable, then in
// PATH.
func FindAgent() (string, error) {
	p, err := static.Find("arena-agent")
	if err != nil {
		return "", setting.Errorf(setting.Agent, "%w, or give {setting}", err)
	}
	return p, nil
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
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

// StaleBase says why a base image whose labels these are was built from
// another test base recipe than this arena's, or "" when it was not (or is
// no test base at all).
func StaleBase(name string, labels map[string]string) string {
	if r, ok := labels[LabelTestbase]; ok && r != TestbaseRecipe() {
		return fmt.Sprintf("the base %s was built from another test base recipe than this arena's; build the current one with: arena image testbase", name)
	}
	return ""
}
