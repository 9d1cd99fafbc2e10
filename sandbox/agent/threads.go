package agent

import (
	"runtime"
	"sync"
)

// spareThreads is how many OS threads the agent makes idle at its start.
// The bot shares the container's pids limit with the agent: a bot that
// fills it (a fork bomb) leaves the agent no thread to create, and a Go
// program that needs a new thread then (a blocking system call handed
// off, a thread locked for a credential change) dies. The runtime takes
// an idle thread before it creates one, and keeps idle threads for good,
// so a few made at the start carry the agent through a full cgroup.
const spareThreads = 8

// reserveThreads makes n OS threads and leaves them idle: n goroutines
// each locked to a thread of its own, held until all are, then let go.
func reserveThreads(n int) {
	var all sync.WaitGroup
	release := make(chan struct{})
	done := make(chan struct{}, n)
	for range n {
		all.Add(1)
		go func() {
			runtime.LockOSThread()
			all.Done()
			<-release
			runtime.UnlockOSThread() // the thread goes back idle, not away
			done <- struct{}{}
		}()
	}
	all.Wait()
	close(release)
	for range n {
		<-done
	}
}
