package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/client"

	"github.com/arenabots/arena/internal/version"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/probe"
)

// Preflight is the docker backend's doctor (sandbox.Doctor.Preflight): it
// checks what official matches need from the engine cfg names, its runtime
// cfg.Runtime ("": the engine's default) and the runtime image cfg.Image.
// It starts a few short-lived hardened containers. An engine no client can
// be made for, or one that does not answer, is also an error, Dial's.
func Preflight(ctx context.Context, cfg sandbox.Config) ([]sandbox.Check, error) {
	conn, err := connOf(cfg)
	var cli *client.Client
	if err == nil {
		cli, err = Connect(conn)
	}
	if err != nil {
		return []sandbox.Check{{Name: "engine", Status: sandbox.Fail, Detail: err.Error(), Fix: "check --docker-host and the --docker-tls-* flags"}}, err
	}
	defer cli.Close()
	if err := Ping(ctx, cli); err != nil {
		out := []sandbox.Check{{Name: "engine", Status: sandbox.Fail, Detail: err.Error(), Fix: "start the engine (scripts/ensure-docker.sh) or point --docker-host / DOCKER_HOST at one"}}
		return skipAfter(out, "engine", "needs the engine"), unanswered(err)
	}
	return preflight(ctx, cli, cfg.Image, cfg.Runtime), nil
}

// preflight is Preflight's rows on an engine that answers.
func preflight(ctx context.Context, cli *client.Client, image, runtime string) []sandbox.Check {
	var out []sandbox.Check
	add := func(c sandbox.Check) { out = append(out, c) }
	add(sandbox.Check{Name: "engine", Status: sandbox.OK, Detail: "reachable at " + cli.DaemonHost()})

	if v, err := cli.ServerVersion(ctx); err != nil {
		add(sandbox.Check{Name: "versions", Status: sandbox.Warn, Detail: err.Error()})
	} else {
		api := cli.ClientVersion()
		st := sandbox.OK
		fix := ""
		if version.Less(api, "1.41") {
			st, fix = sandbox.Warn, "arena is tested against API 1.41 and later; upgrade the engine"
		}
		add(sandbox.Check{Name: "versions", Status: st, Detail: fmt.Sprintf("Docker %s, API %s negotiated (server %s, minimum %s), kernel %s", v.Version, api, v.APIVersion, v.MinAPIVersion, v.KernelVersion), Fix: fix})
	}
	info, err := cli.Info(ctx)
	if err != nil {
		add(sandbox.Check{Name: "cgroups", Status: sandbox.Warn, Detail: err.Error()})
		add(sandbox.Check{Name: "storage driver", Status: sandbox.Warn, Detail: err.Error()})
	} else {
		st, fix := sandbox.OK, ""
		if info.CgroupVersion != "1" && info.CgroupVersion != "2" {
			st, fix = sandbox.Warn, "memory and pids limits need cgroups; check the engine's cgroup setup"
		}
		add(sandbox.Check{Name: "cgroups", Status: st, Detail: fmt.Sprintf("v%s, driver %s, %d CPUs, %.1f GiB", info.CgroupVersion, info.CgroupDriver, info.NCPU, float64(info.MemTotal)/(1<<30)), Fix: fix})
		st, fix = sandbox.OK, ""
		if info.Driver == "vfs" {
			st, fix = sandbox.Warn, "vfs copies whole images per container; use overlay2"
		}
		add(sandbox.Check{Name: "storage driver", Status: st, Detail: info.Driver, Fix: fix})
	}

	rt, row := runtimeCheck(info, err, runtime)
	add(row)
	if row.Status == sandbox.Fail {
		return skipAfter(out, "runtime", "needs the runtime")
	}
	b := New(cli, image)
	b.UseRuntime(rt.Name)
	id, err := b.CheckImage(ctx)
	if err != nil {
		add(sandbox.Check{Name: "runtime image", Status: sandbox.Fail, Detail: err.Error(), Fix: "arena image build (offline: arena image testbase && arena image build --base arena-testbase:trixie)"})
		return skipAfter(out, "runtime image", "needs the runtime image")
	}
	add(sandbox.Check{Name: "runtime image", Status: sandbox.OK, Detail: fmt.Sprintf("%s (%s)", image, shortID(id))})

	add(probe.Hardened(ctx, b, expectFor(rt), nil))
	add(probe.OOM(ctx, b, "the engine must expose the container's memory cgroup (memory.events or memory.oom_control)"))
	add(probe.Deadline(ctx, b))
	return out
}

// preflightRows are Preflight's rows, in order.
var preflightRows = []string{"engine", "versions", "cgroups", "storage driver", "runtime", "runtime image", "hardened container", "out-of-memory detection", "turn deadline"}

// skipAfter adds to out every row after the row named failed, skipped
// because they need what it checked.
func skipAfter(out []sandbox.Check, failed, why string) []sandbox.Check {
	for _, name := range preflightRows[slices.Index(preflightRows, failed)+1:] {
		out = append(out, sandbox.Check{Name: name, Status: sandbox.Skip, Detail: why})
	}
	return out
}

// runtimeCheck says which runtime bots run under and what it protects
// against; info is the engine's (infoErr when it could not be read).
func runtimeCheck(info system.Info, infoErr error, name string) (Runtime, sandbox.Check) {
	c := sandbox.Check{Name: "runtime"}
	if infoErr != nil {
		c.Status, c.Detail = sandbox.Fail, "the engine's runtimes could not be read: "+infoErr.Error()
		return Runtime{}, c
	}
	rt, err := ResolveRuntime(info, name)
	var missing *MissingRuntimeError
	if errors.As(err, &missing) {
		c.Status, c.Detail, c.Fix = sandbox.Fail, err.Error(), missing.Fix()
		return rt, c
	}
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		return rt, c
	}
	c.Status = sandbox.OK
	if rt.GVisor {
		c.Detail = fmt.Sprintf("%s at %s: gVisor's kernel serves the bots' system calls, a second wall between a kernel bug and this host; a fresh process per turn costs more (doctor --bench), and each game gets a new container", rt, rt.Path)
		return rt, c
	}
	c.Detail = rt.Name + ": bots' system calls reach this host's kernel (namespaces, cgroups, seccomp, no capabilities)"
	if g := GVisorRuntimes(info); len(g) > 0 {
		c.Detail += "; gVisor is available as --runtime " + g[0]
	} else {
		c.Detail += "; no gVisor runtime registered for a second wall (see docs/sandbox.md)"
	}
	return rt, c
}

// expectFor judges the facts a probe bot read inside a container of the
// runtime rt: the limits it was given, read back, and no network device
// but the loopback.
func expectFor(rt Runtime) probe.Expect {
	return func(facts probe.Facts, lim sandbox.Limits) (string, []string) {
		var bad []string
		gvisor := facts.GVisor()
		limits := fmt.Sprintf("limits read back (memory %d MiB, pids %d)", lim.Memory/sandbox.MiB, lim.Pids)
		switch {
		case rt.GVisor && !gvisor:
			bad = append(bad, fmt.Sprintf("runtime %s is taken for gVisor, but the bot sees the kernel %q", rt.Name, facts["kernel"]))
		case !rt.GVisor && gvisor:
			bad = append(bad, fmt.Sprintf("runtime %s is taken for runc, but the bot sees gVisor's kernel", rt.Name))
		case rt.GVisor:
			// gVisor shows the bot a cgroup file system of its own: the
			// limits were read back on the host's cgroup when the box opened,
			// and the bot's process limit is gVisor's own count.
			if facts["nproc"] != strconv.FormatInt(lim.Pids, 10) {
				bad = append(bad, fmt.Sprintf("process limit inside is %q, asked %d", facts["nproc"], lim.Pids))
			}
			host := rt.Translate(lim)
			limits = fmt.Sprintf("under gVisor (%s); limits read back on the host's cgroup (memory %d MiB, pids %d: the bot's %d MiB and %d, plus gVisor's own) and the bot's process limit inside (%s)",
				strings.TrimSpace(facts["kernel"]), host.Memory/sandbox.MiB, host.Pids, lim.Memory/sandbox.MiB, lim.Pids, facts["nproc"])
		default:
			if facts["mem"] != strconv.FormatInt(lim.Memory, 10) {
				bad = append(bad, fmt.Sprintf("memory limit inside is %q, asked %d", facts["mem"], lim.Memory))
			}
			if facts["pids"] != strconv.FormatInt(lim.Pids, 10) {
				bad = append(bad, fmt.Sprintf("pids limit inside is %q, asked %d", facts["pids"], lim.Pids))
			}
		}
		// gVisor's netstack may list no device at all to the bot: no network
		// either.
		if nd := strings.Fields(facts["netdevs"]); !(len(nd) == 1 && nd[0] == "lo") && !(rt.GVisor && len(nd) == 0) {
			bad = append(bad, "network devices: "+facts["netdevs"])
		}
		return "no network, " + limits, bad
	}
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
