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

	"github.com/arenabots/arena/internal/setting"
	"github.com/arenabots/arena/sandbox"
)

// Conn says how to reach a Docker engine: the docker backend's own
// settings (sandbox.Config.Backend).
type Conn struct {
	// Host is the engine address (unix:///var/run/docker.sock, tcp://host:2376).
	// Empty means DOCKER_HOST, then the platform default.
	Host string
	// TLS settings for a remote engine. TLS is used when any file is set or
	// Verify is true.
	CACert, Cert, Key string
	Verify            bool
}

// connOf is the engine cfg names for the docker backend.
func connOf(cfg sandbox.Config) (Conn, error) { return sandbox.SettingsOf[Conn]("docker", cfg) }

// dialOf dials the engine cfg names (Dial).
func dialOf(ctx context.Context, cfg sandbox.Config) (*client.Client, error) {
	c, err := connOf(cfg)
	if err != nil {
		return nil, err
	}
	return Dial(ctx, c)
}

func usesTLS(c Conn) bool { return c.CACert != "" || c.Cert != "" || c.Key != "" || c.Verify }

// Connect returns a client for the engine, with the API version negotiated
// against the server on first use.
func Connect(c Conn) (*client.Client, error) {
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	if usesTLS(c) {
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

// Dial connects to the engine and checks that it answers; the error says how
// to get one that does.
func Dial(ctx context.Context, c Conn) (*client.Client, error) {
	cli, err := Connect(c)
	if err != nil {
		return nil, err
	}
	if err := Ping(ctx, cli); err != nil {
		cli.Close()
		return nil, unanswered(err)
	}
	return cli, nil
}

// unanswered is Ping's error, saying how to get an engine that answers.
func unanswered(err error) error {
	return setting.Errorf(setting.DockerHost, "%w (start it, e.g. with scripts/ensure-docker.sh, or point {setting} at one)", err)
}
