package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/arenabots/arena/harness/client"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/gobuild"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
)

// The annotations a box's Pod carries (its sandbox.Spec.Labels): which
// part of the event opened it, and for a game, its match and side.
const (
	podValidate  = "org.arenabots.arena.validate"
	podEventKind = "org.arenabots.arena.event-games"
	podTourney   = "org.arenabots.arena.tournament"
	podMatch     = "org.arenabots.arena.match"
	podSide      = "org.arenabots.arena.side"
)

// TestAnEventPlaysOnTheCluster: the real `arena serve --sandbox kubernetes`,
// with arena's ServiceAccount alone, runs an event on the cluster: a team's
// upload over HTTP is validated in Pods, the ladder plays in Pods, the
// organizer's final plays in Pods and ends with its standings. A Pod of the
// final deleted while its game plays (as an eviction or a lost node does)
// is the host's fault: the attempt is kept aside as evidence, the game is
// played again and recorded once, no bot is charged for it. The server
// stopped, no Pod of it is left.
func TestAnEventPlaysOnTheCluster(t *testing.T) {
	// Built before the cluster is taken: the server, the bots.
	gobuild.MustStatic(t, "./cmd/arena")
	for _, pkg := range []string{"./internal/testbots/ccfixture", "./examples/random"} {
		gobuild.MustStatic(t, pkg)
	}
	kubeconfig, image := clustertest.Kubeconfig(t)
	cs := clustertest.Client(t)
	pods := watchPods(t, cs)

	// Beta and Gamma passed before the start, Beta with a bot that takes
	// 150 ms a turn (its games last seconds: a Pod of one is deleted while
	// it plays); Alpha uploads. Short games, and half a core a box: a
	// validation's two Pods and a ladder game's two fit the test node's
	// two cores.
	e := writeEvent(t, `game = "codeclash"
[rules]
maxPlies = "16"
[limits]
cpus = 0.5
memory = "256MiB"
[ladder]
far = 1.0
`, func(st *event.Store, teams []event.NewTeam) {
		cfg, err := event.LoadConfig(st.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []struct {
			team      event.NewTeam
			pkg, file string
		}{{teams[1], "./internal/testbots/ccfixture", slowBot}, {teams[2], "./examples/random", "bot"}} {
			data, err := os.ReadFile(gobuild.MustStatic(t, b.pkg))
			if err != nil {
				t.Fatal(err)
			}
			sub, err := st.AddSubmission(context.Background(), cfg, b.team.ID, b.file, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetState(context.Background(), sub.ID, event.Passed, ""); err != nil {
				t.Fatal(err)
			}
		}
	}, "Alpha", "Beta", "Gamma")
	start := time.Now()
	srv := startServeWith(t, e.dir,
		[]string{"--kube-config", kubeconfig, "--kube-namespace", clustertest.Namespace, "--kube-pull-policy", "Never"},
		"--sandbox", "kubernetes", "--image", image, "--validators", "1", "--games", "1",
		"--build-cache", filepath.Join(t.TempDir(), "builds"))
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// The owner every Pod of this server carries: its host and PID first.
	pods.owner(host + "/" + strconv.Itoa(srv.pid()) + "/")
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf(format+"\nthe server's log:\n%s", append(a, srv.Logs())...)
	}

	// 1. Alpha's upload, a Python source, passes its validation on the
	// cluster.
	alpha := &client.Client{Server: srv.URL, Token: e.a.Token}
	sub, report := waitFor(t, alpha, writeFile(t, "python.zip", exampleZip(t, "python")))
	if sub.State != event.Passed {
		fail("Alpha's upload: %s (%s)\n%s", sub.State, sub.Summary, report)
	}
	if n := pods.count(podValidate, ""); n < 2 {
		fail("the validation opened %d Pods on the cluster, want its games' (2 or more)", n)
	}

	// 2. The ladder plays Alpha on the cluster.
	type gameList struct {
		Games []event.Game `json:"games"`
		Total int          `json:"total"`
	}
	var ladder gameList
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		code, body := callAPI(t, srv.URL, "GET", "/api/v1/games?kind=ladder", e.a.Token, "")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &ladder) != nil {
			fail("Alpha's ladder games: %d %s", code, body)
		}
		if ladder.Total > 0 {
			break
		}
		if time.Now().After(deadline) {
			fail("no ladder game of Alpha's within 3 minutes")
		}
	}
	if n := pods.count(podEventKind, event.LadderGame); n < 2 {
		fail("%d ladder games recorded for Alpha, but %d Pods of the ladder seen on the cluster", ladder.Total, n)
	}

	// 3. The organizer starts the final. Once Beta's first game of it has
	// played a turn, the Pod of Beta's bot is deleted.
	if code, body := callAPI(t, srv.URL, "POST", "/api/v1/admin/final", e.admin, `{"games_per_pair": 1}`); code != http.StatusOK {
		fail("start the final: %d %s", code, body)
	}
	finalDir := filepath.Join(e.dir, event.FinalDir)
	var deleted *corev1.Pod
	for deadline := time.Now().Add(3 * time.Minute); deleted == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			fail("no game of Beta's in the final played a turn within 3 minutes")
		}
		transcripts, err := filepath.Glob(filepath.Join(finalDir, "games", "*", transcript.FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range transcripts {
			match := filepath.Base(filepath.Dir(tr))
			side := sideIn(match, "Beta")
			if side == "" {
				continue
			}
			data, err := os.ReadFile(tr)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(`"type":"`+transcript.TypeTurn+`"`)) {
				deleted = pods.delete(t, match, side)
				break
			}
		}
	}
	var b event.Board
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		code, body := callAPI(t, srv.URL, "GET", "/api/v1/standings", e.admin, "")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &b) != nil {
			fail("the standings: %d %s", code, body)
		}
		if !b.Run.Finished.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			fail("the final did not end within 4 minutes: %+v", b.Games)
		}
	}
	// Three teams, a game a pair: three games, each played.
	if b.Run.Error != "" || b.Games["total"] != 3 || b.Games["done"] != 3 || b.Games["unplayed"] != 0 || len(b.Standings) != 3 {
		fail("the final ended with %+v, %q, %d rows of standings; want its 3 games played and 3 teams placed", b.Games, b.Run.Error, len(b.Standings))
	}
	games, wins, losses := 0, 0, 0
	for _, r := range b.Standings {
		games, wins, losses = games+r.Games, wins+r.Wins, losses+r.Losses
	}
	if games != 6 || wins != losses {
		t.Errorf("the standings count %d games (want 6: two sides of 3), %d wins and %d losses: %+v", games, wins, losses, b.Standings)
	}
	t.Logf("deleted Pod %s: %s's box of %s", deleted.Name, deleted.Annotations[podSide], deleted.Annotations[podMatch])

	// The deleted Pod's game: one attempt aborted by the host and kept
	// aside, then played again to a result, no fault charged to a bot.
	st, err := tournament.OpenStore(finalDir, true)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Games(context.Background())
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	var hit *tournament.Record
	for i, r := range recs {
		if r.Dir != "" && filepath.Base(r.Dir) == deleted.Annotations[podMatch] {
			hit = &recs[i]
		} else if r.Status != tournament.Done || r.Attempts != 1 || r.Tries != 0 {
			t.Errorf("final game %d, whose Pods were left alone: %s after %d attempts, %d tries ended without a result", r.ID, r.Status, r.Attempts, r.Tries)
		}
	}
	if hit == nil {
		fail("no game of the final played in %s: %+v", deleted.Annotations[podMatch], recs)
	}
	// Two attempts, the first a try that ended without a result, charged
	// to the host (this machine: ""), not as a busy host's.
	if hit.Status != tournament.Done || hit.Attempts != 2 || hit.Tries != 1 || len(hit.AbortedBy) != 1 || hit.AbortedBy[0] != "" || hit.HostBusy != 0 {
		t.Errorf("the game whose Pod was deleted: %s after %d attempts, %d tries without a result, aborted by %q, %d for a busy host; want done at the second attempt, the first aborted by this host",
			hit.Status, hit.Attempts, hit.Tries, hit.AbortedBy, hit.HostBusy)
	}
	if hit.Reason == transcript.ReasonAborted || len(hit.Faults) != 0 {
		t.Errorf("the game played again ended %q with faults %+v charged to its bots", hit.Reason, hit.Faults)
	}
	// The aborted attempt is kept aside, as evidence of why the game was
	// played again.
	var aside transcript.Result
	if data, err := os.ReadFile(filepath.Join(finalDir, hit.Dir+".attempt-1", "result.json")); err != nil {
		t.Errorf("the aborted attempt was not kept aside: %v", err)
	} else if err := json.Unmarshal(data, &aside); err != nil || aside.Reason != transcript.ReasonAborted || aside.Winner != transcript.WinnerNone || aside.AbortReason == "" {
		t.Errorf("the attempt kept aside ended %q (winner %q, %v), want aborted with no winner and the reason", aside.Reason, aside.Winner, err)
	}
	t.Logf("the aborted attempt: %s", aside.AbortReason)
	// The organizer's page says where games play and counts the game
	// played again after its Pod was lost.
	if _, page := callAPI(t, srv.URL, "GET", "/admin", e.admin, ""); !strings.Contains(page, "Every game plays in Pods on the cluster (namespace "+clustertest.Namespace) ||
		!regexp.MustCompile(`(?s)<p id="replays-faults">Games played again because their sandbox failed.*?final 1\.</p>`).MatchString(page) {
		t.Errorf("the organizer's page does not say where games play or count the game played again: %s", regexp.MustCompile(`(?s)<section id="host-load">.*?</section>`).FindString(page))
	}
	// The event records each game of the final once, the aborted attempt
	// never, and each as played on the cluster.
	code, body := callAPI(t, srv.URL, "GET", "/api/v1/games?kind=final", e.admin, "")
	var finals gameList
	if code != http.StatusOK || json.Unmarshal([]byte(body), &finals) != nil {
		fail("the final's games: %d %s", code, body)
	}
	if finals.Total != 3 {
		t.Errorf("the event records %d games of the final, want 3", finals.Total)
	}
	for _, g := range finals.Games {
		if g.Reason == transcript.ReasonAborted || g.Winner == transcript.WinnerNone {
			t.Errorf("final game %d is recorded as %q, won by %q", g.ID, g.Reason, g.Winner)
		}
	}
	lines, err := transcript.ReadFile(filepath.Join(finalDir, hit.Dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var h transcript.Header
	if err := lines[0].Decode(&h); err != nil || h.Sandbox["backend"] != "kubernetes" || h.Sandbox["namespace"] != clustertest.Namespace {
		t.Errorf("the replayed game's header says it was played on %v (%v)", h.Sandbox, err)
	}

	// 4. Stopped, the server leaves no Pod behind.
	srv.Stop(t)
	owners := pods.owners()
	if len(owners) != 1 {
		t.Errorf("the server's Pods carry %d owners, want 1: %v", len(owners), owners)
	}
	for _, o := range owners {
		n, err := clustertest.Count(cs, k8s.AnnotationOwner, o)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d Pods of the stopped server are left on the cluster", n)
		}
	}
	t.Logf("%d Pods of the server seen: %d of validations, %d of the ladder, %d of the final; the event took %v",
		pods.count("", ""), pods.count(podValidate, ""), pods.count(podEventKind, event.LadderGame), pods.count(podTourney, event.FinalDir),
		time.Since(start).Round(time.Second))
}

// slowBot is the name (argv[0]) under which ccfixture takes 150 ms a turn.
const slowBot = "slow-150"

// sideIn is the side bot plays in the match directory named match
// ("0001-White-vs-Black"), "" when it plays neither.
func sideIn(match, bot string) string {
	_, pair, _ := strings.Cut(match, "-")
	white, black, _ := strings.Cut(pair, "-vs-")
	switch bot {
	case white:
		return "white"
	case black:
		return "black"
	}
	return ""
}

// podWatch follows the namespace's arena Pods as the API server tells of
// them, and keeps those of one owner.
type podWatch struct {
	cs kubernetes.Interface

	mu     sync.Mutex
	prefix string                 // the owner's start: host/pid/
	seen   map[string]*corev1.Pod // of the owner, by name, as last told
	early  []*corev1.Pod          // told before the owner was known
}

// watchPods follows the Pods until the test ends.
func watchPods(t *testing.T, cs kubernetes.Interface) *podWatch {
	w := &podWatch{cs: cs, seen: map[string]*corev1.Pod{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	list, err := cs.CoreV1().Pods(clustertest.Namespace).List(ctx, metav1.ListOptions{LabelSelector: k8s.LabelOwner})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	go func() {
		defer close(done)
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			wi, err := cs.CoreV1().Pods(clustertest.Namespace).Watch(ctx, metav1.ListOptions{LabelSelector: k8s.LabelOwner, ResourceVersion: rv})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("watch pods: %v", err)
				}
				return
			}
			// The API server ends a watch now and then: it is taken up
			// again from the last version told.
			for ev := range wi.ResultChan() {
				switch p, ok := ev.Object.(*corev1.Pod); {
				case ev.Type == watch.Error:
					if ctx.Err() == nil {
						t.Errorf("watch pods: %v", ev.Object)
					}
				case ok:
					rv = p.ResourceVersion
					w.told(p)
				}
			}
			wi.Stop()
		}
	}()
	return w
}

// owner sets the owner whose Pods count: those of its host and PID.
func (w *podWatch) owner(prefix string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prefix = prefix
	for _, p := range w.early {
		if strings.HasPrefix(p.Annotations[k8s.AnnotationOwner], prefix) {
			w.seen[p.Name] = p
		}
	}
	w.early = nil
}

func (w *podWatch) told(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.prefix == "":
		w.early = append(w.early, p)
	case strings.HasPrefix(p.Annotations[k8s.AnnotationOwner], w.prefix):
		w.seen[p.Name] = p
	}
}

// delete deletes, at once, the Pod of the final's match (its directory's
// name) that runs side's bot, and returns it.
func (w *podWatch) delete(t *testing.T, match, side string) *corev1.Pod {
	t.Helper()
	w.mu.Lock()
	var pod *corev1.Pod
	for _, p := range w.seen {
		if p.Annotations[podTourney] == event.FinalDir && p.Annotations[podMatch] == match && p.Annotations[podSide] == side && p.DeletionTimestamp == nil {
			pod = p
		}
	}
	w.mu.Unlock()
	if pod == nil {
		t.Fatalf("no Pod of %s's %s seen on the cluster while it plays", match, side)
	}
	grace := int64(0)
	if err := w.cs.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatalf("delete pod %s: %v", pod.Name, err)
	}
	return pod
}

// count is how many Pods of the owner were seen annotated key=value
// (key "": all of them; value "": any value).
func (w *podWatch) count(key, value string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.seen {
		v, ok := p.Annotations[key]
		if key == "" || ok && (value == "" || v == value) {
			n++
		}
	}
	return n
}

// owners are the owner annotations of the Pods seen, exactly.
func (w *podWatch) owners() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := map[string]bool{}
	for _, p := range w.seen {
		set[p.Annotations[k8s.AnnotationOwner]] = true
	}
	var out []string
	for o := range set {
		out = append(out, o)
	}
	return out
}

// The API server admits the server's manifests as they are (a server-side
// dry run, nothing made), with no warning: Pod Security "restricted",
// which arena's namespace warns of, holds for the server's Pod.
func TestTheServersManifestsAreAdmitted(t *testing.T) {
	clustertest.Cluster(t)
	rc, err := k8s.RESTConfig(filepath.Join(os.Getenv(clustertest.Env), "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	var warnings warned
	rc.WarningHandler = &warnings
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	n := 0
	for _, obj := range manifests(t) {
		switch o := obj.(type) {
		case *corev1.PersistentVolumeClaim:
			_, err = cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, dry)
		case *appsv1.Deployment:
			_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, dry)
		case *corev1.Service:
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, dry)
		default:
			continue
		}
		n++
		if err != nil {
			t.Errorf("%T %s: %v", obj, obj.(metav1.Object).GetName(), err)
		}
	}
	if n != 3 {
		t.Errorf("%d of the server's objects tried, want its volume claim, Deployment and Service", n)
	}
	for _, w := range warnings.all() {
		t.Errorf("the API server warned: %s", w)
	}
}

// warned keeps the API server's warnings.
type warned struct {
	mu   sync.Mutex
	list []string
}

func (w *warned) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warned) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}
