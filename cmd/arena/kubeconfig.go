//go:build !team

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/arenabots/arena/sandbox/kubernetes"
)

func kubeconfigCommand() *cli.Command {
	return &cli.Command{
		Name:  "kubeconfig",
		Usage: "write the kubeconfig arena plays on a cluster with: its ServiceAccount's rights, nothing more",
		Description: `Run as the cluster's admin (--kube-config, the admin's), after
kubectl apply -k deploy/kubernetes: it asks the API server for a token of
arena's ServiceAccount in --kube-namespace and writes a kubeconfig holding it,
which may only do what deploy/kubernetes lets arena do there (Pods and their
attach, NetworkPolicies read; no exec, no Secrets, nothing cluster-wide).
Give that file to arena with --kube-config. The token expires after
--duration; run it again for a new one.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the file to write (made with mode 0600; it must not exist)", Required: true, TakesFile: true},
			&cli.StringFlag{Name: "service-account", Value: "arena", Usage: "the ServiceAccount whose token it holds"},
			&cli.DurationFlag{Name: "duration", Value: 48 * time.Hour, Usage: "how long the token lasts (at least 10m; the API server may cap it)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("kubeconfig takes no arguments, got %q", c.Args().First())
			}
			if d := c.Duration("duration"); d < kubernetes.MinTokenLife {
				return usagef("--duration: a token lasts at least %s, not %s", kubernetes.MinTokenLife, d)
			}
			rc, err := kubernetes.RESTConfig(c.String("kube-config"))
			if err != nil {
				return err
			}
			ns := c.String("kube-namespace")
			data, expires, err := kubernetes.Kubeconfig(c.Context, rc, ns, c.String("service-account"), c.Duration("duration"))
			if err != nil {
				return err
			}
			out := c.String("out")
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return usagef("--out: %v", err)
			}
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(out)
				return fmt.Errorf("write %s: %w", out, err)
			}
			fmt.Fprintf(c.App.ErrWriter, "arena: wrote %s: ServiceAccount %s of namespace %s, until %s; give it to arena with --kube-config %s\n",
				out, c.String("service-account"), ns, expires.UTC().Format("2006-01-02 15:04 UTC"), out)
			return nil
		},
	}
}
