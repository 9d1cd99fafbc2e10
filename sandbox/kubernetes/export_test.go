package kubernetes

import (
	"github.com/arenabots/arena/sandbox"
	"github.com/arenabots/arena/sandbox/probe"
)

// WarmReady is how many warm Pods of shape lim wait to be handed out.
func (b *Backend) WarmReady(lim sandbox.Limits) int {
	if b.warm == nil {
		return 0
	}
	b.warm.mu.Lock()
	defer b.warm.mu.Unlock()
	return len(b.warm.ready[lim])
}

// WaitWarm waits until a warm Pod of shape lim is ready.
var WaitWarm = (*Backend).waitWarm

// NetProbe is the doctor's network probe bot: given "host port" lines in
// its game directory's targets, it prints "host:port open|refused|…".
var NetProbe = probe.Script("doctor-net", netScript)
