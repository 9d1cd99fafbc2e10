// Package kubernetes is the sandbox backend that runs each bot in its own
// hardened Pod on a Kubernetes cluster, placed by the cluster's scheduler.
//
// One Pod per box: the runtime image with the arena agent (package
// sandbox/agent) as PID 1, its stdin and stdout reached through the API
// server's attach stream (WebSocket, SPDY where the server has no
// WebSocket), over which the bot's program is sent and its turns played:
// nothing of the organizer's machine is mounted, no host path, no registry
// push. The Pod carries the Docker backend's hardening in Kubernetes terms
// (podFor), is read back after creation and refused if the cluster changed
// any of it (verifyPod), carries an owner label, is deleted on every exit
// path, and what a killed arena left is swept by that label. With a warm
// pool (Backend.Warm) Pods are started ahead of demand and each handed out
// to one box; Preflight and Bench are what arena doctor checks and
// measures on a cluster.
//
// It must never:
//
//   - run a bot in a Pod whose recorded spec lacks any of the hardening
//     asked for, or mounts anything but its own emptyDirs;
//   - charge the cluster's failure to the bot: a Pod evicted, a node lost, an
//     API server that refuses, an attach stream cut are faults (the game is
//     played again); only the kernel's out-of-memory kill of the box is the
//     bot's;
//   - give a box a service-account token, a host namespace or a privilege
//     the agent does not need;
//   - hand a Pod out to a second box: a box's Pod is deleted with it (a
//     box serves its bot's next game only after the agent's checked reset,
//     as on Docker, and an idle one gives way to a game that needs room).
package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/agent"
	"github.com/arenabots/arena/sandbox/proc"
)

// Backend opens Pods on one cluster, in one namespace, from one image.
type Backend struct {
	cs    kubernetes.Interface
	rc    *rest.Config
	place Place
	// StartTimeout bounds a Pod's scheduling, start and the agent's hello.
	StartTimeout time.Duration
	// Log receives a debug line for each Pod and a warning for each failure
	// that is handled; nil means slog.Default().
	Log *slog.Logger
	// Warm is how many Pods of each shape (the limits a box is opened
	// with) are kept running, attached and greeted ahead of demand, each
	// handed out once to the next Open of that shape, which sends it its
	// program; 0 keeps none. Set it before the first Open.
	Warm int
	// WarmIdle is how long a warm Pod waits for a box to serve before it
	// is deleted (its requests hold room on a node); 0 is a minute.
	WarmIdle time.Duration

	warmOnce sync.Once
	warm     *warmPool
	roomOnce sync.Once
	room     *room
}

// New returns a backend that runs bots in Pods placed as p says, through
// the API server rc reaches.
func New(rc *rest.Config, p Place) (*Backend, error) {
	rc = rest.CopyConfig(rc)
	if rc.QPS == 0 {
		// A tournament opens two Pods a game, several games at once.
		rc.QPS, rc.Burst = 50, 100
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	if p.Owner == "" {
		p.Owner = sandbox.Owner()
	}
	if p.Deadline == 0 {
		p.Deadline = int64((24 * time.Hour).Seconds())
	}
	return &Backend{cs: cs, rc: rc, place: p, StartTimeout: 2 * time.Minute}, nil
}

func (b *Backend) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}

// Name implements sandbox.Backend.
func (b *Backend) Name() string { return "kubernetes" }

// Capabilities implements sandbox.Backend. Every Pod is isolated. A box
// is reusable: the agent resets it as on Docker, and a Pod kept idle for
// its bot's next game is deleted when a game's Pod finds no room
// (sandbox.MakeRoom), so that idle Pods never keep games waiting. Under a
// RuntimeClass of its own (gVisor's, Kata's) a box is not reusable (a
// reset there cannot see every IPC object of the bot's, as on Docker under
// gVisor), and the bot's memory may be held by a kernel of that runtime,
// which an out-of-memory kill may take with the bot.
func (b *Backend) Capabilities() sandbox.Capabilities {
	sandboxed := b.place.RuntimeClass != ""
	return sandbox.Capabilities{Isolated: true, Reusable: !sandboxed, OOMTakesTheBox: sandboxed}
}

// Where implements sandbox.Backend: the namespace, the RuntimeClass when
// one is set, and the room the cluster was last seen to have.
func (b *Backend) Where() string {
	where := "namespace " + b.place.Namespace
	if b.place.RuntimeClass != "" {
		where += ", RuntimeClass " + b.place.RuntimeClass
	}
	if b.Warm > 0 {
		where += fmt.Sprintf(", %d warm Pods of each shape in the room games leave", b.Warm)
	}
	if most := b.Most(); most > 0 {
		where += fmt.Sprintf(", room for %d bots at once as last seen: a game waits in the queue for room", most)
	}
	return "in Pods on the cluster (" + where + ")"
}

// Describe implements sandbox.Backend.
func (b *Backend) Describe(ctx context.Context) (map[string]string, error) {
	d := map[string]string{"backend": "kubernetes", "image": b.place.Image, "namespace": b.place.Namespace}
	if b.place.RuntimeClass != "" {
		d["runtimeClass"] = b.place.RuntimeClass
	}
	v, err := b.cs.Discovery().ServerVersion()
	if err != nil {
		return d, fmt.Errorf("ask the API server its version: %w", err)
	}
	d["serverVersion"] = v.GitVersion
	return d, nil
}

// Open implements sandbox.Backend: create and check a Pod, wait for it to
// run, attach to its agent, send it the program; or, with a warm pool
// (Warm), hand out a Pod of the pool already running, attached and
// greeted, and send it the program. On any failure the Pod is deleted.
func (b *Backend) Open(ctx context.Context, spec sandbox.Spec) (_ sandbox.Box, err error) {
	if err := spec.Limits.Validate(); err != nil {
		return nil, err
	}
	program, err := agent.ProgramTar(spec.Program)
	if err != nil {
		return nil, err
	}
	if w := b.warmPool(); w != nil && int64(len(program)) <= warmProgramBytes {
		defer w.fill(spec.Limits)
		if bx := w.take(spec.Limits); bx != nil {
			err := b.handOut(ctx, bx, spec, program)
			if err == nil {
				return bx, nil
			}
			// A warm Pod evicted or gone while it waited: a fresh one.
			bx.p.log.Warn("kubernetes: a warm pod could not be handed out; opening another", "err", err)
			bx.Close(context.WithoutCancel(ctx))
		}
	}
	makeRoomFirst(ctx)
	bx, err := b.start(ctx, podName(spec.Program.Name), spec.Limits, int64(len(program)), spec.Labels)
	// Each time round one idle box was deleted: there are few.
	for tries := 1; errors.Is(err, errRoomMade) && tries < 10; tries++ {
		bx, err = b.start(ctx, podName(spec.Program.Name), spec.Limits, int64(len(program)), spec.Labels)
	}
	if errors.Is(err, errRoomMade) {
		if admitted(ctx) != nil {
			err = fmt.Errorf("%w: %v", sandbox.ErrNoRoom, err)
		} else {
			err = sandbox.Faultf("start pod", err)
		}
	}
	if err != nil {
		return nil, err
	}
	bx.Exec = spec.Program.Entry
	if err := bx.Install(ctx, program, rlimits(spec.Limits), botID()); err != nil {
		bx.Close(context.WithoutCancel(ctx))
		return nil, sandbox.Faultf("install the program", err)
	}
	return bx, nil
}

// errRoomMade is a Pod the scheduler found no room for, once an idle box
// was deleted to make some: it is deleted and made again.
var errRoomMade = errors.New("no node had room for the pod; idle pods were deleted to make some")

// start creates and checks a Pod for a program of programBytes under lim,
// waits for it to run and attaches to its agent, which greets: a box ready
// for its program. On any failure the Pod is deleted.
func (b *Backend) start(ctx context.Context, name string, lim sandbox.Limits, programBytes int64, labels map[string]string) (_ *box, err error) {
	want := podFor(b.place, name, lim, programBytes, labels)
	log := b.log().With("pod", name)
	start := time.Now()
	created, err := b.create(ctx, want)
	if err != nil {
		return nil, err
	}
	log.Debug("kubernetes: pod created", "took", time.Since(start))
	p := &podBox{b: b, name: name, log: log, stderr: agent.NewStderr(4096)}
	bx := &box{Client: &agent.Client{Host: p, Limits: lim, Log: log, Name: "kubernetes"}, p: p}
	defer func() {
		if err != nil {
			log.Debug("kubernetes: open failed; deleting the pod", "err", err)
			bx.Close(context.WithoutCancel(ctx))
		}
	}()
	if err := verifyPod(want, created); err != nil {
		return nil, sandbox.Faultf("verify pod", err)
	}
	sctx, cancel := context.WithTimeout(ctx, b.StartTimeout)
	defer cancel()
	running, err := b.waitRunning(sctx, name)
	if errors.Is(err, sandbox.ErrNoRoom) || errors.Is(err, errRoomMade) {
		return nil, err
	}
	if err != nil {
		return nil, sandbox.Faultf("start pod", err)
	}
	if a := admitted(ctx); a != nil {
		a.opened()
	}
	// Read back again once placed: a mutation after admission (a policy
	// engine's background rewrite) would show here.
	if err := verifyPod(want, running); err != nil {
		return nil, sandbox.Faultf("verify pod", err)
	}
	p.started.running = time.Since(start)
	log.Debug("kubernetes: pod running", "node", running.Spec.NodeName, "took", p.started.running)
	attached := time.Now()
	if err := p.attach(ctx, bx.Client); err != nil {
		return nil, sandbox.Faultf("attach pod", err)
	}
	if err := bx.AwaitHello(sctx, b.StartTimeout, true); err != nil {
		return nil, sandbox.Faultf("agent hello", err)
	}
	p.started.hello = time.Since(attached)
	log.Debug("kubernetes: agent ready", "protocol", bx.Hello().Version, "took", time.Since(start))
	return bx, nil
}

// create creates the Pod. One the namespace's ResourceQuota has no room
// for is, under an admission that other games share, or for the warm
// pool, ErrNoRoom (giveWay); alone,
// it is asked for again each second until StartTimeout (Pods of a game
// just ended may still count against the quota).
func (b *Backend) create(ctx context.Context, want *corev1.Pod) (*corev1.Pod, error) {
	pods := b.cs.CoreV1().Pods(b.place.Namespace)
	deadline := time.Now().Add(b.StartTimeout)
	for {
		// Not given up when ctx ends: the API server may finish a create
		// its client stopped waiting for, and that Pod would be known to
		// no one. Once made, ctx's end fails the next step, which deletes it.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.StartTimeout)
		created, err := pods.Create(cctx, want, metav1.CreateOptions{})
		cancel()
		if err == nil || !quotaExceeded(err) {
			if err != nil {
				return nil, sandbox.Faultf("create pod", err)
			}
			return created, nil
		}
		if giveWay(ctx) {
			return nil, fmt.Errorf("%w: create pod: %v", sandbox.ErrNoRoom, err)
		}
		if time.Now().After(deadline) {
			return nil, sandbox.Faultf("create pod", err)
		}
		select {
		case <-ctx.Done():
			return nil, sandbox.Faultf("create pod", err)
		case <-time.After(time.Second):
		}
	}
}

// rlimits are what Docker's ulimits say: no core dumps, the file size and
// open files limits; and the pids limit, which a Pod lacks (the kubelet's
// podPidsLimit is the node's, for every Pod), as RLIMIT_NPROC: the kernel
// counts it per user across the node, and each box's bot has a user of
// its own (botID).
func rlimits(l sandbox.Limits) []proc.Rlimit {
	return []proc.Rlimit{
		{Resource: syscall.RLIMIT_CORE, Value: 0},
		{Resource: syscall.RLIMIT_FSIZE, Value: uint64(l.FileSize)},
		{Resource: syscall.RLIMIT_NOFILE, Value: uint64(l.OpenFiles)},
		{Resource: unix.RLIMIT_NPROC, Value: uint64(l.Pids)},
	}
}

// botID is a user for one box's bot, drawn from a billion: two boxes on a
// node share one (and so one process count) about once in a billion pairs.
func botID() int {
	var b [4]byte
	rand.Read(b[:])
	return 1<<20 + int(binary.BigEndian.Uint32(b[:])%(1<<30))
}

// waitRunning watches the Pod until it runs, and says why it will not: a
// failed or deleted Pod, an image that cannot be pulled, an unschedulable
// one past the context's end.
func (b *Backend) waitRunning(ctx context.Context, name string) (*corev1.Pod, error) {
	pods := b.cs.CoreV1().Pods(b.place.Namespace)
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var last *corev1.Pod
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the pod did not run: %s%s", why(last, ctx.Err()), b.events(ctx, name))
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The watch ended (the API server closes them now and then):
				// read the Pod once, then watch again.
				pod, err := pods.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				if pod.Status.Phase == corev1.PodRunning {
					return pod, nil
				}
				return b.waitRunning(ctx, name)
			}
			if ev.Type == watch.Deleted {
				return nil, errors.New("the pod was deleted before it ran")
			}
			if ev.Type == watch.Error {
				return nil, fmt.Errorf("watch: %v", apierrors.FromObject(ev.Object))
			}
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			last = pod
			if msg := unschedulable(pod); msg != "" {
				// No node has room. An idle box of the caller's is deleted for
				// it, and the Pod made again (the scheduler tries a Pod it
				// found no room for again only after a back-off). Under an
				// admission other games share, the game waits for theirs;
				// alone, the scheduler is waited on.
				if sandbox.MakeRoom(ctx) {
					return nil, errRoomMade
				}
				if giveWay(ctx) {
					return nil, fmt.Errorf("%w: schedule pod: %s", sandbox.ErrNoRoom, msg)
				}
			}
			switch pod.Status.Phase {
			case corev1.PodRunning:
				return pod, nil
			case corev1.PodFailed, corev1.PodSucceeded:
				return nil, fmt.Errorf("the pod ended before it ran: %s", why(pod, nil))
			}
			if w := waiting(pod); w != nil && badWait[w.Reason] {
				return nil, fmt.Errorf("the pod cannot start: %s: %s", w.Reason, w.Message)
			}
		}
	}
}

// events are the warnings the cluster recorded about the Pod, as words
// to add to why it did not run: the cause of a Pod that never runs (a
// network plugin missing on the node, a volume that cannot be made) is
// often there alone.
func (b *Backend) events(ctx context.Context, name string) string {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	list, err := b.cs.CoreV1().Events(b.place.Namespace).List(ectx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name}.AsSelector().String()})
	if err != nil {
		return fmt.Sprintf("; its events cannot be read: %v", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range list.Items {
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		line := e.Reason + ": " + e.Message
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return "; no warning among its events"
	}
	return "; its events: " + strings.Join(out, "; ")
}

// badWait are the reasons a container waits that no wait will end.
var badWait = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true,
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}

func waiting(p *corev1.Pod) *corev1.ContainerStateWaiting {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Waiting != nil {
			return s.State.Waiting
		}
	}
	return nil
}

// why says what became of a Pod, as its status tells.
func why(p *corev1.Pod, err error) string {
	if p == nil {
		if err != nil {
			return err.Error()
		}
		return "no word from the cluster"
	}
	parts := []string{"phase " + string(p.Status.Phase)}
	if p.Status.Reason != "" {
		parts = append(parts, p.Status.Reason+": "+p.Status.Message)
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		switch {
		case s.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("waiting: %s %s", s.State.Waiting.Reason, s.State.Waiting.Message))
		case s.State.Terminated != nil:
			t := s.State.Terminated
			parts = append(parts, fmt.Sprintf("terminated: %s, exit code %d %s", t.Reason, t.ExitCode, t.Message))
		}
	}
	if err != nil {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "; ")
}

func podName(program string) string {
	n := strings.ToLower(strings.Trim(dnsUnsafe.ReplaceAllString(program, "-"), "-"))
	if len(n) > 40 {
		n = strings.Trim(n[:40], "-")
	}
	if n == "" {
		n = "bot"
	}
	b := make([]byte, 4)
	rand.Read(b)
	return "arena-" + n + "-" + hex.EncodeToString(b)
}

// box is one Pod: its agent's client, and the Pod as the client's
// agent.Host.
type box struct {
	*agent.Client
	p *podBox
}

// ID is the Pod's name.
func (bx *box) ID() string { return bx.p.name }

// podBox is the Pod behind a box: what only the API server can do about it.
type podBox struct {
	b      *Backend
	name   string
	log    *slog.Logger
	stderr *agent.Stderr

	stream chan error // the attach stream's end
	cancel context.CancelFunc

	// started says how long the Pod took to run from its creation, and
	// the agent's hello to arrive from the attach's start.
	started struct{ running, hello time.Duration }
}

// attach opens the attach stream to the agent's stdin, stdout and stderr
// (WebSocket, then SPDY where the API server has no WebSocket), and
// connects c to it.
func (p *podBox) attach(ctx context.Context, c *agent.Client) error {
	b := p.b
	req := b.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.place.Namespace).Name(p.name).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: container, Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(b.rc, http.MethodPost, req.URL())
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(b.rc, http.MethodGet, req.URL().String())
	if err != nil {
		return err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	p.stream = make(chan error, 1)
	go func() {
		err := exec.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Stderr: p.stderr})
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err)
		inR.CloseWithError(err)
		p.stream <- err
	}()
	c.Connect(outR, &streamIn{w: inW, p: p})
	return nil
}

// streamIn is the attach stream as the agent's stdin: closing it ends the
// stream and waits for it.
type streamIn struct {
	w *io.PipeWriter
	p *podBox
}

func (s *streamIn) Write(b []byte) (int, error) { return s.w.Write(b) }

func (s *streamIn) Close() error {
	s.w.Close()
	s.p.cancel()
	<-s.p.stream
	return nil
}

// Kill implements agent.Host: the Pod is deleted at once (no grace).
func (p *podBox) Kill(ctx context.Context) {
	if err := p.delete(ctx); err != nil {
		p.log.Warn("kubernetes: pod delete failed", "err", err)
	}
}

func (p *podBox) delete(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	grace := int64(0)
	err := p.b.cs.CoreV1().Pods(p.b.place.Namespace).Delete(dctx, p.name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Gone implements agent.Host: the Pod's status says why the agent went
// away. Only the kernel's out-of-memory kill is the bot's; an eviction, a
// deleted Pod, a lost node, an API server that cannot say are faults.
func (p *podBox) Gone(ctx context.Context, what string) error {
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	pods := p.b.cs.CoreV1().Pods(p.b.place.Namespace)
	var pod *corev1.Pod
	var err error
	// Give the kubelet a moment to record the end.
	for i := 0; i < 40; i++ {
		pod, err = pods.Get(gctx, p.name, metav1.GetOptions{})
		if err != nil || terminated(pod) != nil || pod.Status.Phase != corev1.PodRunning {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s; the pod was deleted", what)
	case err != nil:
		return fmt.Errorf("%s; reading the pod failed: %w", what, err)
	}
	if t := terminated(pod); t != nil && t.Reason == "OOMKilled" {
		return agent.ErrOOM
	}
	return fmt.Errorf("%s; %s; agent stderr: %q", what, why(pod, nil), p.stderr.String())
}

func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated
		}
	}
	return nil
}

// OOMKills implements agent.Host: the agent counts them in its own cgroup.
func (p *podBox) OOMKills() int64 { return -1 }

// Close implements agent.Host: the Pod is deleted, even when ctx is
// already cancelled.
func (p *podBox) Close(ctx context.Context) error {
	start := time.Now()
	if err := p.delete(ctx); err != nil {
		p.log.Warn("kubernetes: pod delete failed; the next start sweeps it", "err", err)
		return fmt.Errorf("delete pod %s: %w", p.name, err)
	}
	p.log.Debug("kubernetes: pod deleted", "took", time.Since(start))
	return nil
}
