//go:build !team

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arenabots/arena/internal/clustertest"
	k8s "github.com/arenabots/arena/sandbox/kubernetes"
)

// arena kubeconfig, run as the cluster's admin, writes a kubeconfig of
// arena's ServiceAccount that holds its rights alone: it lists the
// namespace's Pods and may not read its Secrets. A file that exists is
// kept, and a ServiceAccount that is not there or a token shorter than the
// API server issues is refused, saying why.
func TestTheKubeconfigCommandGivesArenasRightsAlone(t *testing.T) {
	t.Parallel()
	admin := clustertest.Admin(t)
	global := []string{"--kube-config", admin, "--kube-namespace", clustertest.Namespace}
	out := filepath.Join(t.TempDir(), "arena.kubeconfig")
	code, _, stderr := runArena(append(global, "kubeconfig", "--out", out, "--duration", "1h")...)
	if code != exitOK || !strings.Contains(stderr, "ServiceAccount arena of namespace "+clustertest.Namespace+", until ") {
		t.Fatalf("arena kubeconfig: exit %d, %s", code, stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the kubeconfig's mode: %v %v", fi, err)
	}
	rc, err := k8s.RESTConfig(out)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods(clustertest.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("arena's kubeconfig cannot list its namespace's Pods: %v", err)
	}
	if _, err := cs.CoreV1().Secrets(clustertest.Namespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("arena's kubeconfig reads Secrets: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", out}, "file exists"},
		{[]string{"--out", out + ".2", "--service-account", "nobody"}, "a token of ServiceAccount nobody in namespace " + clustertest.Namespace},
		{[]string{"--out", out + ".3", "--duration", "5m"}, "a token lasts at least 10m0s, not 5m0s"},
	} {
		code, _, stderr := runArena(append(append(global, "kubeconfig"), c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("arena kubeconfig %s: exit %d, %q; want %d and %q", strings.Join(c.args, " "), code, stderr, exitUsage, c.want)
		}
	}
	if _, err := os.Stat(out + ".2"); err == nil {
		t.Error("a refused kubeconfig was written")
	}
}

// A cluster's flag given by its old name says its new one.
func TestARenamedClusterFlagSaysItsNewName(t *testing.T) {
	t.Parallel()
	for old, now := range map[string]string{"--namespace": "--kube-namespace", "--warm-pods": "--kube-warm-pods", "--image-pull-policy": "--kube-pull-policy"} {
		code, _, stderr := runArena(old, "x", "match")
		if code != exitUsage || !strings.Contains(stderr, "it is "+now+" now") {
			t.Errorf("arena %s x match: exit %d, %q; want a usage error naming %s", old, code, stderr, now)
		}
	}
}
