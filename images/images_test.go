package images_test

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	imagebuild "github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/arenabots/arena/images"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
)

// The recipe and arena must agree on the tag, or tests would look for an
// image the recipe never builds.
func TestTheRecipeBuildsUnderTestbaseTag(t *testing.T) {
	out, err := exec.Command("bash", "testbase/build.sh", "--print-tag").Output()
	if err != nil {
		t.Fatalf("build.sh --print-tag: %v", err)
	}
	got := strings.TrimSpace(string(out))
	if got != images.TestbaseTag() {
		t.Fatalf("the recipe builds %s, arena looks for %s", got, images.TestbaseTag())
	}
	if !strings.HasPrefix(got, images.DefaultTestbase+"-") || len(got) != len(images.DefaultTestbase)+13 {
		t.Fatalf("tag %s is not the short name and 12 digits of the recipe's hash", got)
	}
}

// A test base of another recipe is said to be stale, with how to get the
// current one; the current one and other bases are not.
func TestStaleBase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		labels map[string]string
		stale  bool
	}{
		{map[string]string{images.LabelTestbase: "0000"}, true},
		{map[string]string{images.LabelTestbase: images.TestbaseRecipe()}, false},
		{map[string]string{"other": "label"}, false},
		{nil, false},
	} {
		w := images.StaleBase("base:x", c.labels)
		if (w != "") != c.stale || (c.stale && !strings.Contains(w, "arena image testbase")) {
			t.Errorf("labels %v: %q, stale %v", c.labels, w, c.stale)
		}
	}
}

// A runtime image built on a stale test base says so before it builds: the
// build is stopped once the warning is out.
func TestBuildingOnAStaleTestbaseWarns(t *testing.T) {
	t.Parallel()
	cli, _ := dockertest.Engine(t)
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	stale := "arena-testbase:test-stale-" + id
	buildFrom(t, cli, stale, "FROM "+images.TestbaseTag()+"\nLABEL "+images.LabelTestbase+"=0000\n")
	agent := gobuild.MustStatic(t, "./cmd/arena-agent")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag := "arena-runtime:test-on-testbase-" + id
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	out := &stopAt{want: "warning: the base " + stale, stop: cancel}
	images.BuildRuntime(ctx, cli, images.RuntimeOptions{Tag: tag, Base: stale, Agent: agent, Out: out})
	if !strings.Contains(out.String(), "warning: "+images.StaleBase(stale, map[string]string{images.LabelTestbase: "0000"})) {
		t.Errorf("no warning about the stale base:\n%s", out.String())
	}
}

// stopAt is a build's output that stops the build once it holds want.
type stopAt struct {
	bytes.Buffer
	want string
	stop func()
}

func (s *stopAt) Write(p []byte) (int, error) {
	n, err := s.Buffer.Write(p)
	if strings.Contains(s.String(), s.want) {
		s.stop()
	}
	return n, err
}

func buildFrom(t *testing.T, cli *client.Client, tag, dockerfile string) {
	t.Helper()
	dockertest.BuildImage(t, cli, tag, dockerfile)
}

// The runtime image's recipe installs only what its base lacks, and says
// so: on the test base without nodejs and with no package archive within
// reach, it names nodejs and nothing else, and fails with the offline fix.
func TestTheRuntimeRecipeInstallsWhatTheBaseLacks(t *testing.T) {
	t.Parallel()
	cli, _ := dockertest.Engine(t)
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	base := "arena-testbase:test-without-node-" + id
	buildFrom(t, cli, base, "FROM "+images.TestbaseTag()+"\n"+
		"RUN dpkg --purge --force-depends nodejs && rm -rf /etc/apt/sources.list.d && "+
		"echo 'deb http://127.0.0.1:9/debian trixie main' >/etc/apt/sources.list\n")
	agent := gobuild.MustStatic(t, "./cmd/arena-agent")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag := "arena-runtime:test-without-node-" + id
	t.Cleanup(func() {
		cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	var out bytes.Buffer
	_, err := images.BuildRuntime(ctx, cli, images.RuntimeOptions{Tag: tag, Base: base, Agent: agent, Out: &out})
	if err == nil {
		t.Fatalf("built without node and without an archive:\n%s", out.String())
	}
	for _, want := range []string{"installing: nodejs\n", "installing nodejs needs the distribution's package archive; offline, build on the test base"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the build's output:\n%s", want, out.String())
		}
	}
}

// The server's image (images/server/Dockerfile) builds with no network
// from the runtime image and the static arena with its random bot and the
// team's build the site offers, runs arena as the user of
// its own the Deployment names, on a read-only root with no capability,
// and has the shell and tar the Deployment's wait for the event and the
// copy of it into the volume use.
func TestTheServerImageBuildsOffline(t *testing.T) {
	t.Parallel()
	cli, runtime := dockertest.Engine(t)
	dockerfile, err := os.ReadFile("server/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	arenaPath := gobuild.MustStatic(t, "./cmd/arena")
	arena, err := os.ReadFile(arenaPath)
	if err != nil {
		t.Fatal(err)
	}
	random, err := os.ReadFile(filepath.Join(filepath.Dir(arenaPath), "arena-random"))
	if err != nil {
		t.Fatal(err)
	}
	teamPath, err := gobuild.Tagged("./cmd/arena", "arena-team", "team")
	if err != nil {
		t.Fatal(err)
	}
	team, err := os.ReadFile(teamPath)
	if err != nil {
		t.Fatal(err)
	}
	var bctx bytes.Buffer
	tw := tar.NewWriter(&bctx)
	for _, f := range []struct {
		name string
		data []byte
		mode int64
	}{{"Dockerfile", dockerfile, 0o644}, {"arena", arena, 0o755}, {"arena-random", random, 0o755}, {"arena-team", team, 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag := "arena-server:test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	resp, err := cli.ImageBuild(ctx, &bctx, imagebuild.ImageBuildOptions{Tags: []string{tag}, BuildArgs: map[string]*string{"BASE": &runtime},
		Remove: true, ForceRemove: true, NetworkMode: "none"})
	if err != nil {
		t.Fatalf("build the server image: %v", err)
	}
	var log bytes.Buffer
	err = jsonmessage.DisplayJSONMessagesStream(resp.Body, &log, 0, false, nil)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("build the server image: %v\n%s", err, log.String())
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("remove %s: %v", tag, err)
		}
	})
	info, err := cli.ImageInspect(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config == nil || info.Config.User != "65532:65532" || strings.Join(info.Config.Entrypoint, " ") != "/usr/local/bin/arena" {
		t.Errorf("the image runs %v as %q, want /usr/local/bin/arena as 65532:65532", info.Config.Entrypoint, info.Config.User)
	}
	run := func(entrypoint []string, cmd ...string) string {
		t.Helper()
		c, err := cli.ContainerCreate(ctx, &container.Config{Image: tag, Entrypoint: entrypoint, Cmd: cmd, Labels: dockertest.Labels(t)},
			&container.HostConfig{NetworkMode: "none", ReadonlyRootfs: true, CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"},
				Tmpfs: map[string]string{"/tmp": ""}}, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}); err != nil {
				t.Errorf("remove the container: %v", err)
			}
		}()
		waited, errs := cli.ContainerWait(ctx, c.ID, container.WaitConditionNextExit)
		if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		var code int64
		select {
		case w := <-waited:
			code = w.StatusCode
		case err := <-errs:
			t.Fatal(err)
		}
		logs, err := cli.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
		if err != nil {
			t.Fatal(err)
		}
		defer logs.Close()
		var out bytes.Buffer
		if _, err := stdcopy.StdCopy(&out, &out, logs); err != nil {
			t.Fatal(err)
		}
		if code != 0 {
			t.Errorf("%v %v: exit %d\n%s", entrypoint, cmd, code, out.String())
		}
		return out.String()
	}
	if out := run(nil, "--version"); !strings.HasPrefix(out, "arena ") {
		t.Errorf("arena --version in the image says %q", out)
	}
	if out := run([]string{"sh", "-c", "id -u; tar --version | head -n 1"}); !strings.HasPrefix(out, "65532\n") || !strings.Contains(out, "GNU tar") {
		t.Errorf("the image's user and tar: %q, want 65532 and GNU tar", out)
	}
	// Validation's opponent is beside arena, where arena finds it.
	start := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
	if out := run([]string{"sh", "-c", "echo '" + start + "' | /usr/local/bin/arena-random chess"}); len(strings.TrimSpace(out)) != 4 {
		t.Errorf("arena-random in the image answers chess's start with %q, want a move", out)
	}
	// What the site offers teams is beside it too, and is a team's arena.
	if out := run([]string{"/usr/local/bin/arena-team", "--help"}); !strings.Contains(out, "\n   validate ") || strings.Contains(out, "\n   serve ") {
		t.Errorf("arena-team in the image is not a team's arena: its help says\n%s", out)
	}
}
