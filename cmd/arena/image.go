package main

import (
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/images"
	"github.com/arenabots/arena/sandbox"
)

func imageCommand() *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "build the images bots run in",
		Subcommands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "build the runtime image (base image + arena agent)",
				UsageText: "arena image build [--base IMAGE] [--tag TAG] [--agent PATH] [--force] [--push]",
				Description: `Builds the image every bot runs in: the base (ubuntu:24.04 by default, what
participants build for) with an unprivileged bot user and the arena agent as
PID 1. Nothing is pulled: the base must already be on the engine; a base
without python3, numpy, pandas and tabulate gets them from its distribution's
archive. Where no
registry is reachable, build the offline test base first and use it:

   arena image testbase
   arena image build --base arena-testbase:trixie

An image whose inputs (Dockerfile, agent, base) have not changed is not rebuilt.

With --push the image is then sent to the registry its tag names, for a
Kubernetes cluster's nodes to pull (arena --sandbox kubernetes --image TAG):

   arena image build --tag registry.example:5000/arena-runtime:1 --push

A tag that names no registry is refused rather than sent to Docker Hub. The
registry's user and password come from --registry-user and
ARENA_REGISTRY_PASSWORD (none: anonymous).`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "base", Value: images.DefaultBase, Usage: "base image (must be on the engine)"},
					&cli.StringFlag{Name: "tag", Value: sandbox.DefaultImage, Usage: "tag of the built image"},
					&cli.StringFlag{Name: "agent", Usage: "static arena-agent binary (default: next to arena, then PATH)", TakesFile: true},
					&cli.BoolFlag{Name: "force", Usage: "rebuild even if up to date"},
					&cli.BoolFlag{Name: "push", Usage: "then push the image to the registry --tag names (REGISTRY/NAME:TAG)"},
					&cli.StringFlag{Name: "registry-user", Usage: "the registry's user for --push (default: anonymous)", EnvVars: []string{"ARENA_REGISTRY_USER"}},
					&cli.StringFlag{Name: "registry-password", Usage: "the registry user's password for --push; prefer the environment variable to the command line", EnvVars: []string{"ARENA_REGISTRY_PASSWORD"}},
				},
				Action: func(c *cli.Context) error {
					if c.Bool("push") {
						if _, err := images.RegistryOf(c.String("tag")); err != nil {
							return usagef("--push: %v", err)
						}
					}
					cli, err := engine(c)
					if err != nil {
						return err
					}
					defer cli.Close()
					_, err = images.BuildRuntime(c.Context, cli, images.RuntimeOptions{
						Tag: c.String("tag"), Base: c.String("base"), Agent: c.String("agent"),
						Force: c.Bool("force"), Out: c.App.Writer,
					})
					if err != nil || !c.Bool("push") {
						return err
					}
					return images.Push(c.Context, cli, c.String("tag"), c.String("registry-user"), c.String("registry-password"), c.App.Writer)
				},
			},
			{
				Name:      "testbase",
				Usage:     "build the offline test base image (debootstrap, no registry; needs root)",
				UsageText: "arena image testbase [--tag TAG]",
				Description: `Builds a Debian trixie base image (minbase plus python3, python3-numpy,
python3-pandas and python3-tabulate) from the Debian package mirror with
debootstrap, then imports it as arena-testbase:trixie-<hash of the recipe> and
points arena-testbase:trixie at it. No image registry is needed. Skipped when
that image is up to date.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "tag", Value: images.DefaultTestbase, Usage: "tag of the built image"},
				},
				Action: func(c *cli.Context) error {
					return images.BuildTestbase(c.Context, c.String("tag"), c.App.Writer, c.App.ErrWriter)
				},
			},
		},
	}
}
