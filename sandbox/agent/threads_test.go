package agent

import (
	"os"
	"testing"
	"time"
)

func threads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skip("no /proc/self/task here")
	}
	return len(tasks)
}

// The threads reserved stay, idle, for the agent to use when a bot has
// filled the pids limit: none goes away once the reservation is over.
func TestReservedThreadsStay(t *testing.T) {
	reserveThreads(spareThreads)
	after := threads(t)
	if after < spareThreads+1 {
		t.Fatalf("%d threads after reserving %d", after, spareThreads)
	}
	time.Sleep(300 * time.Millisecond)
	if later := threads(t); later < after {
		t.Errorf("%d threads reserved, %d a moment later: the reserve went away", after, later)
	}
}
