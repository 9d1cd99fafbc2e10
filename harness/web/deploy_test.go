package web

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/arenabots/arena/internal/gobuild"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
)

// manifests decodes every object of the manifests deploy/kubernetes's
// kustomization lists, as the API server's scheme reads them; every
// manifest of the directory must be listed.
func manifests(t *testing.T) []runtime.Object {
	t.Helper()
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "deploy", "kubernetes")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(k.Resources, name) {
			t.Errorf("deploy/kubernetes/%s is not listed in kustomization.yaml", name)
		}
	}
	// Strict: a misspelt field or a key given twice is an error, not
	// something the cluster would drop.
	strict := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
	var out []runtime.Object
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, _, err := strict.Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", r, err)
			}
			_, ns := obj.(*corev1.Namespace)
			if m, ok := obj.(metav1.Object); !ok || !ns && m.GetNamespace() != "arena" {
				t.Errorf("%s: a %T outside the namespace arena", r, obj)
			}
			out = append(out, obj)
		}
	}
	return out
}

// The server's manifests in deploy/kubernetes: one replica that stops
// before the next starts (one SQLite database, one server), under arena's
// ServiceAccount and the in-cluster configuration, hardened, its event on a
// volume one node mounts, probed on a path the real server answers without
// a login, behind a ClusterIP Service, and left out of the bots' deny-all
// NetworkPolicy, which still selects every bot's Pod. The server's
// arguments are ones the arena binary takes, and the image's user is the
// one the Deployment names.
func TestTheDeploymentRunsOneHardenedServer(t *testing.T) {
	t.Parallel()
	var (
		claim  *corev1.PersistentVolumeClaim
		deploy *appsv1.Deployment
		svc    *corev1.Service
		policy *networkingv1.NetworkPolicy
	)
	for _, obj := range manifests(t) {
		switch o := obj.(type) {
		case *corev1.PersistentVolumeClaim:
			claim = o
		case *appsv1.Deployment:
			deploy = o
		case *corev1.Service:
			svc = o
		case *networkingv1.NetworkPolicy:
			policy = o
		}
	}
	if claim == nil || deploy == nil || svc == nil || policy == nil {
		t.Fatalf("deploy/kubernetes lacks the server's volume claim (%v), Deployment (%v), Service (%v) or the bots' NetworkPolicy (%v)",
			claim != nil, deploy != nil, svc != nil, policy != nil)
	}
	if !slices.Equal(claim.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
		t.Errorf("the event's volume claim is %v, want ReadWriteOnce alone", claim.Spec.AccessModes)
	}

	d := deploy.Spec
	if d.Replicas == nil || *d.Replicas != 1 || d.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		replicas := "default"
		if d.Replicas != nil {
			replicas = strconv.Itoa(int(*d.Replicas))
		}
		t.Errorf("the Deployment: %s replicas, strategy %q; want exactly 1, Recreate", replicas, d.Strategy.Type)
	}
	pod := d.Template.Spec
	if pod.ServiceAccountName != "arena" || pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("the server runs as ServiceAccount %q, its token mounted: %v; want arena's", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	if pod.Hostname == "" {
		t.Error("the server's Pods have no host name of their own: a server started after a killed one would not sweep that one's Pods")
	}
	if sel, err := metav1.LabelSelectorAsSelector(d.Selector); err != nil || !sel.Matches(labels.Set(d.Template.Labels)) {
		t.Errorf("the Deployment's selector %v does not select its Pods %v (%v)", d.Selector, d.Template.Labels, err)
	}
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 || psc.RunAsGroup == nil ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("the server's Pod security context %+v: want a user not root, seccomp RuntimeDefault", psc)
	}
	mounts := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		mounts[v.Name] = v
	}
	var server *corev1.Container
	for i, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 ||
			sc.Privileged != nil && *sc.Privileged || sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("container %s: security context %+v; want no privilege escalation, a read-only root, every capability dropped", c.Name, sc)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
			if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
				t.Errorf("container %s: %s requests %v, limit %v; want both, the request within the limit", c.Name, r, req.String(), lim.String())
			}
		}
		if c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("container %s pulls its image %q; want IfNotPresent (a :latest tag would be pulled every start, an imported image never found)", c.Name, c.ImagePullPolicy)
		}
		if c.Image != pod.Containers[0].Image {
			t.Errorf("container %s runs %s, the server %s: the organizer builds one image", c.Name, c.Image, pod.Containers[0].Image)
		}
		at := map[string]string{}
		for _, m := range c.VolumeMounts {
			at[m.MountPath] = m.Name
		}
		if v := mounts[at["/event"]]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim.Name {
			t.Errorf("container %s: /event is not the event's volume claim %s", c.Name, claim.Name)
		}
		if i == len(pod.InitContainers) {
			server = &pod.Containers[0]
			if v := mounts[at["/tmp"]]; v.EmptyDir == nil {
				t.Error("the server's /tmp is not an emptyDir: its root file system is read-only")
			}
		}
	}
	if len(pod.Containers) != 1 || server.Name != "server" {
		t.Fatalf("the server's Pod runs %d containers, want the server alone", len(pod.Containers))
	}

	// The arguments: the server on the cluster, in-cluster, on port 8080,
	// global options before "serve".
	args := strings.Join(server.Args, " ")
	for _, want := range []string{"--kube-namespace arena serve ", " --sandbox kubernetes ", " --event /event ", " --http 0.0.0.0:8080 "} {
		if !strings.Contains(" "+args+" ", want) {
			t.Errorf("the server runs `arena %s`, without %q", args, strings.TrimSpace(want))
		}
	}
	if strings.Contains(args, "--kube-config") || len(server.Command) != 0 {
		t.Errorf("the server runs %v %v: want the image's arena, with the in-cluster configuration", server.Command, server.Args)
	}
	// The arena binary takes them: given a directory that is no event, it
	// says so, after every option was read.
	noEvent := t.TempDir()
	run := slices.Clone(server.Args)
	run[slices.Index(run, "/event")] = noEvent
	var stderr bytes.Buffer
	cmd := exec.Command(gobuild.MustStatic(t, "./cmd/arena"), run...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), noEvent+" is not an event") {
		t.Errorf("arena %s: %v\n%s\nwant it refused as no event only", strings.Join(run, " "), err, stderr.String())
	}

	// The probes: a path the server answers without a login, on its port.
	if len(server.Ports) != 1 || server.Ports[0].ContainerPort != 8080 || server.Ports[0].Name != "http" {
		t.Errorf("the server's ports: %+v, want 8080 named http", server.Ports)
	}
	e := newTestEvent(t, "")
	for name, p := range map[string]*corev1.Probe{"startup": server.StartupProbe, "readiness": server.ReadinessProbe, "liveness": server.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != "http" {
			t.Errorf("the server's %s probe %+v: want an HTTP GET on the port http", name, p)
			continue
		}
		if res, body := e.do(t, http.MethodGet, p.HTTPGet.Path, "", nil, ""); res.StatusCode != http.StatusOK {
			t.Errorf("the %s probe's %s, without a login: %d %.200s", name, p.HTTPGet.Path, res.StatusCode, body)
		}
	}

	// The Service: ClusterIP, port 80 to the server's.
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 ||
		svc.Spec.Ports[0].TargetPort.String() != "http" || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Template.Labels)) {
		t.Errorf("the Service: %s, ports %+v, selector %v; want ClusterIP, 80 to the server's http port, selecting the server", svc.Spec.Type, svc.Spec.Ports, svc.Spec.Selector)
	}

	// The bots' deny-all policy: every bot's Pod, never the server's.
	sel, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	bot := labels.Set{k8s.LabelOwner: "host.1.2", k8s.LabelManaged: "arena"}
	if !sel.Matches(bot) || sel.Empty() {
		t.Errorf("the NetworkPolicy %s selects %v: not only every bot's Pod (%v)", policy.Name, sel, bot)
	}
	if sel.Matches(labels.Set(d.Template.Labels)) {
		t.Errorf("the NetworkPolicy %s selects the server's Pod (%v): it would cut it off", policy.Name, d.Template.Labels)
	}

	// The image's user is the Pod's.
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "images", "server", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	if m := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindSubmatch(dockerfile); m != nil {
		user = string(m[1])
	}
	if want := strconv.FormatInt(*psc.RunAsUser, 10) + ":" + strconv.FormatInt(*psc.RunAsGroup, 10); user != want {
		t.Errorf("images/server/Dockerfile runs as %q, the Deployment as %s", user, want)
	}
}

// The init container that waits for the event ends at once on SIGTERM, so
// that a rollout or a delete never waits out the grace period (as PID 1 a
// shell ignores the signal unless it traps it): its command run here,
// where no event ever comes, exits 143 by its trap soon after the signal.
func TestTheEventsWaitStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	var wait []string
	for _, obj := range manifests(t) {
		if d, ok := obj.(*appsv1.Deployment); ok && len(d.Spec.Template.Spec.InitContainers) > 0 {
			wait = d.Spec.Template.Spec.InitContainers[0].Command
		}
	}
	if len(wait) < 3 || wait[0] != "sh" {
		t.Fatalf("the init container runs %q, want a shell's command", wait)
	}
	cmd := exec.Command(wait[0], wait[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(500 * time.Millisecond) // into its first sleep
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if cmd.ProcessState.ExitCode() != 143 {
			t.Errorf("on SIGTERM the wait ended with %v, want exit 143", err)
		}
	case <-time.After(10 * time.Second): // its sleep is 2 s: anything near it is the old loop's
		if err := cmd.Process.Kill(); err != nil {
			t.Error(err)
		}
		t.Fatal("the wait ignored SIGTERM")
	}
}
