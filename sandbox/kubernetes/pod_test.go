package kubernetes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/agent"
)

var place = Place{Namespace: "arena", Image: "arena-runtime:test", Deadline: 3600, Owner: "vm/123/456",
	RuntimeClass: "gvisor", NodeSelector: map[string]string{"pool": "bots"}}

// The Pod asked for says every hardening of the Docker backend the
// Kubernetes way: no token, no host namespace, no privilege but the agent's
// few capabilities, a read-only root, the runtime's default seccomp
// profile, requests equal to limits, and only size-limited emptyDirs.
func TestThePodCarriesTheBoxsHardening(t *testing.T) {
	t.Parallel()
	lim := sandbox.DefaultLimits()
	lim.Memory, lim.CPUs = 256*sandbox.MiB, 0.5
	pod := podFor(place, "arena-x-1", lim, 3000, map[string]string{"org.arenabots.arena.game": "7"})
	s := pod.Spec
	c := s.Containers[0]
	sc := c.SecurityContext
	for _, tc := range []struct {
		what string
		ok   bool
	}{
		{"no service-account token", s.AutomountServiceAccountToken != nil && !*s.AutomountServiceAccountToken},
		{"no service links", s.EnableServiceLinks != nil && !*s.EnableServiceLinks},
		{"no host namespaces", !s.HostNetwork && !s.HostPID && !s.HostIPC},
		{"never restarted", s.RestartPolicy == corev1.RestartPolicyNever},
		{"no grace", s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds == 0},
		{"a deadline backstop", s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds == 3600},
		{"the runtime class", s.RuntimeClassName != nil && *s.RuntimeClassName == "gvisor"},
		{"the node selector", s.NodeSelector["pool"] == "bots"},
		{"RuntimeDefault seccomp", s.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"the agent as PID 1, asked for its hello", c.Command[0] == agent.Path && c.Command[1] == "--hello-when-asked"},
		{"stdin attached once, no TTY", c.Stdin && c.StdinOnce && !c.TTY},
		{"not privileged", !*sc.Privileged && !*sc.AllowPrivilegeEscalation},
		{"a read-only root", *sc.ReadOnlyRootFilesystem},
		{"every capability dropped but the agent's", fmtCaps(sc.Capabilities) == "drop ALL add CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETGID,SETUID"},
		{"memory requested as limited", c.Resources.Requests.Memory().Value() == 256*sandbox.MiB && c.Resources.Limits.Memory().Value() == 256*sandbox.MiB},
		{"CPU requested as limited", c.Resources.Requests.Cpu().MilliValue() == 500 && c.Resources.Limits.Cpu().MilliValue() == 500},
		{"the owner label and annotation", pod.Labels[LabelOwner] == "vm.123.456" && pod.Annotations[AnnotationOwner] == "vm/123/456"},
		{"the box's labels as annotations", pod.Annotations["org.arenabots.arena.game"] == "7"},
	} {
		if !tc.ok {
			t.Errorf("%s: not so", tc.what)
		}
	}
	want := "bot:emptyDir \"\" of 1051576 game:emptyDir \"Memory\" of 67108864 scratch:emptyDir \"Memory\" of 536870912 shm:emptyDir \"Memory\" of 67108864"
	if got := fmtVolumes(s.Volumes); got != want {
		t.Errorf("volumes %s, want %s", got, want)
	}
	for _, m := range c.VolumeMounts {
		if !map[string]bool{agent.GameDir: true, agent.ScratchDir: true, agent.ShmDir: true, agent.BotDir: true}[m.MountPath] {
			t.Errorf("mounts %s", m.MountPath)
		}
	}
	if err := verifyPod(pod, pod.DeepCopy()); err != nil {
		t.Errorf("the Pod as asked is refused: %v", err)
	}
	// A label's value holds 63 characters of letters, digits, '-', '_' and '.'.
	if v := labelValue(strings.Repeat("host.example/", 10) + "9/9"); len(v) > 63 || strings.ContainsAny(v, "/") {
		t.Errorf("label value %q", v)
	}
}

// A Pod the cluster changed in any of its hardening is refused, naming
// what changed; what the cluster adds on its own (a node, tolerations, a
// default DNS policy) is not a change.
func TestAPodChangedByTheClusterIsRefused(t *testing.T) {
	t.Parallel()
	want := podFor(place, "arena-x-1", sandbox.DefaultLimits(), 100, nil)
	yes, no := true, false
	uid := int64(1000)
	for _, tc := range []struct {
		change func(*corev1.Pod)
		says   string
	}{
		{func(p *corev1.Pod) { p.Spec.HostNetwork = true }, "host network"},
		{func(p *corev1.Pod) { p.Spec.HostPID = true }, "host PID"},
		{func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = &yes }, "shared process namespace"},
		{func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = nil }, "service account token"},
		{func(p *corev1.Pod) { p.Spec.RuntimeClassName = nil }, "runtime class"},
		{func(p *corev1.Pod) { p.Spec.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined }, "pod seccomp"},
		{func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{{Name: "x"}} }, "init containers"},
		{func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar"}) }, "containers"},
		{func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, "volumes"},
		{func(p *corev1.Pod) { p.Spec.Volumes[0].EmptyDir.SizeLimit = nil }, "volumes"},
		{func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "token", MountPath: "/var/run/secrets"})
		}, "volume mounts"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].Image = "evil:latest" }, "image"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].Args = []string{"--debug"} }, "command"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].TTY = true }, "stdin"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "LD_PRELOAD", Value: "/x.so"}} }, "environment"},
		{func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("8Gi")
		}, "resources"},
		{func(p *corev1.Pod) { delete(p.Spec.Containers[0].Resources.Limits, corev1.ResourceCPU) }, "resources"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.Privileged = &yes }, "privileged"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil }, "privilege escalation"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem = &no }, "read-only root"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.RunAsUser = &uid }, "user"},
		{func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.Capabilities.Add = append(p.Spec.Containers[0].SecurityContext.Capabilities.Add, "SYS_ADMIN")
		}, "capabilities"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.Capabilities.Drop = nil }, "capabilities"},
		{func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, "container seccomp"},
		{func(p *corev1.Pod) {
			um := corev1.UnmaskedProcMount
			p.Spec.Containers[0].SecurityContext.ProcMount = &um
		}, "proc mount"},
		{func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext = nil }, "security context"},
	} {
		got := want.DeepCopy()
		tc.change(got)
		err := verifyPod(want, got)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("changed %s: %v", tc.says, err)
		}
	}
	// What a cluster adds by itself.
	got := want.DeepCopy()
	got.Spec.NodeName = "node-1"
	got.Spec.DNSPolicy = corev1.DNSClusterFirst
	got.Spec.SchedulerName = "default-scheduler"
	got.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}
	got.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	if err := verifyPod(want, got); err != nil {
		t.Errorf("a Pod with the cluster's own defaults is refused: %v", err)
	}
}
