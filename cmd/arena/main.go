// Command arena runs untrusted game-playing bots safely and fairly: it validates
// submissions, plays official matches and tournaments in hardened containers, and
// keeps the evidence to settle disputes.
//
// This package is wiring: each command reads its flags into the config value
// of the package that owns the work (sandbox.Config, settings.Settings,
// tournament.Config, runner.Remote and runner.Join, the build and
// validate packages), makes one call, and prints what came back. It must
// never decide anything a server or a test would have to decide again: which
// backend, which rules, whether a configuration may resume, whether a worker
// may play, what a result counts for.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/docker/docker/client"
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/internal/setting"
	"github.com/arenabots/arena/sandbox/docker"
	_ "github.com/arenabots/arena/sandbox/local" // registers the local backend
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// Exit codes, documented in the help text.
const (
	exitOK      = 0
	exitFailed  = 1 // the thing checked or played failed (doctor check, aborted match)
	exitUsage   = 2 // bad usage, unreadable input, or an infrastructure error
	helpExitTxt = `EXIT CODES:
   0  success
   1  the checked thing failed (a doctor check, an illegal move, an aborted match, a
      tournament with games unplayed or interrupted, a final that cannot start)
   2  bad usage, unreadable input, or an infrastructure error`
)

// failure is an error that means "the checked thing failed" (exit 1).
type failure struct{ msg string }

func (f failure) Error() string { return f.msg }

func failf(format string, a ...any) error { return failure{fmt.Sprintf(format, a...)} }

// usageErr is bad usage or unreadable input (exit 2).
type usageErr struct{ msg string }

func (u usageErr) Error() string { return u.msg }

func usagef(format string, a ...any) error { return usageErr{fmt.Sprintf(format, a...)} }

// silent is an exit code whose message was already printed.
type silent int

func (s silent) Error() string { return fmt.Sprintf("exit %d", int(s)) }

func arenaVersion() string {
	if version != "" {
		return version
	}
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, closed := context.WithCancelCause(ctx)
	// A reader that goes away (arena match | head) ends the work like Ctrl-C
	// does: the write fails with EPIPE instead of the signal killing arena
	// with its containers still on the engine.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	stdout := &pipeWatch{w: os.Stdout, closed: closed}
	code := run(ctx, os.Args, stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errStdoutClosed is why work ends when its output cannot be written.
var errStdoutClosed = errors.New("standard output was closed")

// pipeWatch is stdout that ends the run when its reader has gone.
type pipeWatch struct {
	w      io.Writer
	closed context.CancelCauseFunc
}

func (p *pipeWatch) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.closed(errStdoutClosed)
	}
	return n, err
}

// run is main without the process: tests call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	notFound := false
	app.CommandNotFound = func(c *cli.Context, name string) {
		if why := notInThisBuild(name); why != "" {
			fmt.Fprintf(stderr, "arena: %s\n", why)
		} else {
			fmt.Fprintf(stderr, "arena: unknown command %q (see arena --help)\n", name)
		}
		notFound = true
	}
	err := app.RunContext(ctx, interspersed(app, args))
	if notFound {
		return exitUsage
	}
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var s silent
	if errors.As(err, &s) {
		return int(s)
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := setting.Named(err, flagOf); msg != "" {
			fmt.Fprintln(stderr, "arena:", msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(stderr, "arena:", setting.Named(err, flagOf))
	var f failure
	if errors.As(err, &f) {
		return exitFailed
	}
	return exitUsage
}

// flagOf is the flag that gives what a library's error is about (an
// error of internal/setting): its text then names the flag to change.
func flagOf(s setting.Name) string {
	switch s {
	case setting.DockerHost:
		return "--docker-host"
	case setting.Kubeconfig:
		return "--kube-config"
	case setting.Namespace:
		return "--kube-namespace"
	case setting.Agent:
		return "--agent"
	case setting.TrustProxy:
		return "--trust-proxy"
	case setting.MetricsListen:
		return "--metrics-listen"
	}
	return ""
}

// The version is printed to the app's own writer; set once, since tests
// run apps at once in one process.
func init() {
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, "arena", arenaVersion()) }
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "arena",
		Usage:     "run untrusted game-playing bots safely and fairly",
		UsageText: "arena [global options] command [command options] [arguments...]",
		Description: `arena validates bot submissions, plays official matches and tournaments with
each bot in its own hardened container, and keeps the evidence to settle
disputes. The flagship game is Code Clash 5x5 chess.

Start with 'arena doctor' to check this host, then 'arena match'.`,
		Version:                arenaVersion(),
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		Suggest:                true,
		UseShortOptionHandling: true,
		CustomAppHelpTemplate:  cli.AppHelpTemplate + "\n" + helpExitTxt + "\n",
		ExitErrHandler:         func(*cli.Context, error) {}, // exit codes are decided in run
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			if now := renamedFlag(err); now != "" {
				return usagef("%v: it is %s now (see arena --help)", err, now)
			}
			return usagef("%v (see arena --help)", err)
		},
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "docker-host", Usage: "Docker engine address, e.g. unix:///var/run/docker.sock or tcp://host:2376", EnvVars: []string{"ARENA_DOCKER_HOST", "DOCKER_HOST"}},
			&cli.StringFlag{Name: "docker-tls-ca", Usage: "CA certificate of a remote Docker engine (enables TLS)", EnvVars: []string{"ARENA_DOCKER_TLS_CA", "ARENA_TLS_CA"}, TakesFile: true},
			&cli.StringFlag{Name: "docker-tls-cert", Usage: "client certificate for a remote Docker engine", EnvVars: []string{"ARENA_DOCKER_TLS_CERT", "ARENA_TLS_CERT"}, TakesFile: true},
			&cli.StringFlag{Name: "docker-tls-key", Usage: "client key for a remote Docker engine", EnvVars: []string{"ARENA_DOCKER_TLS_KEY", "ARENA_TLS_KEY"}, TakesFile: true},
			&cli.BoolFlag{Name: "docker-tls-verify", Usage: "verify the remote Docker engine's certificate", EnvVars: []string{"ARENA_DOCKER_TLS_VERIFY", "ARENA_TLS_VERIFY", "DOCKER_TLS_VERIFY"}},
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "debug, info, warn or error (logs go to stderr)", EnvVars: []string{"ARENA_LOG_LEVEL"}},
		}, clusterFlags()...),
		Before: func(c *cli.Context) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
				return usagef("--log-level: want debug, info, warn or error, got %q", c.String("log-level"))
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})))
			return nil
		},
		Commands: append([]*cli.Command{
			doctorCommand(),
			imageCommand(),
			rulesCommand(),
			matchCommand(),
			replayCommand(),
			verifyCommand(),
			witnessCommand(),
			rerunCommand(),
			viewCommand(),
			tournamentCommand(),
			duelCommand(),
			exportCommand(),
			standingsCommand(),
			validateCommand(),
			languagesCommand(),
			workerCommand(),
			enrollCommand(),
			workersCommand(),
			keyCommand(),
			submitCommand(),
		}, organizerCommands()...),
	}
}

// dockerConn reads the global engine flags.
func dockerConn(c *cli.Context) docker.Conn {
	return docker.Conn{
		Host:   c.String("docker-host"),
		CACert: c.String("docker-tls-ca"),
		Cert:   c.String("docker-tls-cert"),
		Key:    c.String("docker-tls-key"),
		Verify: c.Bool("docker-tls-verify"),
	}
}

// appContext is the context of the global flags. A command with a flag of
// the same name as a global one would hide it from its own context.
func appContext(c *cli.Context) *cli.Context {
	root := c
	for _, p := range c.Lineage() {
		if p.Command != nil {
			root = p
		}
	}
	return root
}

// engine connects to the engine the global flags name and checks it answers.
func engine(c *cli.Context) (*client.Client, error) { return docker.Dial(c.Context, dockerConn(c)) }

// interspersed moves a command's positional arguments after its flags, so that
// "arena replay T --json" works like "arena replay --json T" (the flag parser
// stops at the first positional argument).
func interspersed(app *cli.App, args []string) []string {
	out := append([]string{}, args[0])
	i := 1
	takesValue := func(flags []cli.Flag, tok string) bool {
		name := strings.TrimLeft(tok, "-")
		if strings.Contains(name, "=") {
			return false
		}
		for _, f := range flags {
			for _, n := range f.Names() {
				if n == name {
					_, isBool := f.(*cli.BoolFlag)
					return !isBool
				}
			}
		}
		return false
	}
	// Global flags, then the command path.
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
		i++
	}
	cmds := app.Commands
	var cmd *cli.Command
	for i < len(args) {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(args[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		out = append(out, args[i])
		i++
	}
	if cmd == nil || len(cmd.Subcommands) > 0 {
		return append(out, args[i:]...)
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		switch tok := args[i]; {
		case tok == "--":
			positional = append(positional, args[i:]...)
			i = len(args)
		case strings.HasPrefix(tok, "-") && tok != "-":
			flags = append(flags, tok)
			if takesValue(cmd.Flags, tok) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			positional = append(positional, tok)
		}
	}
	return append(append(out, flags...), positional...)
}
