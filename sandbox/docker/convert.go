package docker

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	units "github.com/docker/go-units"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/agent"
)

// LabelOwner marks everything arena creates; its value is "host/pid/start" of
// the arena process that owns it, so leftovers of a dead process can be found.
const LabelOwner = "org.arenabots.arena.owner"

// capsKept are what the agent needs to switch to the bot user, give it game_dir,
// and kill and clean up after it. The bot itself runs with none of them.
var capsKept = []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID"}

// shmBytes caps /dev/shm, which is scratch wiped every turn.
const shmBytes = 64 * sandbox.MiB

// containerConfig translates what we want into what the engine is asked for:
// the bot's limits as runtime rt needs them said (Runtime.Translate). It is
// pure: everything here is tested without an engine.
func containerConfig(image string, rt Runtime, bot sandbox.Limits, labels map[string]string, cpuset string) (*container.Config, *container.HostConfig) {
	lim := rt.Translate(bot)
	cfg := &container.Config{
		Image:           image,
		Entrypoint:      []string{agent.Path},
		Cmd:             []string{},
		User:            "0:0",
		WorkingDir:      "/",
		Labels:          labels,
		AttachStdin:     true,
		AttachStdout:    true,
		AttachStderr:    true,
		OpenStdin:       true,
		StdinOnce:       true,
		NetworkDisabled: true,
	}
	pids := lim.Pids
	noInit := false
	hc := &container.HostConfig{
		Runtime:        rt.Name,
		NetworkMode:    "none",
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		CapAdd:         slices.Clone(capsKept),
		SecurityOpt:    []string{"no-new-privileges"},
		LogConfig:      container.LogConfig{Type: "none"},
		IpcMode:        "private",
		ShmSize:        min(shmBytes, lim.ScratchBytes),
		Init:           &noInit,
		Tmpfs: map[string]string{
			agent.GameDir:    tmpfsOptions(lim.GameDirBytes, "0700", agent.BotUID),
			agent.ScratchDir: tmpfsOptions(lim.ScratchBytes, "1777", 0),
		},
		Mounts: []mount.Mount{{
			Type:          mount.TypeVolume,
			Target:        agent.BotDir,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true, Labels: labels},
		}},
		Resources: container.Resources{
			Memory:     lim.Memory,
			MemorySwap: lim.Memory,
			NanoCPUs:   int64(math.Round(lim.CPUs * 1e9)),
			CpusetCpus: cpuset,
			PidsLimit:  &pids,
			Ulimits:    ulimits(rt, bot),
		},
	}
	return cfg, hc
}

// ulimits are the resource limits the agent, and so the bot, starts with.
// Under gVisor they include the bot's process limit as RLIMIT_NPROC, which
// gVisor's kernel counts per user within the sandbox; under runc the host's
// kernel would count it across every container of the bot's uid, so the
// cgroup's pids limit alone holds the bot there.
func ulimits(rt Runtime, lim sandbox.Limits) []*units.Ulimit {
	u := []*units.Ulimit{
		{Name: "core", Soft: 0, Hard: 0},
		{Name: "fsize", Soft: lim.FileSize, Hard: lim.FileSize},
		{Name: "nofile", Soft: lim.OpenFiles, Hard: lim.OpenFiles},
	}
	if rt.GVisor {
		u = append(u, &units.Ulimit{Name: "nproc", Soft: lim.Pids, Hard: lim.Pids})
	}
	return u
}

func tmpfsOptions(size int64, mode string, uid int) string {
	opts := []string{"rw", "exec", "nosuid", "nodev", "size=" + strconv.FormatInt(size, 10), "mode=" + mode}
	if uid != 0 {
		opts = append(opts, "uid="+strconv.Itoa(uid), "gid="+strconv.Itoa(uid))
	}
	return strings.Join(opts, ",")
}

// verifyHostConfig compares what the engine recorded with what we asked. Engines
// silently drop fields newer than their API; a container missing a limit must not
// run a bot.
func verifyHostConfig(want, got *container.HostConfig) error {
	if got == nil {
		return fmt.Errorf("engine returned no host config")
	}
	var bad []string
	check := func(name string, ok bool, w, g any) {
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: asked %v, engine has %v", name, w, g))
		}
	}
	check("runtime", want.Runtime == "" || got.Runtime == want.Runtime, want.Runtime, got.Runtime)
	check("network mode", got.NetworkMode == want.NetworkMode, want.NetworkMode, got.NetworkMode)
	check("read-only root", got.ReadonlyRootfs == want.ReadonlyRootfs, want.ReadonlyRootfs, got.ReadonlyRootfs)
	check("privileged", !got.Privileged, false, got.Privileged)
	check("dropped capabilities", sameCaps(got.CapDrop, want.CapDrop), want.CapDrop, got.CapDrop)
	check("kept capabilities", sameCaps(got.CapAdd, want.CapAdd), want.CapAdd, got.CapAdd)
	check("security options", containsAll(got.SecurityOpt, want.SecurityOpt), want.SecurityOpt, got.SecurityOpt)
	check("log driver", got.LogConfig.Type == want.LogConfig.Type, want.LogConfig.Type, got.LogConfig.Type)
	check("memory", got.Memory == want.Memory, want.Memory, got.Memory)
	check("memory+swap", got.MemorySwap == want.MemorySwap, want.MemorySwap, got.MemorySwap)
	check("cpus", got.NanoCPUs == want.NanoCPUs, want.NanoCPUs, got.NanoCPUs)
	check("cpuset", got.CpusetCpus == want.CpusetCpus, want.CpusetCpus, got.CpusetCpus)
	check("pids limit", got.PidsLimit != nil && want.PidsLimit != nil && *got.PidsLimit == *want.PidsLimit, deref(want.PidsLimit), deref(got.PidsLimit))
	check("ulimits", sameUlimits(got.Ulimits, want.Ulimits), fmtUlimits(want.Ulimits), fmtUlimits(got.Ulimits))
	for path, opts := range want.Tmpfs {
		check("tmpfs "+path, got.Tmpfs[path] == opts, opts, got.Tmpfs[path])
	}
	check("pid namespace", got.PidMode == "" || got.PidMode == "private", "private", got.PidMode)
	check("ipc namespace", got.IpcMode == want.IpcMode, want.IpcMode, got.IpcMode)
	check("user namespace", got.UsernsMode == "" || got.UsernsMode == want.UsernsMode, want.UsernsMode, got.UsernsMode)
	check("bind mounts", len(got.Binds) == 0 && !hasBindMount(got.Mounts), "none", fmt.Sprint(got.Binds, got.Mounts))
	check("/dev/shm size", got.ShmSize == want.ShmSize, want.ShmSize, got.ShmSize)
	check("init process", got.Init == nil || !*got.Init, "none (the agent is PID 1)", fmtBool(got.Init))
	if len(bad) > 0 {
		return fmt.Errorf("engine did not apply the sandbox settings: %s", strings.Join(bad, "; "))
	}
	return nil
}

func hasBindMount(ms []mount.Mount) bool {
	for _, m := range ms {
		if m.Type == mount.TypeBind {
			return true
		}
	}
	return false
}

func fmtBool(p *bool) any {
	if p == nil {
		return "unset"
	}
	return *p
}

func normCap(c string) string {
	c = strings.ToUpper(c)
	if c != "ALL" && !strings.HasPrefix(c, "CAP_") {
		c = "CAP_" + c
	}
	return c
}

func sameCaps(a, b []string) bool {
	x, y := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		x[i] = normCap(a[i])
	}
	for i := range b {
		y[i] = normCap(b[i])
	}
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w || strings.ReplaceAll(h, "=", ":") == w+":true" || h == w+"=true" {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func sameUlimits(a, b []*units.Ulimit) bool {
	return fmtUlimits(a) == fmtUlimits(b)
}

func fmtUlimits(u []*units.Ulimit) string {
	s := make([]string, 0, len(u))
	for _, x := range u {
		if x != nil {
			s = append(s, fmt.Sprintf("%s=%d:%d", x.Name, x.Soft, x.Hard))
		}
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func deref(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}
