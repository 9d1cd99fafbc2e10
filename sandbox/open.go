package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Config names a backend and says how to open it: what a command's flags or
// an event's settings say about where bots run.
type Config struct {
	// Kind is the backend: "docker" (the default), "kubernetes" or "local".
	Kind string
	// Image is a container backend's runtime image (default: the backend's).
	Image string
	// Runtime is the engine's runtime a container backend runs boxes under
	// (runc; runsc for gVisor). Empty: the engine's default. Other backends
	// refuse one.
	Runtime string
	// Sweep removes, when the backend opens, every 15 s while it is open and
	// again when it closes, what runs of arena that were killed left on the
	// engine (their last create request may complete after the first sweep).
	Sweep bool
	// Backend is the kind's own settings, which only that kind reads: how
	// the docker backend reaches its engine (docker.Conn), how the
	// kubernetes backend reaches its cluster and places its Pods
	// (kubernetes.Cluster). Nil: the kind's defaults. A kind refuses
	// another kind's settings.
	Backend any
	// Notify is told, in a sentence, what the user of a backend should know:
	// that it is no security boundary, or what a sweep removed. Nil: nothing
	// is said.
	Notify func(msg string)
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

// SettingsOf reads cfg's Backend as the settings of kind, T: the zero T
// when there are none, an error when they are another kind's.
func SettingsOf[T any](kind string, cfg Config) (T, error) {
	var zero T
	switch v := cfg.Backend.(type) {
	case nil:
		return zero, nil
	case T:
		return v, nil
	default:
		return zero, fmt.Errorf("the %s backend cannot take settings of type %T (another kind's?)", kind, cfg.Backend)
	}
}
