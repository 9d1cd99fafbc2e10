package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox/docker"
)

// needs is a game adapter that needs what it lists of the image.
type needs []string

func (needs) Package(map[string][]byte) (map[string][]byte, string, error) { return nil, "", nil }
func (needs) Submission() string                                           { return "" }
func (n needs) Needs() []string                                            { return n }

func TestOffersCheckNamesVersionsAndWhatIsMissing(t *testing.T) {
	facts := func(cmds ...string) *validate.ImageFacts {
		f := &validate.ImageFacts{Glibc: "2.39", Libraries: map[string]bool{"libc.so.6": true, "libm.so.6": true},
			Commands: map[string]bool{"sh": true, "/bin/sh": true}, Versions: map[string]string{}}
		for _, c := range cmds {
			name, ver, _ := strings.Cut(c, " ")
			f.Commands[name] = true
			f.Versions[name] = ver
		}
		return f
	}
	checkers := map[string]rules.Packager{"checkers": needs{"python3", "python3-numpy"}}
	cases := []struct {
		name   string
		facts  *validate.ImageFacts
		games  map[string]rules.Packager
		status docker.Status
		detail string
	}{
		{"everything the event's bots import", facts("python3 3.12.3", "python3-numpy 1.26.4", "python3-pandas 2.1.4", "python3-tabulate 0.8.10"), checkers, docker.OK,
			"glibc 2.39, 2 shared libraries; python3 3.12.3 with numpy 1.26.4, pandas 2.1.4, tabulate 0.8.10; interpreters python3, sh"},
		{"a module without a version", facts("python3 3.13.5", "python3-numpy 2.2.4", "python3-pandas 2.2.3", "python3-tabulate"), nil, docker.OK,
			"python3 3.13.5 with numpy 2.2.4, pandas 2.2.3, tabulate;"},
		{"no pandas, no tabulate", facts("python3 3.12.3", "python3-numpy 1.26.4"), checkers, docker.Warn,
			"python3 3.12.3 with numpy 1.26.4; no pandas, tabulate; interpreters python3, sh"},
		{"no python3", facts(), checkers, docker.Warn,
			"glibc 2.39, 2 shared libraries; no python3; interpreters sh; checkers needs python3, python3-numpy"},
		{"a game's need unmet", facts("python3 3.12.3", "python3-numpy 1.26.4", "python3-pandas 2.1.4", "python3-tabulate 0.8.10"),
			map[string]rules.Packager{"checkers": needs{"python3-scipy"}}, docker.Warn, "; checkers needs python3-scipy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := offersCheck(c.facts, c.games)
			if got.Name != imageOffersCheck || got.Status != c.status || !strings.Contains(got.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s with %q", got.Status, got.Detail, c.status, c.detail)
			}
			if (got.Status == docker.OK) != (got.Fix == "") {
				t.Fatalf("status %s with fix %q", got.Status, got.Fix)
			}
		})
	}
}

func TestImageOffersFollowsTheRuntimeImageRow(t *testing.T) {
	checks := []docker.Check{{Name: "engine", Status: docker.OK}, {Name: "runtime image", Status: docker.Fail}, {Name: "hardened container", Status: docker.Skip}}
	got := withImageOffers(context.Background(), nil, "none", checks)
	var names []string
	for _, c := range got {
		names = append(names, c.Name+"="+string(c.Status))
	}
	if want := "engine=ok runtime image=fail image offers=skip hardened container=skip"; strings.Join(names, " ") != want {
		t.Fatalf("rows %s, want %s", strings.Join(names, " "), want)
	}
}

// versions are what the test base's Debian packages put in the image.
var versions = regexp.MustCompile(`python3 3\.\d+\.\d+ with numpy \d+\.\d+\S*, pandas \d+\.\d+\S*, tabulate \d+\.\d+\S*;`)

func TestDoctorListsWhatTheRuntimeImageOffers(t *testing.T) {
	cli, img := dockertest.Engine(t)
	code, out, errs := runArena("doctor", "--json", "--image", img)
	if code != exitOK && code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var checks []docker.Check
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json printed %q: %v", out, err)
	}
	var row *docker.Check
	for i, c := range checks {
		if c.Name == imageOffersCheck {
			row = &checks[i]
			if i == 0 || checks[i-1].Name != "runtime image" {
				t.Errorf("%s is not right after the runtime image's row", imageOffersCheck)
			}
		}
	}
	if row == nil || row.Status != docker.OK || !versions.MatchString(row.Detail) || !strings.Contains(row.Detail, "glibc 2.") {
		t.Fatalf("the image offers row: %+v\nall rows: %+v", row, checks)
	}

	// The same image without pandas and tabulate: doctor warns and names them.
	bare := withoutModules(t, cli, img, "pandas", "tabulate")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := probeImageOffers(ctx, cli, bare)
	if got.Status != docker.Warn || !strings.Contains(got.Detail, "; no pandas, tabulate;") || !strings.Contains(got.Detail, "with numpy ") {
		t.Fatalf("without pandas and tabulate: %+v", got)
	}
}

// withoutModules builds an image from img with the Python modules' packages
// removed, and removes it when the test ends.
func withoutModules(t *testing.T, cli *client.Client, img string, modules ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag := fmt.Sprintf("arena-runtime:test-without-%s-%d", strings.Join(modules, "-"), time.Now().UnixNano())
	dockerfile := fmt.Sprintf("FROM %s\nRUN cd /usr/lib/python3/dist-packages && rm -rf %s\n", img, strings.Join(modules, " "))
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))})
	tw.Write([]byte(dockerfile))
	tw.Close()
	resp, err := cli.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, NetworkMode: "none"})
	if err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	defer resp.Body.Close()
	var log bytes.Buffer
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, &log, 0, false, nil); err != nil {
		t.Fatalf("build %s: %v\n%s", tag, err, log.String())
	}
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("remove %s: %v", tag, err)
		}
	})
	return tag
}
