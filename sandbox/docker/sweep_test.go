package docker_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/docker"
)

// A killed run's last create request can complete after the sweep at the
// start: an open backend sweeps again while it is open, so a server that
// runs for days does not keep what a killed one left. (Not parallel: it
// changes how often every backend opened meanwhile sweeps.)
func TestAnOpenBackendSweepsWhatAKilledRunLeftLater(t *testing.T) {
	cli, image := dockertest.Engine(t)
	defer docker.SetSweepEvery(200 * time.Millisecond)()
	ctx := context.Background()
	_, release, err := sandbox.Open(ctx, sandbox.Config{Kind: "docker", Image: image, Backend: docker.Conn{Host: cli.DaemonHost()}, Sweep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := release(); err != nil {
			t.Error(err)
		}
	}()
	host, _ := os.Hostname()
	// PID 1 runs, but not since this start time: the owner is gone.
	dead := host + "/1/0"
	c, err := cli.ContainerCreate(ctx, &container.Config{Image: image, Cmd: []string{"true"},
		Labels: map[string]string{docker.LabelOwner: dead, "org.arenabots.arena.test": t.Name()}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cli.ContainerRemove(context.WithoutCancel(ctx), c.ID, container.RemoveOptions{Force: true})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := cli.ContainerInspect(ctx, c.ID); err != nil {
			break // swept
		}
		if time.Now().After(deadline) {
			t.Fatal("a container of a dead run, created after the backend opened, was not swept while it stayed open")
		}
	}
}
