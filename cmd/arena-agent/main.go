// Command arena-agent is the supervisor that runs as PID 1 in every bot container.
// It is built static and baked into the runtime image by `arena image build`; it
// is not meant to be run by hand. See package sandbox/agent.
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
	if err := agent.Serve(os.Stdin, os.Stdout, agent.DefaultConfig()); err != nil {
		fmt.Fprintln(os.Stderr, "arena-agent:", err)
		os.Exit(1)
	}
}
