// Command arena-agent is the supervisor that runs as PID 1 in every bot container.
// It is built static and baked into the runtime image by `arena image build`; it
// is not meant to be run by hand. See package sandbox/agent.
//
// GOMAXPROCS is read once, at the start: a change later would want
// threads, which a bot that fills the container's pids limit leaves none
// of (agent.Serve keeps a few idle for the system calls it makes).
//
//go:debug updatemaxprocs=0
package main

import (
	"fmt"
	"os"

	"github.com/arenabots/arena/sandbox/agent"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("arena-agent protocol", agent.Version)
		return
	}
	cfg := agent.DefaultConfig()
	// A Pod's attach stream begins after the agent started: it waits for it.
	cfg.HelloWhenAsked = len(os.Args) > 1 && os.Args[1] == "--hello-when-asked"
	if err := agent.Serve(os.Stdin, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "arena-agent:", err)
		os.Exit(1)
	}
}
