package images_test

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

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

// A runtime image built on a test base of another recipe is built, with a
// warning that says how to get the current one.
func TestBuildingOnAStaleTestbaseWarns(t *testing.T) {
	cli, _ := dockertest.Engine(t)
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	stale := "arena-testbase:test-stale-" + id
	buildFrom(t, cli, stale, "FROM "+images.TestbaseTag()+"\nLABEL "+images.LabelTestbase+"=0000\n")
	agent := gobuild.MustStatic(t, "./cmd/arena-agent")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	for i, c := range []struct {
		base string
		warn bool
	}{{stale, true}, {images.TestbaseTag(), false}} {
		tag := "arena-runtime:test-on-testbase-" + id + "-" + strconv.Itoa(i)
		t.Cleanup(func() {
			cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
		})
		var out bytes.Buffer
		if _, err := images.BuildRuntime(ctx, cli, images.RuntimeOptions{Tag: tag, Base: c.base, Agent: agent, Out: &out}); err != nil {
			t.Fatalf("build on %s: %v\n%s", c.base, err, out.String())
		}
		warned := strings.Contains(out.String(), "warning: the base "+c.base+" was built from another test base recipe")
		if warned != c.warn || (c.warn && !strings.Contains(out.String(), "arena image testbase")) {
			t.Errorf("build on %s: warned %v, want %v:\n%s", c.base, warned, c.warn, out.String())
		}
	}
}

func buildFrom(t *testing.T, cli *client.Client, tag, dockerfile string) {
	t.Helper()
	dockertest.BuildImage(t, cli, tag, dockerfile)
}

// The runtime image's recipe installs only what its base lacks, and says
// so: on the test base without nodejs and with no package archive within
// reach, it names nodejs and nothing else, and fails with the offline fix.
func TestTheRuntimeRecipeInstallsWhatTheBaseLacks(t *testing.T) {
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
