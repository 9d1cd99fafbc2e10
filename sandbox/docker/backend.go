// Package docker is the sandbox backend that runs each bot in its own hardened
// container on a Docker engine, local or remote.
//
// One container per bot per match; through a sandbox.Pool, one per bot for a
// run of matches, reset in between by the agent and checked empty. Its PID 1 is
// the arena agent (package sandbox/agent), which runs a fresh bot process per
// turn. Everything crosses the
// Docker API (the bot's files by copy, the turns over the attach stream), so the
// engine may be on another machine. Every container is verified by inspection
// after create and refused if the engine dropped a limit, carries an ownership
// label, and is removed on every exit path; leftovers of a killed arena are swept.
//
// A bot must never get less isolation than the contract promises: a
// container whose inspected HostConfig lacks a limit, a capability drop, the
// read-only root or the network cut is destroyed before the bot's first turn,
// and no host path is ever mounted into it.
package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/agent"
)

// LabelAgent is the image label holding the agent protocol version.
const LabelAgent = "org.arenabots.arena.agent"

// Backend opens containers on one engine from one image.
type Backend struct {
	cli   *client.Client
	image string
	// Cpusets, when set, pins successive boxes to these CPU sets in turn.
	Cpusets []string
	// StartTimeout bounds the container's creation (which the context of
	// Open does not end: see Open), its start and the agent's hello.
	StartTimeout time.Duration
	// Log receives a debug line for each engine call and container, and a
	// warning for each failure that is handled (a container that could not be
	// removed); nil means slog.Default().
	Log *slog.Logger

	mu   sync.Mutex
	next int
	// runtimeName is the runtime asked for ("" is the engine's default);
	// rt is what the engine has under it, once resolved.
	runtimeName string
	rt          *Runtime
}

// New returns a backend that runs bots in image on the engine behind cli.
func New(cli *client.Client, image string) *Backend {
	return &Backend{cli: cli, image: image, StartTimeout: 30 * time.Second}
}

func (b *Backend) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return "docker" }

// Capabilities implements sandbox.Backend. Every box is isolated. Under
// runc a box is reset and reused, and survives its bot's out-of-memory kill.
// Under gVisor it is neither: gVisor's kernel shows the agent neither the
// bot's POSIX message queues (it mounts no /dev/mqueue) nor its System V IPC
// objects (it has no /proc/sysvipc), so a reset could not prove them gone;
// and the host's OOM killer usually picks gVisor's kernel, which holds the
// bot's memory, so an out-of-memory kill takes the whole box. Until the
// engine was asked which runtime boxes run under (Runtime, or the first
// Open), it claims gVisor's, the least of the two.
func (b *Backend) Capabilities() sandbox.Capabilities {
	b.mu.Lock()
	gvisor := b.rt == nil || b.rt.GVisor
	b.mu.Unlock()
	return sandbox.Capabilities{Isolated: true, Reusable: !gvisor, OOMTakesTheBox: gvisor}
}

// Admit implements sandbox.Backend: a container's room is the host's,
// which the engine does not count ahead; every game is admitted at once.
func (b *Backend) Admit(ctx context.Context, _ int, _ sandbox.Limits) (context.Context, func(), error) {
	return sandbox.AdmitAtOnce(ctx)
}

// Where implements sandbox.Backend.
func (b *Backend) Where() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return where(b.cli.DaemonHost(), b.runtimeName)
}

// where says where boxes run: on this machine when the engine is reached
// through a socket here, else on the engine at its address.
func where(host, runtime string) string {
	out := "on this machine, in Docker containers"
	if !strings.HasPrefix(host, "unix://") && !strings.HasPrefix(host, "npipe://") {
		out = "in Docker containers on the engine at " + host
	}
	if runtime != "" {
		out += " under " + runtime
	}
	return out
}

// Image is the image reference boxes are started from.
func (b *Backend) Image() string { return b.image }

// UseRuntime makes boxes run under the engine's runtime of that name ("":
// the engine's default). Call it before the first box; the engine is asked
// about it by Runtime.
func (b *Backend) UseRuntime(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runtimeName, b.rt = name, nil
}

// Runtime is the runtime boxes run under, as the engine has it; a runtime
// the engine does not have is a *MissingRuntimeError.
func (b *Backend) Runtime(ctx context.Context) (Runtime, error) {
	b.mu.Lock()
	if b.rt != nil {
		defer b.mu.Unlock()
		return *b.rt, nil
	}
	name := b.runtimeName
	b.mu.Unlock()
	info, err := b.cli.Info(ctx)
	if err != nil {
		return Runtime{}, fmt.Errorf("ask the engine about its runtimes: %w", err)
	}
	rt, err := ResolveRuntime(info, name)
	if err != nil {
		return Runtime{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runtimeName == name {
		b.rt = &rt
	}
	return rt, nil
}

// CheckImage verifies the image exists and carries an agent of our protocol.
func (b *Backend) CheckImage(ctx context.Context) (id string, err error) {
	ins, err := b.cli.ImageInspect(ctx, b.image)
	b.log().Debug("docker: image inspected", "image", b.image, "err", err)
	if cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("runtime image %s is not on the engine; build it with arena image build (offline: arena image build --base arena-testbase:trixie)", b.image)
	}
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", b.image, err)
	}
	var labels map[string]string
	if ins.Config != nil {
		labels = ins.Config.Labels
	}
	if v := labels[LabelAgent]; v != fmt.Sprint(agent.Version) {
		if v == "" {
			return "", fmt.Errorf("image %s has no arena agent; build a runtime image with arena image build", b.image)
		}
		return "", fmt.Errorf("image %s carries agent protocol %s, this arena speaks %d; rebuild it with arena image build", b.image, v, agent.Version)
	}
	return ins.ID, nil
}

// Describe implements sandbox.Backend.
func (b *Backend) Describe(ctx context.Context) (map[string]string, error) {
	d := map[string]string{"backend": "docker", "image": b.image}
	id, err := b.CheckImage(ctx)
	if err != nil {
		return d, err
	}
	d["imageId"] = id
	rt, err := b.Runtime(ctx)
	if err != nil {
		return d, err
	}
	d["runtime"] = rt.Name
	if rt.GVisor {
		d["runtimeKind"] = "gvisor"
	}
	if v, err := b.cli.ServerVersion(ctx); err == nil {
		d["engineVersion"] = v.Version
		d["apiVersion"] = b.cli.ClientVersion()
		d["kernel"] = v.KernelVersion
	}
	if info, err := b.cli.Info(ctx); err == nil {
		d["cgroupVersion"] = info.CgroupVersion
		d["storageDriver"] = info.Driver
		d["cpus"] = fmt.Sprint(info.NCPU)
	}
	return d, nil
}

func (b *Backend) cpuset() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.Cpusets) == 0 {
		return ""
	}
	s := b.Cpusets[b.next%len(b.Cpusets)]
	b.next++
	return s
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// Open implements sandbox.Backend: create, verify, fill, attach and start one
// container. On any failure nothing is left behind.
func (b *Backend) Open(ctx context.Context, spec sandbox.Spec) (_ sandbox.Box, err error) {
	if err := spec.Limits.Validate(); err != nil {
		return nil, err
	}
	botTar, err := agent.ProgramTar(spec.Program)
	if err != nil {
		return nil, err
	}
	if _, err := b.CheckImage(ctx); err != nil {
		return nil, sandbox.Faultf("image", err)
	}
	rt, err := b.Runtime(ctx)
	if err != nil {
		return nil, sandbox.Faultf("runtime", err)
	}
	labels := map[string]string{LabelOwner: Owner()}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	cfg, hc := containerConfig(b.image, rt, spec.Limits, labels, b.cpuset())
	name := "arena-" + strings.Trim(unsafeName.ReplaceAllString(spec.Program.Name, "-"), "-.")
	if len(name) > 40 {
		name = name[:40]
	}
	name += "-" + randomHex(4)
	log := b.log()
	start := time.Now()
	// The create is not given up when ctx ends: the engine goes on with a
	// request it received after its client stopped waiting, and the
	// container it makes would be known to no one. Once it is made, ctx's
	// end fails the next step, which removes it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.StartTimeout)
	created, err := b.cli.ContainerCreate(cctx, cfg, hc, nil, nil, name)
	cancel()
	if err != nil {
		log.Debug("docker: container create failed", "name", name, "image", b.image, "err", err)
		return nil, sandbox.Faultf("create container", err)
	}
	log = log.With("container", shortID(created.ID))
	log.Debug("docker: container created", "name", name, "image", b.image, "took", time.Since(start))
	eb := &engineBox{cli: b.cli, id: created.ID, log: log, stderr: agent.NewStderr(4096)}
	bx := &box{Client: &agent.Client{Host: eb, Exec: spec.Program.Entry, Limits: spec.Limits, Log: log, Name: "docker"}, c: eb}
	defer func() {
		if err != nil {
			log.Debug("docker: open failed; removing the container", "err", err)
			bx.Close(context.WithoutCancel(ctx))
		}
	}()
	ins, err := b.cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		return nil, sandbox.Faultf("inspect container", err)
	}
	if err := verifyHostConfig(hc, ins.HostConfig); err != nil {
		return nil, sandbox.Faultf("verify container", err)
	}
	log.Debug("docker: container settings verified")
	if err := b.cli.CopyToContainer(ctx, created.ID, agent.BotDir, bytes.NewReader(botTar), container.CopyToContainerOptions{}); err != nil {
		return nil, sandbox.Faultf("copy bot into container", err)
	}
	att, err := b.cli.ContainerAttach(ctx, created.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, sandbox.Faultf("attach container", err)
	}
	bx.attach(att)
	if err := b.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return nil, sandbox.Faultf("start container", err)
	}
	log.Debug("docker: container started")
	if err := bx.AwaitHello(ctx, b.StartTimeout, false); err != nil {
		return nil, sandbox.Faultf("agent hello", err)
	}
	if rt.GVisor {
		if err := bx.watchHostCgroup(ctx, hc); err != nil {
			return nil, sandbox.Faultf("verify container under "+rt.Name, err)
		}
	}
	log.Debug("docker: agent ready", "protocol", bx.Hello().Version, "took", time.Since(start))
	return bx, nil
}

// watchHostCgroup finds the container's cgroup on the engine's host and checks
// that it holds the limits hc asked for: under gVisor the bot sees a cgroup
// file system of gVisor's making, so the host's is where the limits are read
// back, and where the kernel counts the bot's out-of-memory kills (gVisor
// runs the bot's memory in host processes the host's OOM killer picks).
func (bx *box) watchHostCgroup(ctx context.Context, hc *container.HostConfig) error {
	ins, err := bx.c.cli.ContainerInspect(ctx, bx.c.id)
	if err != nil {
		return err
	}
	pid := 0
	if ins.State != nil {
		pid = ins.State.Pid
	}
	cg, err := findHostCgroup(pid, bx.c.id)
	if err != nil {
		return fmt.Errorf("%w; gVisor boxes are checked, and their out-of-memory kills counted, in the container's cgroup on the engine's host, so arena must run there", err)
	}
	mem, pids, err := cg.Limits()
	if err != nil {
		return fmt.Errorf("read the container's limits on the host: %w", err)
	}
	if mem != hc.Memory || hc.PidsLimit == nil || pids != *hc.PidsLimit {
		return fmt.Errorf("the host's cgroup of the container has memory %d and pids %d, asked %d and %d", mem, pids, hc.Memory, deref(hc.PidsLimit))
	}
	if cg.OOMKills() < 0 {
		return fmt.Errorf("the host's cgroup of the container counts no out-of-memory kills (%s)", cg.memory)
	}
	bx.c.host = cg
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
