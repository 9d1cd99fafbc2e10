package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"testing"
	"time"

	imagebuild "github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
)

// BuildImage builds tag from a one-file Dockerfile, offline (no network),
// and removes it when the test ends.
func BuildImage(tb testing.TB, cli *client.Client, tag, dockerfile string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var bctx bytes.Buffer
	tw := tar.NewWriter(&bctx)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))}); err != nil {
		tb.Fatal(err)
	}
	if _, err := tw.Write([]byte(dockerfile)); err != nil {
		tb.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	resp, err := cli.ImageBuild(ctx, &bctx, imagebuild.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, NetworkMode: "none"})
	if err != nil {
		tb.Fatalf("build %s: %v", tag, err)
	}
	defer resp.Body.Close()
	var log bytes.Buffer
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, &log, 0, false, nil); err != nil {
		tb.Fatalf("build %s: %v\n%s", tag, err, log.String())
	}
	tb.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			tb.Errorf("remove %s: %v", tag, err)
		}
	})
}
