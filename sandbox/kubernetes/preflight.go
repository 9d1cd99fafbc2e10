package kubernetes

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/probe"
)

// preflightRows are Preflight's rows, in order.
var preflightRows = []string{"cluster", "rights", "admission", "runtime class", "network policy", "hardened pod", "pod network", "out-of-memory detection", "turn deadline"}

// right is one thing arena does to the API, as a SelfSubjectAccessReview
// asks it.
type right struct{ group, resource, sub, verb string }

// rights are what the backend needs in its namespace (deploy/kubernetes's
// Role), and what the doctor reads.
var rights = []right{
	{"", "pods", "", "create"}, {"", "pods", "", "get"}, {"", "pods", "", "list"}, {"", "pods", "", "watch"}, {"", "pods", "", "patch"}, {"", "pods", "", "delete"},
	{"", "pods", "attach", "get"}, {"", "pods", "attach", "create"},
	{"", "events", "", "list"},
}

func (r right) String() string {
	s := r.resource
	if r.sub != "" {
		s += "/" + r.sub
	}
	return r.verb + " " + s
}

// Preflight checks what official matches need from the cluster cfg names:
// the API server answers and its version; arena's identity holds the
// rights the backend uses in its namespace (asked with
// SelfSubjectAccessReview); a hardened Pod is admitted as it was asked (a
// server-side dry run, read back: no webhook or policy changed it); the
// RuntimeClass; a NetworkPolicy denying the bots' traffic; a hardened Pod's
// limits read back from inside by a probe bot; that Pod's bot reaches
// nothing over the network (another Pod, its node, the API server, the
// internet: a Pod that can is a failure, whatever the policy says); an
// out-of-memory kill reported as such; a turn deadline's precision. It
// starts a few short-lived Pods and deletes them. It is the kubernetes
// backend's doctor (sandbox.Doctor.Preflight): a cluster it cannot reach
// is also an error.
func Preflight(ctx context.Context, cfg sandbox.Config) (_ []sandbox.Check, err error) {
	var out []sandbox.Check
	add := func(c sandbox.Check) { out = append(out, c) }
	b, err := backendFor(cfg)
	if err != nil {
		add(sandbox.Check{Name: "cluster", Status: sandbox.Fail, Detail: err.Error(), Fix: "give arena the kubeconfig of deploy/kubernetes's ServiceAccount"})
		return skipAfter(out, "cluster", "needs the cluster"), err
	}
	// The checks open their Pods one at a time: warm Pods would only hold
	// the room the next check's Pod needs, and outlive the doctor.
	b.Warm = 0
	defer func() {
		if cerr := b.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = cerr
		}
	}()
	v, err := b.cs.Discovery().ServerVersion()
	if err != nil {
		err = fmt.Errorf("the API server at %s does not answer: %w", b.rc.Host, err)
		add(sandbox.Check{Name: "cluster", Status: sandbox.Fail, Detail: err.Error(), Fix: "check the kubeconfig's server and credentials"})
		return skipAfter(out, "cluster", "needs the cluster"), err
	}
	add(sandbox.Check{Name: "cluster", Status: sandbox.OK, Detail: fmt.Sprintf("Kubernetes %s at %s, namespace %s", v.GitVersion, b.rc.Host, b.place.Namespace)})

	c := b.rightsCheck(ctx)
	add(c)
	if c.Status == sandbox.Fail {
		return skipAfter(out, "rights", "needs arena's rights"), nil
	}
	c = b.admissionCheck(ctx)
	add(c)
	if c.Status == sandbox.Fail {
		return skipAfter(out, "admission", "needs a Pod the cluster admits"), nil
	}
	add(b.runtimeClassCheck(ctx))
	add(b.networkPolicyCheck(ctx))

	var network sandbox.Check
	add(probe.Hardened(ctx, b, expect, func(o probe.Opened) { network = b.networkCheck(ctx, o.Box) }))
	if network.Name == "" {
		// The hardened Pod did not start: the next rows' Pods would not
		// either, each after the start timeout; its row says why.
		add(sandbox.Check{Name: "pod network", Status: sandbox.Skip, Detail: "needs the hardened pod"})
		return skipAfter(out, "pod network", "needs a Pod that starts (see the hardened pod's row)"), nil
	}
	add(network)
	add(probe.OOM(ctx, b, "the container's memory cgroup must be the Pod's limit, and the kubelet must report OOMKilled"))
	add(probe.Deadline(ctx, b))
	return out, nil
}

// skipAfter adds to out every row after the row named failed, skipped
// because they need what it checked.
func skipAfter(out []sandbox.Check, failed, why string) []sandbox.Check {
	for _, name := range preflightRows[slices.Index(preflightRows, failed)+1:] {
		out = append(out, sandbox.Check{Name: name, Status: sandbox.Skip, Detail: why})
	}
	return out
}

// rightsCheck asks the API server whether arena's identity may do each of
// rights in its namespace.
func (b *Backend) rightsCheck(ctx context.Context) sandbox.Check {
	c := sandbox.Check{Name: "rights"}
	var missing, done []string
	for _, r := range rights {
		rev, err := b.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authv1.ResourceAttributes{Namespace: b.place.Namespace, Group: r.group, Resource: r.resource, Subresource: r.sub, Verb: r.verb},
		}}, metav1.CreateOptions{})
		if err != nil {
			c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("ask the API server what arena may do: %v", err)
			return c
		}
		if !rev.Status.Allowed {
			missing = append(missing, r.String())
			continue
		}
		done = append(done, r.String())
	}
	if len(missing) > 0 {
		c.Status = sandbox.Fail
		c.Detail = fmt.Sprintf("arena may not %s in namespace %s", strings.Join(missing, ", "), b.place.Namespace)
		c.Fix = "apply deploy/kubernetes (its Role and RoleBinding) and use its ServiceAccount, or grant these"
		return c
	}
	c.Status = sandbox.OK
	c.Detail = fmt.Sprintf("may %s in namespace %s", strings.Join(done, ", "), b.place.Namespace)
	return c
}

// admissionCheck creates a hardened Pod as a server-side dry run: the
// namespace exists, Pod Security and every admission webhook admit it, and
// what they return is what was asked.
func (b *Backend) admissionCheck(ctx context.Context) sandbox.Check {
	c := sandbox.Check{Name: "admission"}
	lim := probe.ProbeLimits()
	want := podFor(b.place, podName("doctor-admission"), lim, 4096, nil)
	got, err := b.cs.CoreV1().Pods(b.place.Namespace).Create(ctx, want, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case apierrors.IsNotFound(err):
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("the cluster has no namespace %q", b.place.Namespace)
		c.Fix = "apply deploy/kubernetes (kubectl apply -k deploy/kubernetes) or give --namespace"
		return c
	case err != nil:
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("a hardened Pod was refused: %v", err)
		c.Fix = "the namespace's Pod Security level must admit baseline Pods, and no webhook may refuse them"
		return c
	}
	if err := verifyPod(want, got); err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		c.Fix = "exempt arena's namespace from the webhook or policy that rewrites its Pods"
		return c
	}
	c.Status = sandbox.OK
	c.Detail = "a hardened Pod is admitted unchanged (server-side dry run, read back)"
	ns, err := b.cs.CoreV1().Namespaces().Get(ctx, b.place.Namespace, metav1.GetOptions{})
	switch {
	case err != nil:
		// arena's own rights read no namespace: the level is not said.
		c.Detail += "; the namespace's Pod Security level is not read (these credentials may not read namespaces)"
	case ns.Labels["pod-security.kubernetes.io/enforce"] != "":
		c.Detail += "; the namespace enforces Pod Security " + ns.Labels["pod-security.kubernetes.io/enforce"]
	default:
		c.Detail += "; the namespace enforces no Pod Security level of its own"
	}
	return c
}

// runtimeClassCheck says which runtime boxes run under.
func (b *Backend) runtimeClassCheck(ctx context.Context) sandbox.Check {
	c := sandbox.Check{Name: "runtime class", Status: sandbox.OK}
	name := b.place.RuntimeClass
	if name == "" {
		c.Detail = "the nodes' default runtime: bots' system calls reach the node's kernel (namespaces, cgroups, seccomp, no capabilities)"
		list, err := b.cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, rc := range list.Items {
				if strings.Contains(rc.Handler, "runsc") || strings.Contains(rc.Handler, "gvisor") || strings.Contains(rc.Handler, "kata") {
					c.Detail += fmt.Sprintf("; RuntimeClass %s (handler %s) is a second wall: --runtime-class %s", rc.Name, rc.Handler, rc.Name)
				}
			}
		}
		return c
	}
	rc, err := b.cs.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.Status, c.Detail, c.Fix = sandbox.Fail, fmt.Sprintf("the cluster has no RuntimeClass %q", name), "install it (gVisor's or Kata's) or leave --runtime-class out"
	case apierrors.IsForbidden(err):
		c.Status, c.Detail = sandbox.Warn, fmt.Sprintf("RuntimeClass %q cannot be read with arena's rights; the hardened pod below runs under it", name)
	case err != nil:
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("read RuntimeClass %q: %v", name, err)
	default:
		c.Detail = fmt.Sprintf("%s (handler %s)", rc.Name, rc.Handler)
	}
	return c
}

// networkPolicyCheck says whether a NetworkPolicy of the namespace denies
// every box's ingress and egress. Only a probe tells whether the network
// plugin enforces it: that is the pod network row.
func (b *Backend) networkPolicyCheck(ctx context.Context) sandbox.Check {
	c := sandbox.Check{Name: "network policy"}
	list, err := b.cs.NetworkingV1().NetworkPolicies(b.place.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.Status, c.Detail = sandbox.Warn, fmt.Sprintf("the namespace's NetworkPolicies cannot be read: %v", err)
		c.Fix = "apply deploy/kubernetes's Role (it may read them)"
		return c
	}
	labels := podFor(b.place, "x", sandbox.DefaultLimits(), 0, nil).Labels
	for _, np := range list.Items {
		if denies(np, labels) {
			c.Status, c.Detail = sandbox.OK, fmt.Sprintf("%s denies every box's ingress and egress (whether the network plugin enforces it: the pod network row)", np.Name)
			return c
		}
	}
	c.Status = sandbox.Warn
	c.Detail = fmt.Sprintf("no NetworkPolicy of namespace %s denies the boxes' ingress and egress", b.place.Namespace)
	c.Fix = "apply deploy/kubernetes/networkpolicy.yaml"
	return c
}

// denies says whether np selects Pods labelled labels and allows them no
// traffic either way.
func denies(np networkingv1.NetworkPolicy, labels map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || !sel.Matches(k8slabels.Set(labels)) {
		return false
	}
	var in, eg bool
	for _, t := range np.Spec.PolicyTypes {
		in = in || t == networkingv1.PolicyTypeIngress
		eg = eg || t == networkingv1.PolicyTypeEgress
	}
	return in && eg && len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0
}

// netScript tries each "host port" line of targets and writes, for each,
// "host:port open", "host:port refused" (a packet came back: reachable) or
// "host:port blocked WHY".
const netScript = `#!/bin/bash
while read -r host port; do
  [ -n "$host" ] || continue
  (
    if timeout 3 bash -c "exec 3<>/dev/tcp/$host/$port" 2>"err.$host.$port"; then
      echo "$host:$port open"
    else
      code=$?
      e=$(tr '\n' ' ' < "err.$host.$port")
      case "$e" in
        *refused*) echo "$host:$port refused" ;;
        *) [ $code = 124 ] && e="no answer in 3 s"; echo "$host:$port blocked $e" ;;
      esac
    fi
  ) &
done < targets
wait
`

// networkCheck runs a bot in a second box that tries to reach the first
// box's Pod, its node's kubelet, an address on the internet and the API
// server where the kubeconfig names it by an address a Pod could try (the
// row says when it does not). A connection made or refused (a packet came
// back) fails.
func (b *Backend) networkCheck(ctx context.Context, other sandbox.Box) sandbox.Check {
	c := sandbox.Check{Name: "pod network"}
	ob, ok := other.(*box)
	if !ok {
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("the hardened box is a %T, not a Pod", other)
		return c
	}
	pod, err := b.cs.CoreV1().Pods(b.place.Namespace).Get(ctx, ob.p.name, metav1.GetOptions{})
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("read the hardened pod: %v", err)
		return c
	}
	type target struct{ what, host, port string }
	targets := []target{{"another pod", pod.Status.PodIP, "80"}, {"its node's kubelet", pod.Status.HostIP, "10250"}, {"the internet", "8.8.8.8", "53"}}
	apiServer := "the API server not probed: the kubeconfig names no address of it a Pod could try"
	if u, err := url.Parse(b.rc.Host); err == nil && u.Hostname() != "" {
		port := u.Port()
		if port == "" {
			port = "443"
		}
		switch ip := net.ParseIP(u.Hostname()); {
		case ip != nil && !ip.IsLoopback():
			targets = append(targets, target{"the API server", ip.String(), port})
			apiServer = ""
		case ip != nil:
			apiServer = "the API server not probed: the kubeconfig names it at " + ip.String() + ", a Pod's own loopback"
		default:
			apiServer = "the API server not probed: the kubeconfig names it by name (" + u.Hostname() + "), not by an address"
		}
	}
	// The control: the bot's own loopback refuses, or the probe could not
	// tell a reachable address from a blocked one.
	lines := []string{"127.0.0.1 1"}
	for _, t := range targets {
		if t.host != "" {
			lines = append(lines, t.host+" "+t.port)
		}
	}
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 15 * time.Second
	bx, err := b.Open(ctx, sandbox.Spec{Program: probe.Script("doctor-net", netScript), Limits: lim})
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		return c
	}
	defer bx.Close(ctx)
	rep, err := bx.Run(ctx, sandbox.Turn{Put: []sandbox.File{{Name: "targets", Data: []byte(strings.Join(lines, "\n") + "\n")}}})
	if err != nil {
		c.Status, c.Detail = sandbox.Fail, err.Error()
		return c
	}
	said := map[string]string{}
	for _, l := range strings.Split(string(rep.Stdout.Data), "\n") {
		if hp, rest, ok := strings.Cut(l, " "); ok {
			said[hp] = rest
		}
	}
	if got := said["127.0.0.1:1"]; got != "refused" {
		c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("the network probe cannot tell a reachable address: its own loopback's closed port said %q (stdout %q, stderr %q)", got, rep.Stdout.Data, rep.Stderr.Data)
		return c
	}
	var reached, blocked []string
	for _, t := range targets {
		if t.host == "" {
			continue
		}
		hp := net.JoinHostPort(t.host, t.port)
		got, ok := said[t.host+":"+t.port]
		switch {
		case !ok:
			c.Status, c.Detail = sandbox.Fail, fmt.Sprintf("the network probe said nothing of %s (exit %d, stdout %q, stderr %q)", hp, rep.ExitCode, rep.Stdout.Data, rep.Stderr.Data)
			return c
		case got == "open" || got == "refused":
			reached = append(reached, fmt.Sprintf("%s (%s: %s)", t.what, hp, got))
		default:
			blocked = append(blocked, fmt.Sprintf("%s (%s)", t.what, hp))
		}
	}
	if len(reached) > 0 {
		c.Status = sandbox.Fail
		c.Detail = "a bot's Pod reached " + strings.Join(reached, ", ")
		c.Fix = "the network plugin must enforce NetworkPolicy (Calico, Cilium, ...) and deploy/kubernetes/networkpolicy.yaml be applied"
		return c
	}
	c.Status = sandbox.OK
	c.Detail = "a bot's Pod reached none of " + strings.Join(blocked, ", ")
	if apiServer != "" {
		c.Detail += "; " + apiServer
	}
	return c
}

// expect judges the facts a probe bot read inside a Pod: the memory
// cgroup's limit is the Pod's, the bot's process limit is the pids limit
// (RLIMIT_NPROC on a user of its own: a Pod has no pids limit of its own).
// A Pod has a network device; whether it reaches anything is the pod
// network row's.
func expect(facts probe.Facts, lim sandbox.Limits) (string, []string) {
	var bad []string
	if facts["mem"] != strconv.FormatInt(lim.Memory, 10) {
		bad = append(bad, fmt.Sprintf("memory limit inside is %q, asked %d", facts["mem"], lim.Memory))
	}
	if facts["nproc"] != strconv.FormatInt(lim.Pids, 10) {
		bad = append(bad, fmt.Sprintf("process limit inside is %q, asked %d", facts["nproc"], lim.Pids))
	}
	kernel := "the node's kernel"
	if facts.GVisor() {
		kernel = "gVisor's kernel"
	}
	return fmt.Sprintf("%s, limits read back (memory %d MiB, processes %d), no service-account token", kernel, lim.Memory/sandbox.MiB, lim.Pids), bad
}
