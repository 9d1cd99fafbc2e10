package images_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/arenabots/arena/images"
	"github.com/arenabots/arena/internal/dockertest"
)

func TestAPushedImageNamesItsRegistry(t *testing.T) {
	for tag, want := range map[string]string{
		"registry.example:5000/arena-runtime:1": "registry.example:5000",
		"registry.example/arena/runtime:1":      "registry.example",
		"localhost/arena-runtime":               "localhost",
		"127.0.0.1:5000/arena-runtime:x":        "127.0.0.1:5000",
		"arena-runtime:ubuntu24.04":             "",
		"arena/runtime:1":                       "",
		"docker.io/arena/runtime:1":             "docker.io",
		"Registry.Example/UPPER:1":              "",
	} {
		got, err := images.RegistryOf(tag)
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: pushed to %s, want refused", tag, got)
		case want == "" && !strings.Contains(err.Error(), tag):
			t.Errorf("%s: the error does not name the tag: %v", tag, err)
		case want != "" && (err != nil || got != want):
			t.Errorf("%s: %q, %v; want %q", tag, got, err, want)
		}
	}
}

// Push sends an image to the registry its tag names (one served by this
// test, which the engine reaches on the loopback): the registry then holds
// its manifest. A registry that refuses is an error.
func TestPushSendsTheImageToItsRegistry(t *testing.T) {
	t.Parallel()
	cli, _ := dockertest.Engine(t)
	ctx := context.Background()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	// A small image of one file: the push is the engine's whatever the size.
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	tw.WriteHeader(&tar.Header{Name: "hello", Mode: 0o644, Size: 5})
	tw.Write([]byte("hello"))
	tw.Close()
	tag := host + "/arena-push-test:1"
	rc, err := cli.ImageImport(ctx, image.ImportSource{Source: &layer, SourceName: "-"}, tag, image.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, rc)
	rc.Close()
	t.Cleanup(func() { cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true}) })

	var out bytes.Buffer
	if err := images.Push(ctx, cli, tag, "", "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	req, _ := http.NewRequest(http.MethodGet, reg.URL+"/v2/arena-push-test/manifests/1", nil)
	req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the registry answers %s for the pushed image", resp.Status)
	}

	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"errors":[{"code":"DENIED","message":"no pushes here"}]}`, http.StatusForbidden)
	}))
	defer refusing.Close()
	denied := strings.TrimPrefix(refusing.URL, "http://") + "/arena-push-test:1"
	if err := cli.ImageTag(ctx, tag, denied); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), denied, image.RemoveOptions{Force: true}) })
	if err := images.Push(ctx, cli, denied, "", "", io.Discard); err == nil {
		t.Error("a push the registry refused succeeded")
	}
}
