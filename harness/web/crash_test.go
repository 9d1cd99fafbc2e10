package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox/docker"
)

// TestAServerKilledMidValidationLosesNothing: `arena serve` killed with
// SIGKILL while it validates an upload comes back with the upload kept, the
// validation done again to the end, and no container of either process left
// on the engine.
func TestAServerKilledMidValidationLosesNothing(t *testing.T) {
	t.Parallel()
	cli, _ := dockertest.Engine(t)
	e := newLiveEvent(t, "game = \"codeclash\"\n")
	a := &Client{Server: e.srv.URL, Token: e.a.Token}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	data := exampleZip(t, "python")
	sub, err := a.Upload(ctx, writeFile(t, "python.zip", data))
	if err != nil {
		t.Fatal(err)
	}
	// Kill it once the bot runs: its containers exist then.
	first := e.srv.cmd.Process.Pid
	deadline := time.Now().Add(3 * time.Minute)
	for {
		s, err := a.Submission(ctx, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == event.Validating {
			break
		}
		if event.Done(s.State) || time.Now().After(deadline) {
			t.Fatalf("the validation was %s before the kill; server log:\n%s", s.State, e.srv.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	e.srv.Kill()
	if n := ownedBy(t, cli, first); n == 0 {
		t.Log("no container of the killed server was left to sweep (it was between turns)")
	}

	e.srv = startArena(t, e.dir, e.image)
	second := e.srv.cmd.Process.Pid
	a.Server = e.srv.URL
	done, err := a.Wait(ctx, sub.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != event.Passed {
		t.Errorf("after the restart the validation is %s (%s); server log:\n%s", done.State, done.Summary, e.srv.Logs())
	}
	if !strings.Contains(e.srv.Logs(), "queued again") {
		t.Errorf("the restarted server did not say it queued the validation again:\n%s", e.srv.Logs())
	}
	kept, err := os.ReadFile(filepath.Join(e.dir, event.UploadsDir, sub.SHA256, sub.Filename))
	if err != nil || string(kept) != string(data) {
		t.Errorf("the upload is not kept as sent: %v", err)
	}
	e.srv.Stop(t)
	for _, pid := range []int{first, second} {
		if n := ownedBy(t, cli, pid); n != 0 {
			t.Errorf("%d containers of the server with pid %d are left on the engine", n, pid)
		}
	}
}

// ownedBy counts the containers arena's process pid on this host owns.
func ownedBy(t *testing.T, cli interface {
	ContainerList(context.Context, container.ListOptions) ([]container.Summary, error)
}, pid int) int {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelOwner))})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range list {
		if strings.HasPrefix(c.Labels[docker.LabelOwner], fmt.Sprintf("%s/%d/", host, pid)) {
			n++
		}
	}
	return n
}
