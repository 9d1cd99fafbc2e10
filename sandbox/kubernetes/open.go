package kubernetes

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arenabots/arena/internal/setting"
	"github.com/arenabots/arena/sandbox"
)

func init() {
	sandbox.Register("kubernetes", Open)
	sandbox.RegisterDoctor("kubernetes", sandbox.Doctor{Preflight: Preflight, Bench: Bench})
}

// Cluster is the kubernetes backend's own settings (sandbox.Config.Backend):
// where it runs boxes. The Config's Runtime is its RuntimeClass.
type Cluster struct {
	// Kubeconfig is the file of the cluster's address and credentials; ""
	// is $KUBECONFIG, else the in-cluster configuration, else
	// ~/.kube/config.
	Kubeconfig string
	// Namespace is where the Pods go ("arena" when empty).
	Namespace string
	// NodeSelector places them on these nodes only.
	NodeSelector map[string]string
	// PullSecret names the namespace's Secret for a private registry.
	PullSecret string
	// PullNever: the image is on the nodes already (imported, as in tests),
	// never pulled; PullAlways: pulled for every Pod. Neither: pulled where
	// a node lacks it.
	PullNever, PullAlways bool
	// Warm is how many Pods of each shape are kept running ahead of
	// demand, each handed out once (0: none).
	Warm int
}

// DefaultNamespace is where Pods go unless the organizer says otherwise.
const DefaultNamespace = "arena"

// AnnotationOwner holds the owner exactly (sandbox.Owner), which a label's
// value cannot.
const AnnotationOwner = "arena.arenabots.org/owner"

var dnsUnsafe = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// sweepEvery is how often an open backend with Sweep sweeps again.
var sweepEvery = 30 * time.Second

// RESTConfig is the cluster's address and credentials: the kubeconfig file
// given, else $KUBECONFIG, else the in-cluster configuration (arena in a
// Pod), else ~/.kube/config.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" && os.Getenv("KUBECONFIG") == "" {
		if rc, err := rest.InClusterConfig(); err == nil {
			return rc, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, setting.Errorf(setting.Kubeconfig, "no cluster to reach: %w (give {setting}, set KUBECONFIG, or run arena in the cluster)", err)
	}
	return rc, nil
}

// Open is the kubernetes backend's sandbox.Opener: it reaches the cluster,
// checks that arena's namespace is there, sweeps what killed runs left
// (when cfg.Sweep says so, then every sweepEvery while open). Closing
// sweeps again.
func Open(ctx context.Context, cfg sandbox.Config) (sandbox.Backend, func() error, error) {
	b, err := backendFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	ns, p := b.place.Namespace, b.place
	if _, err := b.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, setting.Errorf(setting.Namespace, "the cluster has no namespace %q: apply deploy/kubernetes (kubectl apply -k deploy/kubernetes) or give {setting}", ns)
		}
		if !apierrors.IsForbidden(err) { // reading namespaces is not among arena's rights
			return nil, nil, fmt.Errorf("reach the cluster: %w", err)
		}
	}
	if p.RuntimeClass != "" {
		if _, err := b.cs.NodeV1().RuntimeClasses().Get(ctx, p.RuntimeClass, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("the cluster has no RuntimeClass %q", p.RuntimeClass)
		}
	}
	sweep := func(ctx context.Context) error {
		if !cfg.Sweep {
			return nil
		}
		n, err := Sweep(ctx, b.cs, ns, false)
		if err != nil {
			return fmt.Errorf("sweep pods left by an earlier run: %w", err)
		}
		if n > 0 {
			cfg.Notify(fmt.Sprintf("deleted %d pods left by an earlier run that was killed", n))
		}
		return nil
	}
	if err := sweep(ctx); err != nil {
		slog.Warn(err.Error())
	}
	stop := func() {}
	if cfg.Sweep {
		stop = sandbox.SweepEvery(ctx, sweepEvery, sweep)
	}
	return b, func() error {
		stop()
		werr := b.Close(context.WithoutCancel(ctx))
		if err := sweep(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		return werr
	}, nil
}

// backendFor is the backend cfg names: its cluster, namespace, image and
// where its Pods go.
func backendFor(cfg sandbox.Config) (*Backend, error) {
	if cfg.Image == "" {
		cfg.Image = sandbox.DefaultImage
	}
	cl, err := sandbox.SettingsOf[Cluster]("kubernetes", cfg)
	if err != nil {
		return nil, err
	}
	rc, err := RESTConfig(cl.Kubeconfig)
	if err != nil {
		return nil, err
	}
	ns := cl.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	p := Place{Namespace: ns, Image: cfg.Image, PullSecret: cl.PullSecret, RuntimeClass: cfg.Runtime,
		NodeSelector: cl.NodeSelector}
	switch {
	case cl.PullNever:
		p.PullPolicy = corev1.PullNever
	case cl.PullAlways:
		p.PullPolicy = corev1.PullAlways
	}
	b, err := New(rc, p)
	if err != nil {
		return nil, err
	}
	b.Warm = cl.Warm
	return b, nil
}

// Sweep deletes the Pods of ns labelled by arena processes that no longer
// run on this host, and every one of them that has ended (all: every
// arena Pod but this process's). It returns how many it deleted.
func Sweep(ctx context.Context, cs kubernetes.Interface, ns string, all bool) (int, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelOwner})
	if err != nil {
		return 0, fmt.Errorf("list pods: %w", err)
	}
	n := 0
	grace := int64(0)
	for _, pod := range list.Items {
		owner := pod.Annotations[AnnotationOwner]
		ended := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
		if owner == sandbox.Owner() && !ended || (!all && !ended && sandbox.OwnerAlive(owner)) {
			continue
		}
		err := cs.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
		switch {
		case err == nil:
			slog.Debug("kubernetes: swept a leftover pod", "pod", pod.Name, "owner", owner)
			n++
		case apierrors.IsNotFound(err):
		default:
			slog.Warn("kubernetes: a leftover pod could not be deleted", "pod", pod.Name, "owner", owner, "err", err)
		}
	}
	return n, nil
}

// Count is how many arena Pods ns holds.
func Count(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelOwner})
	if err != nil {
		return 0, err
	}
	return len(list.Items), nil
}
