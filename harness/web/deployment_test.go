package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/gobuild"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
)

// TestTheServersDeploymentRunsOnTheCluster walks docs/kubernetes.md's
// "From an empty cluster to a running event" on the test cluster, its
// commands as they are: the server's image built from
// images/server/Dockerfile over the runtime image and put where the node
// takes it, the manifests of deploy/kubernetes applied with kubectl (the
// images named as the docs' sed names them), the event made with arena
// event and copied into the server's Pod with kubectl exec and tar, the
// site reached through its Service with kubectl port-forward, the
// organizer's token made in the Pod. Two teams submit with arena submit:
// their validations and the ladder play in Pods the server opens through
// the kubernetes Service. Then the server's Pod is deleted: the Deployment
// starts another on the same volume, and nothing the first acknowledged
// is lost. The volume is a hostPath one the test makes, as a provisioner
// would.
func TestTheServersDeploymentRunsOnTheCluster(t *testing.T) {
	// What needs no Pod is done before the cluster is taken: the programs
	// and the server's image.
	runtimeImage := clustertest.Image(t)
	ctx := context.Background()
	var kubectlCmd func(args ...string) *exec.Cmd // once the cluster is taken
	kubectl := func(stdin io.Reader, args ...string) string {
		t.Helper()
		cmd := kubectlCmd(args...)
		cmd.Stdin = stdin
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	root, err := gobuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	arena := gobuild.MustStatic(t, "./cmd/arena")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(arena, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("arena %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// The server's image, as the docs build it from bin/ after make.
	binDir := t.TempDir()
	random := gobuild.MustStatic(t, "./cmd/arena-random")
	team, err := gobuild.Tagged("./cmd/arena", "arena-team", "team")
	if err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]string{"arena": arena, "arena-random": random, "arena-team": team} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(binDir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	serverImage := "arena-server:deployment-test"
	build := exec.Command("docker", "build", "-q", "-f", filepath.Join(root, "images", "server", "Dockerfile"),
		"--build-arg", "BASE="+runtimeImage, "-t", serverImage, binDir)
	build.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the server's image: %v\n%s", err, out)
	}
	clustertest.Import(t, serverImage)

	clustertest.Cluster(t)
	cs := clustertest.Client(t)
	kubectlCmd = clustertest.Kubectl(t)
	clustertest.ServerNetwork(t)

	// The volume a provisioner would make for the claim arena-event.
	volume := filepath.Join(os.Getenv(clustertest.Env), "volumes", "arena-event")
	if err := os.RemoveAll(volume); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(volume, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(volume, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	hostPath := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "arena-event-test"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		ClaimRef:                      &corev1.ObjectReference{Namespace: clustertest.Namespace, Name: "arena-event"},
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: volume, Type: &hostPath}},
	}}
	if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The manifests, the images named as the docs' sed names them.
	manifests := t.TempDir()
	deploy := filepath.Join(root, "deploy", "kubernetes")
	entries, err := os.ReadDir(deploy)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(deploy, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.NewReplacer("arena-server:latest", serverImage, "arena-runtime:latest", runtimeImage).Replace(string(data))
		if err := os.WriteFile(filepath.Join(manifests, e.Name()), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, args := range [][]string{{"delete", "deployment/arena-server", "service/arena-server", "--wait=true", "--timeout=60s"},
			{"wait", "--for=delete", "pod", "-l", "app.kubernetes.io/name=arena-server", "--timeout=60s"},
			{"delete", "pvc/arena-event", "--wait=true", "--timeout=60s"}} {
			if out, err := kubectlCmd(args...).CombinedOutput(); err != nil {
				t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		// The server ended closes its bots' Pods: none is left to hold
		// the node's room.
		left, err := cs.CoreV1().Pods(clustertest.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelOwner})
		if err != nil {
			t.Errorf("list the bots' Pods: %v", err)
			return
		}
		for _, p := range left.Items {
			t.Errorf("a bot's Pod %s (%s) was left by the server", p.Name, p.Status.Phase)
			grace := int64(0)
			if err := cs.CoreV1().Pods(clustertest.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
				t.Errorf("delete it: %v", err)
			}
		}
		if err := cs.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete the volume: %v", err)
		}
		os.RemoveAll(volume)
	})
	kubectl(nil, "apply", "-k", manifests)

	// The event, made where arena runs.
	work := t.TempDir()
	ev := filepath.Join(work, "myevent")
	run("event", "init", ev, "--game", "codeclash")
	// Bots of a quarter core and 256 MiB, so that the server and its
	// games fit the test node's two cores.
	setLimits(t, filepath.Join(ev, "event.toml"))
	teams := filepath.Join(work, "teams.csv")
	if err := os.WriteFile(teams, []byte("name,members\r\nAlpha & Co,Ann\r\nBeta/2,Bob\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, line := range strings.Split(run("event", "teams", "import", ev, teams, "--format", "csv"), "\n")[1:] {
		f := strings.Split(line, ",")
		if len(f) >= 5 {
			tokens[f[0]] = f[len(f)-1]
		}
	}
	if len(tokens) != 2 {
		t.Fatalf("the teams' tokens: %v", tokens)
	}

	// Its Pod waits for the event; the event is copied in, event.toml last.
	pod := waitForPod(t, kubectl)
	files, err := os.ReadDir(ev)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-C", ev, "-cf", "-"}
	for _, f := range files {
		if f.Name() != "event.toml" {
			args = append(args, f.Name())
		}
	}
	tarOf := func(args ...string) io.Reader {
		out, err := exec.Command("tar", args...).Output()
		if err != nil {
			t.Fatalf("tar %v: %v", args, err)
		}
		return strings.NewReader(string(out))
	}
	kubectl(tarOf(args...), "exec", "-i", pod, "-c", "event", "--", "tar", "-xf", "-", "-C", "/event")
	kubectl(tarOf("-C", ev, "-cf", "-", "event.toml"), "exec", "-i", pod, "-c", "event", "--", "tar", "-xf", "-", "-C", "/event")
	kubectl(nil, "rollout", "status", "deployment/arena-server", "--timeout=5m")

	site := portForward(t, kubectlCmd)
	// The token alone is on stdout (the words around it on stderr, which
	// kubectl exec carries apart).
	out, err := kubectlCmd("exec", "deploy/arena-server", "-c", "server", "--", "arena", "event", "admin-token", "/event").Output()
	if err != nil {
		t.Fatalf("the organizer's token, made in the server's Pod: %v", err)
	}
	admin := strings.TrimSpace(string(out))
	if code, page := callAPI(t, site, "GET", "/admin", admin, ""); code != http.StatusOK || !strings.Contains(page, "Every game plays in Pods on the cluster (namespace "+clustertest.Namespace) {
		t.Fatalf("the organizer's page through the Service: %d %.300s", code, page)
	}

	// Two teams submit; their validations and the ladder play in Pods.
	for name, example := range map[string]string{"Alpha & Co": "greedy", "Beta/2": "random"} {
		tok := filepath.Join(work, "token-"+example)
		if err := os.WriteFile(tok, []byte(tokens[name]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		run("submit", "--server", site, "--token-file", tok, goBotZip(t, example))
	}
	ladderGames := func(site string) int {
		t.Helper()
		code, body := callAPI(t, site, "GET", "/api/v1/games?kind=ladder", admin, "")
		var list struct {
			Total int `json:"total"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
			t.Fatalf("the ladder's games: %d %s", code, body)
		}
		return list.Total
	}
	played := 0
	for deadline := time.Now().Add(5 * time.Minute); played < 2; time.Sleep(2 * time.Second) {
		if played = ladderGames(site); time.Now().After(deadline) {
			t.Fatalf("the ladder played %d games in 5 minutes", played)
		}
	}

	// The server's Pod deleted: another starts on the same volume, and
	// what the first acknowledged is there.
	kubectl(nil, "delete", "pod", "-l", "app.kubernetes.io/name=arena-server", "--wait=true")
	kubectl(nil, "rollout", "status", "deployment/arena-server", "--timeout=5m")
	site = portForward(t, kubectlCmd)
	if again := ladderGames(site); again < played {
		t.Errorf("after the server's Pod was deleted the ladder holds %d games, %d before", again, played)
	}
	for name, tok := range tokens {
		if code, body := callAPI(t, site, "GET", "/api/v1/submissions", tok, ""); code != http.StatusOK || !strings.Contains(body, `"`+string(api.Passed)+`"`) {
			t.Errorf("%s's submissions after the server's Pod was deleted: %d %s", name, code, body)
		}
	}
}

// setLimits gives the event's bots a quarter core and 256 MiB each.
func setLimits(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for setting, value := range map[string]string{"cpus": "0.25", "memory": `"256MiB"`} {
		re := regexp.MustCompile(`(?m)^` + setting + ` = .*$`)
		if !re.Match(data) {
			t.Fatalf("%s has no %s setting", path, setting)
		}
		data = re.ReplaceAll(data, []byte(setting+" = "+value))
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitForPod waits for the server's Pod to wait for its event (its
// first container, event, running: Init:0/1), and returns its name.
func waitForPod(t *testing.T, kubectl func(io.Reader, ...string) string) string {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		got := strings.Fields(kubectl(nil, "get", "pod", "-l", "app.kubernetes.io/name=arena-server", "-o",
			`jsonpath={range .items[*]}{.metadata.name} {.status.initContainerStatuses[0].state.running.startedAt}{"\n"}{end}`))
		if len(got) == 2 {
			return got[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Pod of the server waiting for its event in 3 minutes (%q)", got)
		}
	}
}

// portForward runs kubectl port-forward to the server's Service until the
// test ends, and returns the site's address.
func portForward(t *testing.T, kubectl func(args ...string) *exec.Cmd) string {
	t.Helper()
	cmd := kubectl("port-forward", "service/arena-server", ":80")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// "Forwarding from 127.0.0.1:PORT -> 8080"
	line, err := bufio.NewReader(out).ReadString('\n')
	m := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("kubectl port-forward said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, out)
	return fmt.Sprintf("http://127.0.0.1:%s", m[1])
}
