package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/arenabots/arena/internal/clustertest"
	"github.com/arenabots/arena/internal/dockertest"
)

// BenchmarkTournamentOnTheCluster plays one tournament of 30 games (six
// bots, a round robin both ways, two games at once) on Docker and on the
// cluster, with no warm Pods and with 2 (the default) and 4 (twice the
// concurrency) of them, and reports each one's games a minute and its time
// against Docker's (x_docker): at half a core a bot (the two games' four
// Pods fill the test node's two cores: no warm Pod has room) and at a
// quarter (room for four warm Pods beside the games).
func BenchmarkTournamentOnTheCluster(b *testing.B) {
	kubeconfig, image := clustertest.Kubeconfig(b)
	dockertest.Engine(b)
	arena, bots := arenaWithBots(b, "legal", "shuffle", "slow-10", "slow-20", "slow-30", "slow-40")
	cluster := []string{"--kube-config", kubeconfig, "--kube-namespace", clustertest.Namespace, "--kube-pull-policy", "Never"}
	play := func(b *testing.B, global []string, where, cpus string) time.Duration {
		args := append(append([]string{}, global...), "tournament", "--sandbox", where, "--cpus", cpus, "--concurrency", "2",
			"--max-plies", "16", "--image", image, "--seed", "5", "--signing-key", "none", "--quiet", "--out", filepath.Join(b.TempDir(), "t"), bots)
		start := time.Now()
		if out, err := exec.Command(arena, args...).CombinedOutput(); err != nil {
			b.Fatalf("arena %v: %v\n%s", args, err, out)
		}
		return time.Since(start)
	}
	for _, cpus := range []string{"0.5", "0.25"} {
		b.Run("cpus-"+cpus, func(b *testing.B) { tournamentTimes(b, cluster, cpus, play) })
	}
}

func tournamentTimes(b *testing.B, cluster []string, cpus string, play func(*testing.B, []string, string, string) time.Duration) {
	var docker time.Duration
	for _, r := range []struct {
		name   string
		global []string
		where  string
	}{
		{"docker", nil, "docker"},
		{"cold", append(cluster, "--kube-warm-pods", "0"), "kubernetes"},
		{"warm-2", cluster, "kubernetes"},
		{"warm-4", append(cluster, "--kube-warm-pods", "4"), "kubernetes"},
	} {
		b.Run(r.name, func(b *testing.B) {
			var took time.Duration
			for b.Loop() {
				took += play(b, r.global, r.where, cpus)
			}
			per := took / time.Duration(b.N)
			b.ReportMetric(30/per.Minutes(), "games/min")
			if r.where == "docker" {
				docker = per
			} else if docker > 0 {
				b.ReportMetric(float64(per)/float64(docker), "x_docker")
			}
			b.Log(r.name + ": " + strconv.FormatFloat(per.Seconds(), 'f', 1, 64) + " s")
		})
	}
}
