package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Engine says how to reach a container engine.
type Engine struct {
	// Host is the engine address (unix:///var/run/docker.sock, tcp://host:2376).
	// Empty means DOCKER_HOST, then the platform default.
	Host string
	// TLS settings for a remote engine. TLS is used when any file is set or
	// Verify is true.
	CACert, Cert, Key string
	Verify            bool
}

// Config names a backend and says how to open it: what a command's flags or
// an event's settings say about where bots run.
type Config struct {
	// Kind is the backend: "docker" (the default), "kubernetes" or "local".
	Kind string
	// Image is a container backend's runtime image (default: the backend's).
	Image string
	// Engine is how a container backend reaches its engine.
	Engine Engine
	// Runtime is the engine's runtime a container backend runs boxes under
	// (runc; runsc for gVisor). Empty: the engine's default. Other backends
	// refuse one.
	Runtime string
	// Sweep removes, when the backend opens, every 15 s while it is open and
	// again when it closes, what runs of arena that were killed left on the
	// engine (their last create request may complete after the first sweep).
	Sweep bool
	// Cluster is how the kubernetes backend reaches its cluster and places
	// its Pods.
	Cluster Cluster
	// Notify is told, in a sentence, what the user of a backend should know:
	// that it is no security boundary, or what a sweep removed. Nil: nothing
	// is said.
	Notify func(msg string)
}

// Cluster is where a cluster backend runs boxes. Runtime is its
// RuntimeClass.
type Cluster struct {
	// Kubeconfig is the file of the cluster's address and credentials; ""
	// is $KUBECONFIG, else the in-cluster configuration, else
	// ~/.kube/config.
	Kubeconfig string
	// Namespace is where the Pods go ("arena" when empty).
	Namespace string
	// NodeSelector places them on these nodes only.
	NodeSelector map[string]string
	// PullSecret names the namespace's Secret for a private registry.
	PullSecret string
	// PullNever: the image is on the nodes already (imported, as in tests),
	// never pulled; PullAlways: pulled for every Pod. Neither: pulled where
	// a node lacks it.
	PullNever, PullAlways bool
	// Warm is how many Pods of each shape are kept running ahead of
	// demand, each handed out once (0: none).
	Warm int
}

// DefaultKind is the backend a Config without a Kind opens.
const DefaultKind = "docker"

// Opener opens one kind of backend; close releases what it holds.
type Opener func(ctx context.Context, cfg Config) (b Backend, close func() error, err error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// Register makes a kind of backend available to Open. Backends register
// themselves when their package is imported.
func Register(kind string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[kind]; dup {
		panic("sandbox: backend " + kind + " registered twice")
	}
	openers[kind] = open
}

// Kinds lists the registered backends.
func Kinds() []string {
	openersMu.Lock()
	defer openersMu.Unlock()
	var out []string
	for k := range openers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Open opens the backend cfg names, checked and ready to open boxes. The
// returned function releases it; call it once the backend's last box is
// closed.
func Open(ctx context.Context, cfg Config) (Backend, func() error, error) {
	if cfg.Kind == "" {
		cfg.Kind = DefaultKind
	}
	if cfg.Notify == nil {
		cfg.Notify = func(string) {}
	}
	openersMu.Lock()
	open := openers[cfg.Kind]
	openersMu.Unlock()
	if open == nil {
		return nil, nil, &UnknownKindError{Kind: cfg.Kind}
	}
	return open(ctx, cfg)
}

// UnknownKindError is a Config naming no registered backend.
type UnknownKindError struct{ Kind string }

func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("no sandbox backend %q (want %s)", e.Kind, strings.Join(Kinds(), " or "))
}
