package main

import (
	"strings"
	"testing"
)

// arena image build --push refuses a tag that names no registry (it would
// go to Docker Hub) before anything is built. images.Push is tested
// against a registry in the images package.
func TestImageBuildPushNeedsARegistry(t *testing.T) {
	t.Parallel()
	code, _, errs := runArena("image", "build", "--tag", "arena-runtime:unpushed", "--push")
	if code != 2 || !strings.Contains(errs, `"arena-runtime:unpushed" names no registry`) {
		t.Errorf("a tag without a registry: exit %d\n%s", code, errs)
	}
}
