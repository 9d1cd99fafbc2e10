package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/arenabots/arena/harness/client"
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
	a := &client.Client{Server: e.srv.URL, Token: e.a.Token}
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

// TestAServerKilledMidFinalResumesIt: the organizer starts the final of
// four teams on `arena serve` (the real engine); the server is killed with
// SIGKILL after a few games and started again: it resumes the final on its
// own, and at the end every game of the schedule was played and recorded
// once, the standings count each game once, and no container is left.
func TestAServerKilledMidFinalResumesIt(t *testing.T) {
	t.Parallel()
	cli, _ := dockertest.Engine(t)
	e := newLiveEventWith(t, "game = \"codeclash\"\n[ladder]\nenabled = false\n",
		passedBots(t, nil, "./examples/greedy", "./examples/random", "./examples/random", "./examples/greedy"), "Alpha", "Beta", "Gamma", "Delta")
	board := func() event.Board {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/standings", nil)
		req.Header.Set("Authorization", "Bearer "+e.admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b event.Board
		if err := json.NewDecoder(res.Body).Decode(&b); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("standings: %d %v", res.StatusCode, err)
		}
		return b
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/admin/final", strings.NewReader(`{"games_per_pair": 2, "concurrency": 2}`))
	req.Header.Set("Authorization", "Bearer "+e.admin)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("start the final: %d; server log:\n%s", res.StatusCode, e.srv.Logs())
	}
	first := e.srv.cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Minute); board().Games["done"] < 3; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("3 games of the final were not played in 5 minutes; server log:\n%s", e.srv.Logs())
		}
	}
	e.srv.Kill()

	e.srv = startArena(t, e.dir, e.image)
	second := e.srv.cmd.Process.Pid
	// The restarted server sweeps at once and every 15 s: a create request
	// the killed one left in flight can complete after the first sweep.
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(time.Second) {
		n := ownedBy(t, cli, first)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d containers of the killed server were not swept", n)
			break
		}
	}
	var b event.Board
	for deadline := time.Now().Add(8 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if b = board(); !b.Run.Finished.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed final did not end in 8 minutes: %+v; server log:\n%s", b, e.srv.Logs())
		}
	}
	if !strings.Contains(e.srv.Logs(), "it resumes") {
		t.Errorf("the restarted server did not say it resumes the final:\n%s", e.srv.Logs())
	}
	// The schedule's 12 games, and a playoff's when first place was level.
	total := b.Games["total"]
	if b.Run.Error != "" || total < 12 || b.Games["done"] != total {
		t.Fatalf("the final ended with %+v, want every game of at least 12 played; server log:\n%s", b, e.srv.Logs())
	}
	played := 0
	for _, r := range b.Standings {
		played += r.Games
	}
	if played != 2*12 {
		t.Errorf("the standings count %d games a side, want 24 (a playoff's count in no row): %+v", played, b.Standings)
	}
	e.srv.Stop(t)
	st, err := event.Open(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.FinalVersion(context.Background()); err != nil || !strings.HasPrefix(v, fmt.Sprintf("%d/", total)) {
		t.Errorf("the event recorded %q games of the final (%v), want %d", v, err, total)
	}
	for _, pid := range []int{first, second} {
		if n := ownedBy(t, cli, pid); n != 0 {
			t.Errorf("%d containers of the server with pid %d are left on the engine", n, pid)
		}
	}
}
