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

// clusterFlags are the Kubernetes backend's global flags, each named
// --kube-*, as the Docker engine's are --docker-*.
func clusterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "kube-config", Aliases: []string{"kubeconfig"}, Usage: "the Kubernetes cluster's kubeconfig, for --sandbox kubernetes (default: $KUBECONFIG, the in-cluster configuration, ~/.kube/config)", TakesFile: true},
		&cli.StringFlag{Name: "kube-namespace", Value: "arena", Usage: "the Kubernetes namespace bots' Pods run in", EnvVars: []string{"ARENA_KUBE_NAMESPACE"}},
		&cli.StringSliceFlag{Name: "kube-node-selector", Usage: "place bots' Pods on the nodes with this label only (KEY=VALUE; repeatable)", EnvVars: []string{"ARENA_KUBE_NODE_SELECTOR"}},
		&cli.StringFlag{Name: "kube-pull-secret", Usage: "the namespace's Secret for pulling the runtime image from a private registry", EnvVars: []string{"ARENA_KUBE_PULL_SECRET"}},
		&cli.StringFlag{Name: "kube-pull-policy", Value: "IfNotPresent", Usage: "when the nodes pull the runtime image: IfNotPresent, Always, or Never (an image imported into the nodes)", EnvVars: []string{"ARENA_KUBE_PULL_POLICY"}},
		&cli.IntFlag{Name: "kube-warm-pods", Value: 2, Usage: "how many Pods of each shape of box to keep running ahead of demand, each handed out once, in the room games leave (a game starts without waiting for its Pods; each holds its requests on a node while it waits, a minute at most; 0: none)", EnvVars: []string{"ARENA_KUBE_WARM_PODS"}},
	}
}

// renamedFlag is the name a global flag of the cluster's has now, for a
// usage error that names it by its old one, or "".
func renamedFlag(err error) string {
	old, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	switch old {
	case "namespace", "node-selector", "warm-pods":
		return "--kube-" + old
	case "image-pull-secret", "image-pull-policy":
		return "--kube-" + strings.TrimPrefix(old, "image-")
	}
	return ""
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
	cl := kubernetes.Cluster{Kubeconfig: c.String("kube-config"), Namespace: c.String("kube-namespace"), PullSecret: c.String("kube-pull-secret"), Warm: c.Int("kube-warm-pods")}
	if cl.Warm < 0 {
		return cl, usagef("--kube-warm-pods must not be negative")
	}
	for _, kv := range c.StringSlice("kube-node-selector") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cl, usagef("--kube-node-selector: want KEY=VALUE, got %q", kv)
		}
		if cl.NodeSelector == nil {
			cl.NodeSelector = map[string]string{}
		}
		cl.NodeSelector[k] = v
	}
	switch p := c.String("kube-pull-policy"); p {
	case "IfNotPresent", "":
	case "Always":
		cl.PullAlways = true
	case "Never":
		cl.PullNever = true
	default:
		return cl, usagef("--kube-pull-policy: want IfNotPresent, Always or Never, got %q", p)
	}
	return cl, nil
}
