package kubernetes

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/agent"
)

// LabelOwner marks every Pod arena creates; its value names the arena
// process that owns it (host, pid and start, dots for the slashes a label
// cannot hold), so that what a dead arena left can be found and deleted.
const LabelOwner = "arena.arenabots.org/owner"

// LabelManaged is the label Kubernetes tools read for who manages a Pod.
const LabelManaged = "app.kubernetes.io/managed-by"

// container is the name of the Pod's one container.
const container = "box"

// capsKept are what the agent needs to switch to the bot user, give it its
// game directory, and kill and clean up after it (the Docker backend's
// list). All of them are in the Pod Security Standard "baseline". The bot
// runs with none of them.
var capsKept = []corev1.Capability{"CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID"}

// shmBytes caps /dev/shm, which is scratch wiped every turn.
const shmBytes = 64 * sandbox.MiB

// Place is where and how the cluster runs boxes: what the organizer says
// about it, the same for every Pod.
type Place struct {
	Namespace string
	Image     string
	// PullPolicy is the image's (default IfNotPresent; Never for an image
	// imported into the nodes, as in tests).
	PullPolicy corev1.PullPolicy
	// PullSecret names a Secret of the namespace for a private registry.
	PullSecret string
	// RuntimeClass is the RuntimeClass boxes run under (gVisor's, Kata's);
	// "" is the node's default.
	RuntimeClass string
	// NodeSelector places boxes on these nodes only.
	NodeSelector map[string]string
	// Deadline is the Pod's activeDeadlineSeconds: the kubelet kills a box
	// still there after that long, whatever became of arena.
	Deadline int64
	// Owner is the arena process the Pods belong to (sandbox.Owner): the
	// value of AnnotationOwner, and of LabelOwner as a label can hold it.
	Owner string
}

// labelValue is what a label may hold: 63 characters at most, letters,
// digits, '-', '_' and '.', beginning and ending with a letter or digit.
var labelUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func labelValue(s string) string {
	s = strings.Trim(labelUnsafe.ReplaceAllString(s, "."), "-_.")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-_.")
	}
	return s
}

// podFor translates what a box needs into the Pod the cluster is asked
// for: the runtime image with the agent as PID 1 on an attached stdin, the
// Docker backend's hardening said the Kubernetes way, and size-limited,
// memory-backed directories for the game, the scratch and /dev/shm. It is
// pure: everything here is tested without a cluster. annotations carry the
// box's own labels (sandbox.Spec.Labels), whose values a label could not
// hold.
func podFor(p Place, name string, lim sandbox.Limits, programBytes int64, annotations map[string]string) *corev1.Pod {
	no, yes := false, true
	root := int64(0)
	grace := int64(0)
	deadline := p.Deadline
	cpu := resource.NewMilliQuantity(int64(math.Round(lim.CPUs*1000)), resource.DecimalSI)
	mem := resource.NewQuantity(lim.Memory, resource.BinarySI)
	res := corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem}
	policy := p.PullPolicy
	if policy == "" {
		policy = corev1.PullIfNotPresent
	}
	memDir := func(name string, size int64) corev1.Volume {
		q := resource.NewQuantity(size, resource.BinarySI)
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: q}}}
	}
	// The program's directory is on the node's disk: a program is written
	// once and may be large. A MiB over its size for the file system's own.
	botSize := resource.NewQuantity(programBytes+sandbox.MiB, resource.BinarySI)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   p.Namespace,
			Labels:      map[string]string{LabelOwner: labelValue(p.Owner), LabelManaged: "arena"},
			Annotations: withOwner(annotations, p.Owner),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			ActiveDeadlineSeconds:         &deadline,
			NodeSelector:                  maps.Clone(p.NodeSelector),
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            container,
				Image:           p.Image,
				ImagePullPolicy: policy,
				Command:         []string{agent.Path, "--hello-when-asked"},
				WorkingDir:      "/",
				Stdin:           true,
				StdinOnce:       true,
				SecurityContext: &corev1.SecurityContext{
					Privileged:               &no,
					AllowPrivilegeEscalation: &no,
					ReadOnlyRootFilesystem:   &yes,
					RunAsUser:                &root,
					RunAsGroup:               &root,
					RunAsNonRoot:             &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: slices.Clone(capsKept)},
				},
				Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "game", MountPath: agent.GameDir},
					{Name: "scratch", MountPath: agent.ScratchDir},
					{Name: "shm", MountPath: agent.ShmDir},
					{Name: "bot", MountPath: agent.BotDir},
				},
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Volumes: []corev1.Volume{
				memDir("game", lim.GameDirBytes),
				memDir("scratch", lim.ScratchBytes),
				memDir("shm", min(shmBytes, lim.ScratchBytes)),
				{Name: "bot", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: botSize}}},
			},
		},
	}
	if p.RuntimeClass != "" {
		rc := p.RuntimeClass
		pod.Spec.RuntimeClassName = &rc
	}
	if p.PullSecret != "" {
		pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: p.PullSecret}}
	}
	return pod
}

func withOwner(a map[string]string, owner string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	out[AnnotationOwner] = owner
	return out
}

// verifyPod compares the Pod the cluster recorded with the one asked for:
// an admission webhook or a mutating policy may have changed it, and a box
// missing any of its hardening must not run a bot (the Docker backend's
// inspect-after-create). What a cluster adds on its own and which weakens
// nothing (defaults, tolerations, a node name) is not compared.
func verifyPod(want, got *corev1.Pod) error {
	var bad []string
	check := func(name string, ok bool, w, g any) {
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: asked %v, the cluster has %v", name, w, g))
		}
	}
	ws, gs := want.Spec, got.Spec
	check("host network", !gs.HostNetwork, false, gs.HostNetwork)
	check("host PID namespace", !gs.HostPID, false, gs.HostPID)
	check("host IPC namespace", !gs.HostIPC, false, gs.HostIPC)
	check("shared process namespace", gs.ShareProcessNamespace == nil || !*gs.ShareProcessNamespace, false, fmtBool(gs.ShareProcessNamespace))
	check("service account token", isFalse(gs.AutomountServiceAccountToken), false, fmtBool(gs.AutomountServiceAccountToken))
	check("service links", isFalse(gs.EnableServiceLinks), false, fmtBool(gs.EnableServiceLinks))
	check("restart policy", gs.RestartPolicy == corev1.RestartPolicyNever, corev1.RestartPolicyNever, gs.RestartPolicy)
	check("runtime class", fmtString(gs.RuntimeClassName) == fmtString(ws.RuntimeClassName), fmtString(ws.RuntimeClassName), fmtString(gs.RuntimeClassName))
	check("active deadline", eqInt(gs.ActiveDeadlineSeconds, ws.ActiveDeadlineSeconds), fmtInt(ws.ActiveDeadlineSeconds), fmtInt(gs.ActiveDeadlineSeconds))
	check("pod seccomp profile", seccomp(gs.SecurityContext) == corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeRuntimeDefault, seccomp(gs.SecurityContext))
	check("pod sysctls", gs.SecurityContext == nil || len(gs.SecurityContext.Sysctls) == 0, "none", podSysctls(gs.SecurityContext))
	check("init containers", len(gs.InitContainers) == 0, "none", len(gs.InitContainers))
	check("ephemeral containers", len(gs.EphemeralContainers) == 0, "none", len(gs.EphemeralContainers))
	check("containers", len(gs.Containers) == 1, 1, len(gs.Containers))
	check("volumes", sameVolumes(ws.Volumes, gs.Volumes), fmtVolumes(ws.Volumes), fmtVolumes(gs.Volumes))
	if len(gs.Containers) == 1 {
		wc, gc := ws.Containers[0], gs.Containers[0]
		check("image", gc.Image == wc.Image, wc.Image, gc.Image)
		check("command", slices.Equal(gc.Command, wc.Command) && len(gc.Args) == 0, wc.Command, append(gc.Command, gc.Args...))
		check("stdin", gc.Stdin && gc.StdinOnce && !gc.TTY, "attached once, no TTY", fmt.Sprintf("stdin %v once %v tty %v", gc.Stdin, gc.StdinOnce, gc.TTY))
		check("resources", sameResources(wc.Resources, gc.Resources), fmtResources(wc.Resources), fmtResources(gc.Resources))
		check("volume mounts", sameMounts(wc.VolumeMounts, gc.VolumeMounts), fmtMounts(wc.VolumeMounts), fmtMounts(gc.VolumeMounts))
		check("device mounts", len(gc.VolumeDevices) == 0, "none", len(gc.VolumeDevices))
		check("ports", len(gc.Ports) == 0, "none", len(gc.Ports))
		check("environment", len(gc.Env) == 0 && len(gc.EnvFrom) == 0, "none", len(gc.Env)+len(gc.EnvFrom))
		w, g := wc.SecurityContext, gc.SecurityContext
		if g == nil {
			bad = append(bad, "container security context: the cluster dropped it")
		} else {
			check("privileged", isFalse(g.Privileged), false, fmtBool(g.Privileged))
			check("privilege escalation", isFalse(g.AllowPrivilegeEscalation), false, fmtBool(g.AllowPrivilegeEscalation))
			check("read-only root", g.ReadOnlyRootFilesystem != nil && *g.ReadOnlyRootFilesystem, true, fmtBool(g.ReadOnlyRootFilesystem))
			check("user", eqInt(g.RunAsUser, w.RunAsUser), fmtInt(w.RunAsUser), fmtInt(g.RunAsUser))
			check("group", eqInt(g.RunAsGroup, w.RunAsGroup), fmtInt(w.RunAsGroup), fmtInt(g.RunAsGroup))
			check("capabilities", sameCaps(w.Capabilities, g.Capabilities), fmtCaps(w.Capabilities), fmtCaps(g.Capabilities))
			check("container seccomp profile", g.SeccompProfile == nil || g.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeRuntimeDefault, g.SeccompProfile)
			check("proc mount", g.ProcMount == nil || *g.ProcMount == corev1.DefaultProcMount, corev1.DefaultProcMount, g.ProcMount)
			check("SELinux or AppArmor loosened", g.AppArmorProfile == nil || g.AppArmorProfile.Type != corev1.AppArmorProfileTypeUnconfined, "not unconfined", g.AppArmorProfile)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the cluster did not keep the box's hardening (an admission webhook or policy changed the Pod): %s", strings.Join(bad, "; "))
	}
	return nil
}

func isFalse(p *bool) bool { return p != nil && !*p }

func fmtBool(p *bool) any {
	if p == nil {
		return "unset"
	}
	return *p
}

func fmtString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func eqInt(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func fmtInt(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}

func seccomp(sc *corev1.PodSecurityContext) corev1.SeccompProfileType {
	if sc == nil || sc.SeccompProfile == nil {
		return "unset"
	}
	return sc.SeccompProfile.Type
}

func podSysctls(sc *corev1.PodSecurityContext) any {
	if sc == nil {
		return "none"
	}
	return sc.Sysctls
}

func sameCaps(w, g *corev1.Capabilities) bool {
	if w == nil || g == nil {
		return w == g
	}
	return fmtCaps(w) == fmtCaps(g)
}

func fmtCaps(c *corev1.Capabilities) string {
	if c == nil {
		return "unset"
	}
	norm := func(cs []corev1.Capability) string {
		s := make([]string, len(cs))
		for i, x := range cs {
			s[i] = strings.TrimPrefix(strings.ToUpper(string(x)), "CAP_")
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	return "drop " + norm(c.Drop) + " add " + norm(c.Add)
}

func sameResources(w, g corev1.ResourceRequirements) bool { return fmtResources(w) == fmtResources(g) }

func fmtResources(r corev1.ResourceRequirements) string {
	list := func(l corev1.ResourceList) string {
		var s []string
		for k, v := range l {
			s = append(s, fmt.Sprintf("%s=%d", k, v.MilliValue()))
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	return "requests " + list(r.Requests) + " limits " + list(r.Limits)
}

func sameMounts(w, g []corev1.VolumeMount) bool { return fmtMounts(w) == fmtMounts(g) }

func fmtMounts(ms []corev1.VolumeMount) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprintf("%s:%s:ro=%v:sub=%s", m.Name, m.MountPath, m.ReadOnly, m.SubPath)
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// sameVolumes: the same volumes, each an emptyDir of the same medium and
// size; nothing else (a hostPath, a projected token) may be added.
func sameVolumes(w, g []corev1.Volume) bool { return fmtVolumes(w) == fmtVolumes(g) }

func fmtVolumes(vs []corev1.Volume) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		switch e := v.EmptyDir; {
		case e == nil:
			s[i] = v.Name + ":not an emptyDir"
		case e.SizeLimit == nil:
			s[i] = fmt.Sprintf("%s:emptyDir %q of no size limit", v.Name, e.Medium)
		default:
			s[i] = fmt.Sprintf("%s:emptyDir %q of %d", v.Name, e.Medium, e.SizeLimit.Value())
		}
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}
