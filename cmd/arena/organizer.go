//go:build !team

// The organizer's arena: the event server and the event's commands, and the
// Kubernetes backend with its flags. A team's arena (go build -tags team)
// carries none of them: see team.go.

package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/sandbox/kubernetes" // registers the kubernetes backend
)

// organizerCommands are the commands only an organizer runs.
func organizerCommands() []*cli.Command {
	return []*cli.Command{serveCommand(), eventCommand(), kubeconfigCommand()}
}

// notInThisBuild says why a command is not in this build: every command
// is.
func notInThisBuild(string) string { return "" }

// clusterFlags are the Kubernetes backend's global flags.
func clusterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "kubeconfig", Usage: "the Kubernetes cluster's kubeconfig, for --sandbox kubernetes (default: $KUBECONFIG, the in-cluster configuration, ~/.kube/config)", TakesFile: true},
		&cli.StringFlag{Name: "namespace", Value: "arena", Usage: "the Kubernetes namespace bots' Pods run in", EnvVars: []string{"ARENA_NAMESPACE"}},
		&cli.StringSliceFlag{Name: "node-selector", Usage: "place bots' Pods on the nodes with this label only (KEY=VALUE; repeatable)", EnvVars: []string{"ARENA_NODE_SELECTOR"}},
		&cli.StringFlag{Name: "image-pull-secret", Usage: "the namespace's Secret for pulling the runtime image from a private registry", EnvVars: []string{"ARENA_IMAGE_PULL_SECRET"}},
		&cli.StringFlag{Name: "image-pull-policy", Value: "IfNotPresent", Usage: "when the nodes pull the runtime image: IfNotPresent, Always, or Never (an image imported into the nodes)", EnvVars: []string{"ARENA_IMAGE_PULL_POLICY"}},
		&cli.IntFlag{Name: "warm-pods", Usage: "on Kubernetes, how many Pods of each shape of box to keep running ahead of demand, each handed out once (a game starts without waiting for its Pods; each holds its requests on a node while it waits, a minute at most)", EnvVars: []string{"ARENA_WARM_PODS"}},
	}
}

// otherSettings are the settings of a backend kind other than docker that
// this build has: the cluster's for kubernetes.
func otherSettings(c *cli.Context, kind string) (any, error) {
	if kind != "kubernetes" {
		return nil, nil
	}
	cl, err := clusterConf(c)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// clusterConf reads the global cluster flags.
func clusterConf(c *cli.Context) (kubernetes.Cluster, error) {
	cl := kubernetes.Cluster{Kubeconfig: c.String("kubeconfig"), Namespace: c.String("namespace"), PullSecret: c.String("image-pull-secret"), Warm: c.Int("warm-pods")}
	if cl.Warm < 0 {
		return cl, usagef("--warm-pods must not be negative")
	}
	for _, kv := range c.StringSlice("node-selector") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cl, usagef("--node-selector: want KEY=VALUE, got %q", kv)
		}
		if cl.NodeSelector == nil {
			cl.NodeSelector = map[string]string{}
		}
		cl.NodeSelector[k] = v
	}
	switch p := c.String("image-pull-policy"); p {
	case "IfNotPresent", "":
	case "Always":
		cl.PullAlways = true
	case "Never":
		cl.PullNever = true
	default:
		return cl, usagef("--image-pull-policy: want IfNotPresent, Always or Never, got %q", p)
	}
	return cl, nil
}
