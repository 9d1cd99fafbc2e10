package kubernetes_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/dockertest"
	"github.com/arenabots/arena/sandbox"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
	"github.com/arenabots/arena/sandbox/sandboxtest"
)

// The whole conformance suite on a real cluster: every hostile fixture,
// sessions, the pool's reset and isolation cases.
func TestConformance(t *testing.T) {
	b := clustertest.Backend(t)
	cs := clustertest.Client(t)
	if got, want := b.Capabilities(), (sandbox.Capabilities{Isolated: true, Reusable: true}); got != want {
		t.Fatalf("the backend declares %+v, want %+v", got, want)
	}
	sandboxtest.Run(t, sandboxtest.Backend{
		Raw:       b,
		Labels:    func(t *testing.T) map[string]string { return dockertest.Labels(t) },
		Leftovers: func(t *testing.T, labels map[string]string) { clustertest.NoLeftovers(t, cs, labels) },
		Open: func(t *testing.T, p sandbox.Program, l sandbox.Limits) sandbox.Box {
			labels := dockertest.Labels(t)
			bx, err := b.Open(context.Background(), sandbox.Spec{Program: p, Limits: l, Labels: labels})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() {
				if err := bx.Close(context.Background()); err != nil {
					t.Errorf("close: %v", err)
				}
				clustertest.NoLeftovers(t, cs, labels)
			})
			return bx
		},
	})
}

// The cluster's failures are the sandbox's, never the bot's: a Pod deleted
// mid-turn (as an eviction or a lost node does), and an API server that
// answers 429 or 500 when a Pod is created, each end in a fault, and leave
// no Pod behind.
func TestTheClustersFailuresAreFaults(t *testing.T) {
	cs := clustertest.Client(t)
	rc, image := clustertest.Cluster(t)
	prog, lim := sandboxtest.Hostile(t), sandboxtest.Limits()

	t.Run("a Pod deleted mid-turn", func(t *testing.T) {
		labels := dockertest.Labels(t)
		b := clustertest.Backend(t)
		bx, err := b.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		defer bx.Close(context.Background())
		go func() {
			time.Sleep(time.Second)
			grace := int64(0)
			cs.CoreV1().Pods(clustertest.Namespace).Delete(context.Background(), bx.(interface{ ID() string }).ID(), metav1.DeleteOptions{GracePeriodSeconds: &grace})
		}()
		r, err := bx.Run(context.Background(), sandbox.Turn{Put: []sandbox.File{{Name: "state.json", Data: []byte("sleep-forever")}},
			Args: []string{sandbox.GameDirToken + "/state.json"}, Timeout: 10 * time.Second})
		var f *sandbox.Fault
		if !errors.As(err, &f) || r.TimedOut || r.OOMKilled {
			t.Fatalf("a deleted Pod's turn: %+v, %v; want a fault", r, err)
		}
		t.Logf("the fault: %v", err)
		bx.Close(context.Background())
		clustertest.NoLeftovers(t, cs, labels)
	})

	t.Run("an attach stream cut mid-turn", func(t *testing.T) {
		labels := dockertest.Labels(t)
		// The API server through a proxy that can cut every connection.
		px := newCutter(t, strings.TrimPrefix(rc.Host, "https://"))
		c := rest.CopyConfig(rc)
		c.Host = "https://" + px.addr()
		b, err := k8s.New(c, k8s.Place{Namespace: clustertest.Namespace, Image: image, PullPolicy: "Never"})
		if err != nil {
			t.Fatal(err)
		}
		bx, err := b.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		defer bx.Close(context.Background())
		go func() {
			time.Sleep(time.Second)
			px.cut()
		}()
		r, err := bx.Run(context.Background(), sandbox.Turn{Put: []sandbox.File{{Name: "state.json", Data: []byte("sleep-forever")}},
			Args: []string{sandbox.GameDirToken + "/state.json"}, Timeout: 10 * time.Second})
		var f *sandbox.Fault
		if !errors.As(err, &f) || r.TimedOut || r.OOMKilled {
			t.Fatalf("a turn whose attach stream was cut: %+v, %v; want a fault", r, err)
		}
		if px.cuts() == 0 {
			t.Fatal("the proxy cut no connection")
		}
		t.Logf("the fault: %v", err)
		if err := bx.Close(context.Background()); err != nil {
			t.Error(err)
		}
		clustertest.NoLeftovers(t, cs, labels)
	})

	t.Run("a Pod no node takes", func(t *testing.T) {
		// Why a Pod never runs is often in its events alone (a network
		// plugin missing on the node): the fault quotes them.
		labels := dockertest.Labels(t)
		b, err := k8s.New(rc, k8s.Place{Namespace: clustertest.Namespace, Image: image, PullPolicy: "Never", NodeSelector: map[string]string{"arena.test/no-such-node": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		b.StartTimeout = 5 * time.Second
		bx, err := b.Open(context.Background(), sandbox.Spec{Program: prog, Limits: lim, Labels: labels})
		if err == nil {
			bx.Close(context.Background())
			t.Fatal("a Pod no node takes was opened")
		}
		var f *sandbox.Fault
		if !errors.As(err, &f) || !strings.Contains(err.Error(), "its events: FailedScheduling: ") || !strings.Contains(err.Error(), "node(s) didn't match") {
			t.Errorf("a Pod no node takes: %v; want a fault quoting its FailedScheduling event", err)
		}
		t.Logf("the fault: %v", err)
		clustertest.NoLeftovers(t, cs, labels)
	})

	for _, code := range []int{http.StatusTooManyRequests, http.StatusInternalServerError} {
		t.Run(fmt.Sprintf("an API server that answers %d", code), func(t *testing.T) {
			labels := dockertest.Labels(t)
			c := rest.CopyConfig(rc)
			c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
				return refuse{rt: rt, code: code}
			}
			// Without retries of its own, the client gives up at once.
			c.RateLimiter = nil
			b, err := k8s.New(c, k8s.Place{Namespace: clustertest.Namespace, Image: image, PullPolicy: "Never"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			bx, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim, Labels: labels})
			var f *sandbox.Fault
			if err == nil {
				bx.Close(context.Background())
				t.Fatal("a Pod was opened through an API server that refuses")
			}
			if !errors.As(err, &f) {
				t.Fatalf("not a fault: %v", err)
			}
			t.Logf("the fault: %v", err)
			clustertest.NoLeftovers(t, cs, labels)
		})
	}
}

// The test cluster routes the Services to its Pods (the event server
// reaches the API server through its own): a bot's Pod still reaches
// nothing through them, the kubernetes Service's address (the API server)
// included, while its own loopback's closed port answers.
func TestABotReachesNoServiceOfTheCluster(t *testing.T) {
	cs := clustertest.Client(t)
	b := clustertest.Backend(t)
	svc, err := cs.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := dockertest.Labels(t)
	lim := sandbox.DefaultLimits()
	lim.TurnTimeout = 15 * time.Second
	bx, err := b.Open(context.Background(), sandbox.Spec{Program: k8s.NetProbe, Limits: lim, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	defer bx.Close(context.Background())
	api := net.JoinHostPort(svc.Spec.ClusterIP, "443")
	r, err := bx.Run(context.Background(), sandbox.Turn{Put: []sandbox.File{{Name: "targets", Data: []byte("127.0.0.1 1\n" + svc.Spec.ClusterIP + " 443\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	said := string(r.Stdout.Data)
	if !strings.Contains(said, "127.0.0.1:1 refused") {
		t.Fatalf("the probe cannot tell a reachable address: %q", said)
	}
	if strings.Contains(said, api+" open") || strings.Contains(said, api+" refused") {
		t.Errorf("a bot's Pod reached the API server through its Service %s: %q", api, said)
	}
	t.Logf("the probe said: %q", said)
	bx.Close(context.Background())
	clustertest.NoLeftovers(t, cs, labels)
}

// refuse answers every Pod creation with code, as an overloaded or broken
// API server does.
type refuse struct {
	rt   http.RoundTripper
	code int
}

func (r refuse) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/pods") {
		body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","code":%d}`, r.code)
		return &http.Response{StatusCode: r.code, Status: http.StatusText(r.code), Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"0"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req, ContentLength: int64(len(body))}, nil
	}
	return r.rt.RoundTrip(req)
}

// cutter is a TCP proxy to an API server that can cut every connection it
// carries at once, as a load balancer restarting or a network partition
// does.
type cutter struct {
	ln net.Listener
	to string

	mu    sync.Mutex
	conns []net.Conn
	n     int
}

func newCutter(t *testing.T, to string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, to: to}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", to)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

// cut closes every connection the proxy carries now.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
		c.n++
	}
	c.conns = nil
}

func (c *cutter) cuts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A warm pool hands out a Pod already running, attached and greeted, once:
// the box runs its bot like any other, its Pod carries the box's labels,
// and it is deleted when the box closes (never handed out again); a warm
// Pod deleted while it waited is not handed out (the Open gets a Pod of
// its own); closing the backend deletes the Pods still waiting.
func TestAWarmPodIsHandedOutOnce(t *testing.T) {
	cs := clustertest.Client(t)
	b := clustertest.Backend(t)
	b.Warm = 1
	prog, lim := sandboxtest.Hostile(t), sandboxtest.Limits()
	ctx := context.Background()
	pods := cs.CoreV1().Pods(clustertest.Namespace)
	waitWarm := func() string {
		t.Helper()
		for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if b.WarmReady(lim) == 1 {
				list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelOwner})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range list.Items {
					if strings.HasPrefix(p.Name, "arena-warm-") && p.DeletionTimestamp == nil {
						return p.Name
					}
				}
			}
		}
		t.Fatal("no warm pod was ready in 2 minutes")
		return ""
	}
	open := func(labels map[string]string) sandbox.Box {
		t.Helper()
		bx, err := b.Open(ctx, sandbox.Spec{Program: prog, Limits: lim, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		return bx
	}
	id := func(bx sandbox.Box) string { return bx.(interface{ ID() string }).ID() }

	first := open(dockertest.Labels(t))
	if strings.HasPrefix(id(first), "arena-warm-") {
		t.Errorf("the first box got a warm pod %s before any was made", id(first))
	}
	first.Close(ctx)
	warm := waitWarm()

	labels := dockertest.Labels(t)
	bx := open(labels)
	if id(bx) != warm {
		t.Fatalf("the box got pod %s, not the warm %s", id(bx), warm)
	}
	r, err := bx.Run(ctx, sandbox.Turn{Put: []sandbox.File{{Name: "state.json", Data: []byte("ok")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10})
	if err != nil || string(r.Answer.Data) != "ok" || r.ExitCode != 0 {
		t.Fatalf("a warm box's turn: %+v, %v", r, err)
	}
	pod, err := pods.Get(ctx, warm, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range labels {
		if pod.Annotations[k] != v {
			t.Errorf("the warm pod's annotation %s is %q, want %q", k, pod.Annotations[k], v)
		}
	}
	if err := bx.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if p, err := pods.Get(ctx, warm, metav1.GetOptions{}); err == nil && p.DeletionTimestamp == nil {
		t.Errorf("the warm pod %s outlived its box", warm)
	}

	// The next warm pod, deleted while it waits: not handed out.
	next := waitWarm()
	if next == warm {
		t.Fatalf("pod %s was made warm twice", warm)
	}
	grace := int64(0)
	if err := pods.Delete(ctx, next, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if _, err := pods.Get(ctx, next, metav1.GetOptions{}); err != nil {
			break
		}
	}
	bx = open(dockertest.Labels(t))
	if id(bx) == next {
		t.Errorf("a deleted warm pod %s was handed out", next)
	}
	if r, err := bx.Run(ctx, sandbox.Turn{Put: []sandbox.File{{Name: "state.json", Data: []byte("ok")}},
		Args: []string{sandbox.GameDirToken + "/state.json"}, Collect: "move.json", CollectMax: 64 << 10}); err != nil || string(r.Answer.Data) != "ok" {
		t.Errorf("the box opened instead: %+v, %v", r, err)
	}
	bx.Close(ctx)

	waitWarm()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelOwner})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, "arena-warm-") && p.DeletionTimestamp == nil {
			t.Errorf("warm pod %s outlived the backend", p.Name)
		}
	}
}
