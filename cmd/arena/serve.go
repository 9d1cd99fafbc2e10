//go:build !team

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/harness/build"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/server"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/web"
	"github.com/arenabots/arena/sandbox"
)

// serveEvent runs the event server; tests replace it to read the options
// serve builds.
var serveEvent = server.Serve

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "run an event's server: team logins, uploads validated as they arrive, reports and games",
		UsageText: "arena serve --event DIR [--http ADDR] [--tls-cert FILE --tls-key FILE] [options]",
		Description: `Serves the event in DIR (arena event init makes one): teams log in with their
token, upload submissions and read their validation reports; each upload is
validated in the sandbox the way arena validate does it, --validators at a
time, with the game, rules and limits of DIR/event.toml. A bad event.toml is
refused with its line and the reason. Ctrl-C stops the server: validations
under way are cut short and queued again at the next start.

Without --tls-cert the server speaks plain HTTP: put it behind a reverse proxy
that speaks HTTPS (and pass --trust-proxy), or keep it on 127.0.0.1. The
Docker engine's own TLS settings are the global --docker-tls-ca,
--docker-tls-cert and --docker-tls-key, given before 'serve'.

Logs go to stderr; --log-level info (before 'serve') also logs each validation.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "event", Usage: "the event's directory: event.toml, the database, uploads and validations (arena event init makes one)", TakesFile: true},
			&cli.StringFlag{Name: "http", Value: "127.0.0.1:8080", Usage: "address to listen on, HOST:PORT (port 0: any free port; the address is printed)"},
			&cli.StringFlag{Name: "metrics-listen", Usage: "serve Prometheus metrics on /metrics at HOST:PORT, apart from the site (docs/operations.md)", DefaultText: "none"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this certificate (PEM; with --tls-key)", TakesFile: true},
			&cli.StringFlag{Name: "tls-key", Usage: "the private key of --tls-cert (PEM)", TakesFile: true},
			&cli.StringFlag{Name: "trust-proxy", Usage: "behind reverse proxies: how many stand in front (1 for one nginx), or their addresses and networks (10.0.0.5,10.1.0.0/16); the client's address is then the right-most hop of X-Forwarded-For they did not add, and the scheme X-Forwarded-Proto (without it, both are ignored: clients could forge them)"},
			&cli.IntFlag{Name: "validators", Usage: "how many validations run at once (default: as many as the host's cores fit with the games, at the bots' CPU limit; more is taken with a warning)", DefaultText: "the host's"},
			&cli.IntFlag{Name: "games", Usage: "how many scrimmages and ladder pairs are played at once (default: as many as the host's cores fit; with workers: as many as their slots)", DefaultText: "the host's"},
			flagNamed(matchFlags(), "sandbox"),
			imageFlag(),
			flagNamed(matchFlags(), "runtime"),
			flagNamed(buildFlags(), "build-cache"),
		}, distribFlags()...),
		Action: func(c *cli.Context) error {
			o, err := serveOptions(c)
			if err != nil {
				return err
			}
			err = serveEvent(c.Context, o)
			var unknown *sandbox.UnknownKindError
			if errors.As(err, &unknown) {
				return usagef("--sandbox: %v", err)
			}
			var bad *tournament.ConfigError
			if errors.As(err, &bad) {
				return usagef("--listen/--nats: %v", err)
			}
			return err
		},
	}
}

// serveOptions reads serve's flags.
func serveOptions(c *cli.Context) (server.Options, error) {
	dir := c.String("event")
	switch {
	case c.NArg() > 0:
		return server.Options{}, usagef("serve takes no arguments (got %q); name the event's directory with --event", c.Args().Slice())
	case dir == "":
		return server.Options{}, usagef("--event is required: the event's directory (arena event init DIR --game G makes one)")
	case (c.String("tls-cert") == "") != (c.String("tls-key") == ""):
		return server.Options{}, usagef("--tls-cert and --tls-key go together: give both to serve HTTPS, or neither")
	case c.IsSet("validators") && c.Int("validators") < 1:
		return server.Options{}, usagef("--validators: want 1 or more, got %d", c.Int("validators"))
	case c.IsSet("games") && c.Int("games") < 1:
		return server.Options{}, usagef("--games: want 1 or more, got %d", c.Int("games"))
	}
	if _, err := os.Stat(filepath.Join(dir, event.ConfigFile)); errors.Is(err, fs.ErrNotExist) {
		return server.Options{}, notAnEvent(dir)
	}
	if _, err := web.ParseProxies(c.String("trust-proxy")); err != nil {
		return server.Options{}, usagef("--trust-proxy: %v", err)
	}
	cache, err := build.CacheDir(c.String("build-cache"))
	if err != nil {
		return server.Options{}, fmt.Errorf("%w (--build-cache)", err)
	}
	secure := c.String("tls-cert") != ""
	settings, err := backendSettings(appContext(c), c.String("sandbox"))
	if err != nil {
		return server.Options{}, err
	}
	workers, err := remoteOf(c, dir)
	if err != nil {
		return server.Options{}, err
	}
	return server.Options{
		EventDir: dir, Addr: c.String("http"), MetricsAddr: c.String("metrics-listen"), TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"),
		TrustProxy: c.String("trust-proxy"), Validators: c.Int("validators"), Games: c.Int("games"), Workers: workers,
		Sandbox: sandbox.Config{Kind: c.String("sandbox"), Image: c.String("image"), Runtime: c.String("runtime"), Backend: settings,
			Notify: func(msg string) { slog.Warn(msg) }},
		BuildCache: cache, Log: slog.Default(), ArenaVersion: arenaVersion(),
		Ready: func(addr string) {
			scheme := "http"
			if secure {
				scheme = "https"
			}
			fmt.Fprintf(c.App.ErrWriter, "arena: serving the event in %s at %s://%s (Ctrl-C stops it)\n", dir, scheme, addr)
		},
	}, nil
}
