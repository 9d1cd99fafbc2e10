//go:build team

// A team's arena, built with -tags team (make team): what a team needs
// before the event (validate, match, tournament, replay, rerun, verify,
// submit, the doctor and the runtime image) and nothing of the organizer's:
// no event server, no event database, no Kubernetes client. The site's
// /download/arena offers this build.

package main

import (
	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/sandbox"
)

// organizerCommands are the commands only an organizer runs: none here.
func organizerCommands() []*cli.Command { return nil }

// clusterFlags are the Kubernetes backend's global flags: none here.
func clusterFlags() []cli.Flag { return nil }

// clusterConf is no cluster: this build has no Kubernetes backend.
func clusterConf(*cli.Context) (sandbox.Cluster, error) { return sandbox.Cluster{}, nil }
