package docker

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/system"
	units "github.com/docker/go-units"

	"github.com/arenabots/arena/sandbox"
)

// representative is a spec's limits and labels as a match asks for them.
func representative() (sandbox.Limits, map[string]string) {
	lim := sandbox.Limits{
		TurnTimeout:  5 * time.Second,
		Memory:       768 * sandbox.MiB,
		CPUs:         1.5,
		Pids:         128,
		GameDirBytes: 32 * sandbox.MiB,
		ScratchBytes: 256 * sandbox.MiB,
		OutputTail:   4096,
		OpenFiles:    512,
		FileSize:     100 * sandbox.MiB,
	}
	labels := map[string]string{LabelOwner: "host/42/1234", "org.arenabots.arena.side": "white"}
	return lim, labels
}

func TestContainerConfigAsksForEveryHardeningSetting(t *testing.T) {
	lim, labels := representative()
	cfg, hc := containerConfig("arena-runtime:latest", Runtime{Name: "runc"}, lim, labels, "2-3")

	wantCfg := &container.Config{
		Image:           "arena-runtime:latest",
		Entrypoint:      []string{"/usr/local/libexec/arena-agent"},
		Cmd:             []string{},
		User:            "0:0", // the agent; it starts the bot as uid 10001
		WorkingDir:      "/",
		Labels:          map[string]string{LabelOwner: "host/42/1234", "org.arenabots.arena.side": "white"},
		AttachStdin:     true,
		AttachStdout:    true,
		AttachStderr:    true,
		OpenStdin:       true,
		StdinOnce:       true,
		NetworkDisabled: true,
	}
	if !reflect.DeepEqual(cfg, wantCfg) {
		t.Errorf("config\n got %+v\nwant %+v", cfg, wantCfg)
	}

	pids := int64(128)
	noInit := false
	wantHC := &container.HostConfig{
		Runtime:        "runc",
		NetworkMode:    "none",
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID"},
		SecurityOpt:    []string{"no-new-privileges"},
		LogConfig:      container.LogConfig{Type: "none"},
		IpcMode:        "private",
		ShmSize:        64 * sandbox.MiB,
		Init:           &noInit,
		Tmpfs: map[string]string{
			"/game": "rw,exec,nosuid,nodev,size=33554432,mode=0700,uid=10001,gid=10001",
			"/tmp":  "rw,exec,nosuid,nodev,size=268435456,mode=1777",
		},
		Mounts: []mount.Mount{{
			Type:   mount.TypeVolume,
			Target: "/bot",
			VolumeOptions: &mount.VolumeOptions{NoCopy: true,
				Labels: map[string]string{LabelOwner: "host/42/1234", "org.arenabots.arena.side": "white"}},
		}},
		Resources: container.Resources{
			Memory:     768 * sandbox.MiB,
			MemorySwap: 768 * sandbox.MiB, // equal: no swap
			NanoCPUs:   1_500_000_000,
			CpusetCpus: "2-3",
			PidsLimit:  &pids,
			Ulimits: []*units.Ulimit{
				{Name: "core", Soft: 0, Hard: 0},
				{Name: "fsize", Soft: 100 * sandbox.MiB, Hard: 100 * sandbox.MiB},
				{Name: "nofile", Soft: 512, Hard: 512},
			},
		},
	}
	if !reflect.DeepEqual(hc, wantHC) {
		t.Errorf("host config\n got %+v\nwant %+v", hc, wantHC)
		if !reflect.DeepEqual(hc.Resources, wantHC.Resources) {
			t.Errorf("resources differ:\n got %+v\nwant %+v", hc.Resources, wantHC.Resources)
		}
	}

	// Nothing privileged is asked for, whatever the zero values.
	if hc.Privileged || hc.PidMode != "" || hc.UsernsMode != "" || len(hc.Binds) != 0 || hc.PublishAllPorts || len(hc.Devices) != 0 {
		t.Errorf("privileged settings: %+v", hc)
	}
}

func TestContainerConfigSmallScratchCapsSharedMemory(t *testing.T) {
	lim, labels := representative()
	lim.ScratchBytes = 8 * sandbox.MiB
	_, hc := containerConfig("img", Runtime{Name: "runc"}, lim, labels, "")
	if hc.ShmSize != 8*sandbox.MiB {
		t.Errorf("/dev/shm of %d bytes with 8 MiB of scratch", hc.ShmSize)
	}
	if hc.CpusetCpus != "" {
		t.Errorf("cpuset %q when none was asked", hc.CpusetCpus)
	}
}

func TestVerifyHostConfigRefusesEveryDroppedOrChangedSetting(t *testing.T) {
	lim, labels := representative()
	want := func() *container.HostConfig {
		_, hc := containerConfig("img", Runtime{Name: "runc"}, lim, labels, "2-3")
		return hc
	}
	if err := verifyHostConfig(want(), want()); err != nil {
		t.Fatalf("the settings asked for were refused: %v", err)
	}
	// An engine echoes capabilities without the CAP_ prefix, lower case, in any
	// order, and no-new-privileges as "no-new-privileges:true": all the same.
	echoed := want()
	echoed.CapAdd = []string{"setuid", "KILL", "chown", "Fowner", "SETGID", "DAC_OVERRIDE"}
	echoed.SecurityOpt = []string{"label=disable", "no-new-privileges:true"}
	echoed.PidMode = "private"
	echoed.Init = nil
	if err := verifyHostConfig(want(), echoed); err != nil {
		t.Fatalf("an engine's way of writing the same settings was refused: %v", err)
	}

	seven := int64(7)
	yes := true
	cases := []struct {
		what   string
		change func(*container.HostConfig)
		err    string
	}{
		{"another runtime", func(h *container.HostConfig) { h.Runtime = "crun" }, "runtime: asked runc, engine has crun"},
		{"network attached", func(h *container.HostConfig) { h.NetworkMode = "bridge" }, "network mode: asked none, engine has bridge"},
		{"network mode dropped", func(h *container.HostConfig) { h.NetworkMode = "" }, "network mode: asked none"},
		{"writable root", func(h *container.HostConfig) { h.ReadonlyRootfs = false }, "read-only root: asked true, engine has false"},
		{"privileged", func(h *container.HostConfig) { h.Privileged = true }, "privileged: asked false, engine has true"},
		{"capabilities not dropped", func(h *container.HostConfig) { h.CapDrop = nil }, "dropped capabilities: asked [ALL]"},
		{"a capability too many", func(h *container.HostConfig) { h.CapAdd = append(h.CapAdd, "SYS_ADMIN") }, "kept capabilities: asked"},
		{"a capability missing", func(h *container.HostConfig) { h.CapAdd = h.CapAdd[1:] }, "kept capabilities: asked"},
		{"no-new-privileges dropped", func(h *container.HostConfig) { h.SecurityOpt = nil }, "security options: asked [no-new-privileges]"},
		{"no-new-privileges off", func(h *container.HostConfig) { h.SecurityOpt = []string{"no-new-privileges:false"} }, "security options: asked [no-new-privileges]"},
		{"logging on", func(h *container.HostConfig) { h.LogConfig.Type = "json-file" }, "log driver: asked none, engine has json-file"},
		{"memory dropped", func(h *container.HostConfig) { h.Memory = 0 }, "memory: asked 805306368, engine has 0"},
		{"memory changed", func(h *container.HostConfig) { h.Memory = 1 << 30 }, "memory: asked 805306368, engine has 1073741824"},
		{"swap allowed", func(h *container.HostConfig) { h.MemorySwap = -1 }, "memory+swap: asked 805306368, engine has -1"},
		{"swap dropped", func(h *container.HostConfig) { h.MemorySwap = 0 }, "memory+swap: asked 805306368, engine has 0"},
		{"cpus dropped", func(h *container.HostConfig) { h.NanoCPUs = 0 }, "cpus: asked 1500000000, engine has 0"},
		{"cpuset dropped", func(h *container.HostConfig) { h.CpusetCpus = "" }, "cpuset: asked 2-3, engine has "},
		{"pids limit dropped", func(h *container.HostConfig) { h.PidsLimit = nil }, "pids limit: asked 128, engine has unset"},
		{"pids limit changed", func(h *container.HostConfig) { h.PidsLimit = &seven }, "pids limit: asked 128, engine has 7"},
		{"ulimits dropped", func(h *container.HostConfig) { h.Ulimits = nil }, "ulimits: asked core=0:0,fsize=104857600:104857600,nofile=512:512, engine has "},
		{"core dumps allowed", func(h *container.HostConfig) { h.Ulimits[0] = &units.Ulimit{Name: "core", Soft: -1, Hard: -1} }, "engine has core=-1:-1,"},
		{"file size ulimit dropped", func(h *container.HostConfig) { h.Ulimits = []*units.Ulimit{h.Ulimits[0], h.Ulimits[2]} }, "engine has core=0:0,nofile=512:512"},
		{"open files raised", func(h *container.HostConfig) { h.Ulimits[2] = &units.Ulimit{Name: "nofile", Soft: 512, Hard: 1 << 20} }, "engine has core=0:0,fsize=104857600:104857600,nofile=512:1048576"},
		{"game dir tmpfs dropped", func(h *container.HostConfig) { delete(h.Tmpfs, "/game") }, "tmpfs /game: asked rw,exec,nosuid,nodev,size=33554432,mode=0700,uid=10001,gid=10001, engine has "},
		{"scratch tmpfs grown", func(h *container.HostConfig) { h.Tmpfs["/tmp"] = "rw,exec,nosuid,nodev,mode=1777" }, "tmpfs /tmp: asked rw,exec,nosuid,nodev,size=268435456,mode=1777, engine has rw,exec,nosuid,nodev,mode=1777"},
		{"host pid namespace", func(h *container.HostConfig) { h.PidMode = "host" }, "pid namespace: asked private, engine has host"},
		{"host ipc namespace", func(h *container.HostConfig) { h.IpcMode = "host" }, "ipc namespace: asked private, engine has host"},
		{"shareable ipc namespace", func(h *container.HostConfig) { h.IpcMode = "shareable" }, "ipc namespace: asked private, engine has shareable"},
		{"host user namespace", func(h *container.HostConfig) { h.UsernsMode = "host" }, "user namespace: asked , engine has host"},
		{"a bind mount", func(h *container.HostConfig) { h.Binds = []string{"/:/host"} }, "bind mounts: asked none"},
		{"a bind mount as a mount", func(h *container.HostConfig) {
			h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: "/", Target: "/host"})
		}, "bind mounts: asked none"},
		{"/dev/shm size changed", func(h *container.HostConfig) { h.ShmSize = 0 }, "/dev/shm size: asked 67108864, engine has 0"},
		{"an init process", func(h *container.HostConfig) { h.Init = &yes }, "init process: asked none (the agent is PID 1), engine has true"},
	}
	for _, c := range cases {
		got := want()
		c.change(got)
		err := verifyHostConfig(want(), got)
		if err == nil {
			t.Errorf("%s: accepted", c.what)
			continue
		}
		if !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %q does not say %q", c.what, err, c.err)
		}
		// Exactly one setting is named.
		if n := strings.Count(err.Error(), "asked"); n != 1 {
			t.Errorf("%s: %d settings named in %q", c.what, n, err)
		}
	}
	if err := verifyHostConfig(want(), nil); err == nil {
		t.Error("no host config at all was accepted")
	}
}

func TestGVisorLimitsLeaveTheBotWhatWasSet(t *testing.T) {
	lim, labels := representative()
	gvisor := Runtime{Name: "runsc", Path: "/usr/local/bin/runsc", GVisor: true}
	_, runc := containerConfig("img", Runtime{Name: "runc"}, lim, labels, "")
	_, hc := containerConfig("img", gvisor, lim, labels, "")
	if hc.Runtime != "runsc" {
		t.Errorf("runtime %q", hc.Runtime)
	}
	// The host's cgroup holds gVisor's kernel as well as the bot: it gets
	// room for both, and the bot's own limits come from inside.
	if want := lim.Pids*gvisorPidsPerTask + gvisorPidsBase; *hc.PidsLimit != want {
		t.Errorf("pids limit %d, want %d", *hc.PidsLimit, want)
	}
	if want := lim.Memory + gvisorMemory; hc.Memory != want || hc.MemorySwap != want {
		t.Errorf("memory %d+swap %d, want %d", hc.Memory, hc.MemorySwap, want)
	}
	if got := fmtUlimits(hc.Ulimits); got != fmtUlimits(runc.Ulimits)+",nproc=128:128" {
		t.Errorf("ulimits %s (under runc %s)", got, fmtUlimits(runc.Ulimits))
	}
	// Everything else is asked the same under both runtimes.
	same := *hc
	same.Runtime, same.PidsLimit, same.Memory, same.MemorySwap, same.Ulimits = runc.Runtime, runc.PidsLimit, runc.Memory, runc.MemorySwap, runc.Ulimits
	if !reflect.DeepEqual(&same, runc) {
		t.Errorf("under gVisor\n%+v\nunder runc\n%+v", &same, runc)
	}
	if err := verifyHostConfig(hc, hc); err != nil {
		t.Errorf("gVisor's settings refused: %v", err)
	}
}

func TestResolveRuntime(t *testing.T) {
	info := system.Info{DefaultRuntime: "runc", Runtimes: map[string]system.RuntimeWithStatus{
		"runc":    {Runtime: system.Runtime{Path: "runc"}},
		"runsc":   {Runtime: system.Runtime{Path: "/opt/gvisor/runsc"}},
		"sandbox": {Runtime: system.Runtime{Path: "/usr/local/bin/runsc-20260905"}},
		"crun":    {Runtime: system.Runtime{Path: "/usr/bin/crun"}},
	}}
	for _, c := range []struct {
		name string
		want Runtime
	}{
		{"", Runtime{Name: "runc", Path: "runc"}},
		{"runc", Runtime{Name: "runc", Path: "runc"}},
		{"runsc", Runtime{Name: "runsc", Path: "/opt/gvisor/runsc", GVisor: true}},
		{"sandbox", Runtime{Name: "sandbox", Path: "/usr/local/bin/runsc-20260905", GVisor: true}},
		{"crun", Runtime{Name: "crun", Path: "/usr/bin/crun"}},
	} {
		got, err := ResolveRuntime(info, c.name)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if got := GVisorRuntimes(info); !reflect.DeepEqual(got, []string{"runsc", "sandbox"}) {
		t.Errorf("gVisor runtimes %v", got)
	}
	_, err := ResolveRuntime(system.Info{DefaultRuntime: "runc", Runtimes: map[string]system.RuntimeWithStatus{"runc": {}}}, "runsc")
	var missing *MissingRuntimeError
	if !errors.As(err, &missing) || err.Error() != `the engine has no runtime "runsc" (it has runc)` || !strings.Contains(missing.Fix(), "scripts/runsc.sh") {
		t.Errorf("a missing runsc: %v", err)
	}
	// An engine that lists no runtimes runs runc.
	if got, err := ResolveRuntime(system.Info{}, ""); err != nil || got.Name != "runc" || got.GVisor {
		t.Errorf("an engine listing no runtimes: %+v, %v", got, err)
	}
}
