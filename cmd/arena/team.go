//go:build team

// A team's arena, built with -tags team (make team): what a team needs
// before the event (validate, match, tournament, replay, rerun, verify,
// submit, the doctor and the runtime image) and nothing of the organizer's:
// no event server, no event database, no Kubernetes client. The site's
// /download/arena offers this build.

package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// organizerCommands are the commands only an organizer runs: none here.
func organizerCommands() []*cli.Command { return nil }

// notInThisBuild says why a command of the organizer's arena is not in
// this one.
func notInThisBuild(command string) string {
	switch command {
	case "serve", "event":
		return fmt.Sprintf("%q is the organizer's: this is a team's arena, without the event server (the organizer's arena is make's bin/arena)", command)
	}
	return ""
}

// clusterFlags are the Kubernetes backend's global flags: none here.
func clusterFlags() []cli.Flag { return nil }

// renamedFlag is "": this build has no cluster's flags.
func renamedFlag(error) string { return "" }

// otherSettings are none: this build's backends other than docker (local)
// take no settings.
func otherSettings(*cli.Context, string) (any, error) { return nil, nil }
