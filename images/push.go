package images

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
)

// RegistryOf is the registry an image's name names ("registry.example:5000"
// for "registry.example:5000/arena/runtime:1"), or an error when the name
// names none: pushing it would send it to Docker Hub, which is never what
// an event means.
func RegistryOf(tag string) (string, error) {
	named, err := reference.ParseNormalizedNamed(tag)
	if err != nil {
		return "", fmt.Errorf("%q is not an image name: %w", tag, err)
	}
	first, _, ok := strings.Cut(tag, "/")
	if !ok || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		return "", fmt.Errorf("%q names no registry: push REGISTRY/NAME:TAG (e.g. registry.example:5000/arena-runtime:1)", tag)
	}
	return reference.Domain(named), nil
}

// Push sends the image tag, on the engine, to the registry its name names
// (RegistryOf), as user with password when user is not empty, writing the
// engine's progress to out. A failure the engine reports while pushing is
// an error.
func Push(ctx context.Context, cli *client.Client, tag, user, password string, out io.Writer) error {
	reg, err := RegistryOf(tag)
	if err != nil {
		return err
	}
	auth, err := json.Marshal(registry.AuthConfig{Username: user, Password: password, ServerAddress: reg})
	if err != nil {
		return err
	}
	rc, err := cli.ImagePush(ctx, tag, image.PushOptions{RegistryAuth: base64.URLEncoding.EncodeToString(auth)})
	if err != nil {
		return fmt.Errorf("push %s: %w", tag, err)
	}
	defer rc.Close()
	if err := jsonmessage.DisplayJSONMessagesStream(rc, out, 0, false, nil); err != nil {
		return fmt.Errorf("push %s: %w", tag, err)
	}
	return nil
}
