// Package clustertest gives tests the real Kubernetes cluster that
// scripts/cluster.sh started (ARENA_CLUSTER names its directory), with the
// test runtime image imported into its nodes, or skips them with a message
// saying how to start one. Under CI (CI=true) a missing cluster fails the
// test instead: the cluster-backed tests must run there.
package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/internal/gobuild"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
)

// Env names the directory of the cluster scripts/cluster.sh started.
const Env = "ARENA_CLUSTER"

// Namespace is where the tests' Pods go: arena's own, as
// deploy/kubernetes makes it.
const Namespace = "arena"

var (
	once    sync.Once
	rc      *rest.Config
	saConf  []byte // arena's kubeconfig, as arena kubeconfig writes it
	image   string
	setupEr error
)

// Cluster returns the cluster's address and credentials (those of arena's
// ServiceAccount, with the rights deploy/kubernetes gives it, applied
// there) and the runtime image the tests' Pods run, imported into its
// containerd.
func Cluster(tb testing.TB) (*rest.Config, string) {
	tb.Helper()
	dir := os.Getenv(Env)
	if dir == "" {
		msg := "no cluster: start one with `bash scripts/cluster.sh start DIR` and set " + Env + "=DIR"
		if dockertest.Required() {
			tb.Fatalf("the cluster tests cannot run: %s (scripts/test.sh starts one under CI)", msg)
		}
		tb.Skip(msg)
	}
	ready(tb, dir)
	exclusive(tb, dir)
	return rest.CopyConfig(rc), image
}

// Image is the runtime image the cluster's Pods run, imported into its
// containerd, without holding the cluster: a test does what needs no Pod
// (building, playing on Docker) before it takes the cluster with Cluster,
// which the other packages' cluster tests wait for.
func Image(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(Env)
	if dir == "" {
		Cluster(tb) // fails or skips, saying how to start one
	}
	ready(tb, dir)
	return image
}

// ready sets the cluster in dir up once: the image imported,
// deploy/kubernetes applied, arena's kubeconfig made.
func ready(tb testing.TB, dir string) {
	tb.Helper()
	_, img := dockertest.Engine(tb)
	once.Do(func() { rc, saConf, image, setupEr = setup(dir, img) })
	if setupEr != nil {
		tb.Fatalf("the cluster in %s: %v", dir, setupEr)
	}
}

// Admin is the cluster's admin kubeconfig (set up as Cluster's), for a
// test that creates no Pod: it does not hold the cluster.
func Admin(tb testing.TB) string {
	tb.Helper()
	Image(tb) // the cluster set up, not held
	return filepath.Join(os.Getenv(Env), "admin.kubeconfig")
}

var (
	inProcess sync.Mutex
	holders   sync.Map // the top-level tests holding the cluster, by name
)

// exclusive gives the cluster to tb alone until it ends, across test
// processes: the test node's two cores hold few Pods whose requests equal
// their limits, and a test's Pods waiting for another's would time out.
func exclusive(tb testing.TB, dir string) {
	// A test's subtests hold it with the test.
	top, _, _ := strings.Cut(tb.Name(), "/")
	if _, ok := holders.Load(top); ok {
		return
	}
	asked := time.Now()
	inProcess.Lock()
	f, err := os.OpenFile(filepath.Join(dir, "tests.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		inProcess.Unlock()
		tb.Fatalf("take the cluster: %v", err)
	}
	holders.Store(top, true)
	taken := time.Now()
	tb.Cleanup(func() {
		// What the cluster's tests cost the run: they hold its one node in
		// turn (scripts/test.sh's summary adds these lines up).
		tb.Logf("the cluster: waited %.1f s for it, held it %.1f s", taken.Sub(asked).Seconds(), time.Since(taken).Seconds())
		holders.Delete(top)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		inProcess.Unlock()
	})
}

// root is the repository's root (a test runs in its package's directory).
func root() string {
	r, err := gobuild.ModuleRoot()
	if err != nil {
		panic(err) // a test always runs inside the module
	}
	return r
}

// script is scripts/cluster.sh.
func script() string { return filepath.Join(root(), "scripts", "cluster.sh") }

// OpenNetwork lets the cluster's Pods reach each other over its bridge
// until the test ends, as on a cluster whose network plugin enforces no
// NetworkPolicy. The test must hold the cluster (Cluster first).
func OpenNetwork(tb testing.TB) {
	tb.Helper()
	if out, err := exec.Command("bash", script(), "network", "open").CombinedOutput(); err != nil {
		tb.Fatalf("open the cluster's network: %v\n%s", err, out)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("bash", script(), "network", "closed").CombinedOutput(); err != nil {
			tb.Errorf("close the cluster's network again: %v\n%s", err, out)
		}
	})
}

func setup(dir, img string) (*rest.Config, []byte, string, error) {
	c, err := k8s.RESTConfig(filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		return nil, nil, "", err
	}
	if out, err := exec.Command("bash", script(), "import", img, dir).CombinedOutput(); err != nil {
		return nil, nil, "", fmt.Errorf("import %s into the cluster: %v\n%s", img, err, out)
	}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := apply(ctx, cs, filepath.Join(root(), "deploy", "kubernetes")); err != nil {
		return nil, nil, "", err
	}
	// arena's own rights, not the admin's: the tests prove they suffice,
	// and the kubeconfig is arena kubeconfig's.
	conf, _, err := k8s.Kubeconfig(ctx, c, Namespace, "arena", 24*time.Hour)
	if err != nil {
		return nil, nil, "", err
	}
	sa, err := clientcmd.RESTConfigFromKubeConfig(conf)
	if err != nil {
		return nil, nil, "", err
	}
	return sa, conf, img, nil
}

// Client is a clientset for the cluster, as its admin.
func Client(tb testing.TB) kubernetes.Interface {
	tb.Helper()
	Cluster(tb)
	c, err := k8s.RESTConfig(filepath.Join(os.Getenv(Env), "admin.kubeconfig"))
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

// Backend is the kubernetes backend on the test cluster, in Namespace, its
// image never pulled.
func Backend(tb testing.TB) *k8s.Backend {
	tb.Helper()
	c, img := Cluster(tb)
	b, err := k8s.New(c, k8s.Place{Namespace: Namespace, Image: img, PullPolicy: corev1.PullNever})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := b.Close(context.Background()); err != nil {
			tb.Errorf("close the backend (its warm pods): %v", err)
		}
	})
	return b
}

// NoLeftovers fails the test if a Pod of Namespace carries the test's
// labels (dockertest.Labels), which the backend keeps as annotations.
func NoLeftovers(tb testing.TB, cs kubernetes.Interface, labels map[string]string) {
	tb.Helper()
	list, err := cs.CoreV1().Pods(Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelOwner})
	if err != nil {
		tb.Fatalf("list pods: %v", err)
	}
	for _, p := range list.Items {
		for k, v := range labels {
			if p.Annotations[k] == v {
				tb.Errorf("pod %s, annotated %s=%s, was left behind (%s)", p.Name, k, v, p.Status.Phase)
			}
		}
	}
}

// apply creates the objects of the manifests a kustomization in dir
// lists (its resources alone), or leaves them as they are (but a Role,
// updated). The event
// server's own (its volume claim, Deployment and Service) are left out:
// the tests run arena serve themselves, and a server Pod would hold the
// test node's room.
func apply(ctx context.Context, cs kubernetes.Interface, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("kustomization.yaml: %w", err)
	}
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			switch obj.(type) {
			case *corev1.PersistentVolumeClaim, *appsv1.Deployment, *corev1.Service:
				continue
			}
			err = create(ctx, cs, obj)
			if role, ok := obj.(*rbacv1.Role); ok && apierrors.IsAlreadyExists(err) {
				// A cluster started before the Role changed gets its rights.
				_, err = cs.RbacV1().Roles(role.Namespace).Update(ctx, role, metav1.UpdateOptions{})
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: %w", r, err)
			}
		}
	}
	return nil
}

func create(ctx context.Context, cs kubernetes.Interface, obj any) error {
	o := metav1.CreateOptions{}
	var err error
	switch v := obj.(type) {
	case *corev1.Namespace:
		_, err = cs.CoreV1().Namespaces().Create(ctx, v, o)
	case *corev1.ServiceAccount:
		_, err = cs.CoreV1().ServiceAccounts(v.Namespace).Create(ctx, v, o)
	case *rbacv1.Role:
		_, err = cs.RbacV1().Roles(v.Namespace).Create(ctx, v, o)
	case *rbacv1.RoleBinding:
		_, err = cs.RbacV1().RoleBindings(v.Namespace).Create(ctx, v, o)
	case *networkingv1.NetworkPolicy:
		_, err = cs.NetworkingV1().NetworkPolicies(v.Namespace).Create(ctx, v, o)
	default:
		err = fmt.Errorf("no way to create a %T", obj)
	}
	return err
}

// Kubeconfig writes a kubeconfig file of arena's ServiceAccount (Cluster's
// credentials, as arena kubeconfig makes them) for the arena command, and
// returns its path and the image.
func Kubeconfig(tb testing.TB) (string, string) {
	tb.Helper()
	_, img := Cluster(tb)
	p := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, saConf, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p, img
}

// Count is how many arena Pods of Namespace carry the annotation key=value
// (a box's label, sandbox.Spec.Labels).
func Count(cs kubernetes.Interface, key, value string) (int, error) {
	list, err := cs.CoreV1().Pods(Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelOwner})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range list.Items {
		if p.Annotations[key] == value {
			n++
		}
	}
	return n, nil
}

// Kubectl makes commands of the cluster's kubectl (scripts/cluster.sh
// build's, cached) as its admin, in Namespace.
func Kubectl(tb testing.TB) func(args ...string) *exec.Cmd {
	tb.Helper()
	dir := os.Getenv(Env)
	if dir == "" {
		Cluster(tb)
	}
	out, err := exec.Command("bash", script(), "build").Output()
	if err != nil {
		tb.Fatalf("the cluster's binaries: %v", err)
	}
	kubectl := filepath.Join(strings.TrimSpace(string(out)), "kubectl")
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	return func(args ...string) *exec.Cmd {
		return exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "-n", Namespace}, args...)...)
	}
}

// ServerNetwork lets the cluster's Pods reach the API server through its
// Service until the test ends, as the event server's own Pod must. The
// test must hold the cluster (Cluster first).
func ServerNetwork(tb testing.TB) {
	tb.Helper()
	if out, err := exec.Command("bash", script(), "network", "server").CombinedOutput(); err != nil {
		tb.Fatalf("open the API server to the cluster's Pods: %v\n%s", err, out)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("bash", script(), "network", "closed").CombinedOutput(); err != nil {
			tb.Errorf("close the cluster's network again: %v\n%s", err, out)
		}
	})
}

// Import copies a Docker image into the cluster's containerd.
func Import(tb testing.TB, image string) {
	tb.Helper()
	if out, err := exec.Command("bash", script(), "import", image, os.Getenv(Env)).CombinedOutput(); err != nil {
		tb.Fatalf("import %s into the cluster: %v\n%s", image, err, out)
	}
}
