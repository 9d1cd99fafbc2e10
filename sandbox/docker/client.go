package docker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/docker/docker/client"
	"github.com/docker/go-connections/tlsconfig"
)

// Conn says how to reach a Docker engine.
type Conn struct {
	// Host is the engine address (unix:///var/run/docker.sock, tcp://host:2376).
	// Empty means DOCKER_HOST, then the platform default.
	Host string
	// TLS settings for a remote engine. TLS is used when any file is set or
	// Verify is true.
	CACert, Cert, Key string
	Verify            bool
}

func (c Conn) usesTLS() bool { return c.CACert != "" || c.Cert != "" || c.Key != "" || c.Verify }

// Connect returns a client for the engine, with the API version negotiated
// against the server on first use.
func Connect(c Conn) (*client.Client, error) {
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	if c.usesTLS() {
		tlsc, err := tlsconfig.Client(tlsconfig.Options{
			CAFile:             c.CACert,
			CertFile:           c.Cert,
			KeyFile:            c.Key,
			InsecureSkipVerify: !c.Verify,
			ExclusiveRootPools: c.CACert != "",
		})
		if err != nil {
			return nil, fmt.Errorf("docker TLS settings: %w", err)
		}
		opts = append(opts, client.WithHTTPClient(&http.Client{
			Transport:     &http.Transport{TLSClientConfig: tlsc},
			CheckRedirect: client.CheckRedirect,
		}))
	}
	host := c.Host
	if host == "" {
		host = os.Getenv("DOCKER_HOST")
	}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client for %q: %w", host, err)
	}
	return cli, nil
}

// Ping checks that the engine answers within a few seconds and negotiates the API
// version. The error says where we looked.
func Ping(ctx context.Context, cli *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no Docker engine answered at %s within 5s", cli.DaemonHost())
		}
		return fmt.Errorf("no Docker engine answered at %s: %w", cli.DaemonHost(), err)
	}
	cli.NegotiateAPIVersion(ctx)
	return nil
}
