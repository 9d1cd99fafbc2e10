package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
)

// Pool hands a bot's Box back out for its next match instead of creating a new
// one, which is most of what a short match costs. Nothing of a match survives in
// a Box: every process dies after each turn, the scratch directories are wiped
// after each turn, and the match runner empties the game directory on each
// side's first turn (Turn.Clean). A Box that ever failed is never reused.
//
// A reused Box keeps the labels of the match that created it. Pool is safe for
// concurrent use. Close removes every idle Box.
type Pool struct {
	Backend
	mu     sync.Mutex
	idle   map[string][]Box
	closed bool
}

// NewPool wraps a backend.
func NewPool(b Backend) *Pool { return &Pool{Backend: b, idle: map[string][]Box{}} }

func poolKey(s Spec) string {
	h := sha256.New()
	json.NewEncoder(h).Encode(struct {
		Name, Entry string
		Limits      Limits
	}{s.Program.Name, s.Program.Entry, s.Limits})
	for _, f := range s.Program.Files {
		sum := sha256.Sum256(f.Data)
		h.Write([]byte(f.Name))
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Open implements Backend: an idle Box of the same program and limits, or a new
// one.
func (p *Pool) Open(ctx context.Context, s Spec) (Box, error) {
	key := poolKey(s)
	p.mu.Lock()
	if list := p.idle[key]; len(list) > 0 {
		b := list[len(list)-1]
		p.idle[key] = list[:len(list)-1]
		p.mu.Unlock()
		return &pooled{Box: b, pool: p, key: key}, nil
	}
	p.mu.Unlock()
	b, err := p.Backend.Open(ctx, s)
	if err != nil {
		return nil, err
	}
	return &pooled{Box: b, pool: p, key: key}, nil
}

// Close removes every idle Box.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = map[string][]Box{}
	p.mu.Unlock()
	var first error
	for _, list := range idle {
		for _, b := range list {
			if err := b.Close(ctx); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

type pooled struct {
	Box
	pool   *Pool
	key    string
	broken bool
	done   bool
}

func (b *pooled) Run(ctx context.Context, t Turn) (Report, error) {
	r, err := b.Box.Run(ctx, t)
	if err != nil || r.OOMKilled {
		// An OOM kill may have taken the agent with it; start afresh.
		b.broken = true
	}
	return r, err
}

func (b *pooled) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	data, err := b.Box.ReadFile(ctx, name, max)
	if err != nil && ctx.Err() != nil {
		b.broken = true
	}
	return data, err
}

// Close returns a healthy Box to the pool; a failed one is removed.
func (b *pooled) Close(ctx context.Context) error {
	if b.done {
		return nil
	}
	b.done = true
	p := b.pool
	p.mu.Lock()
	keep := !b.broken && !p.closed && ctx.Err() == nil
	if keep {
		p.idle[b.key] = append(p.idle[b.key], b.Box)
	}
	p.mu.Unlock()
	if keep {
		return nil
	}
	return b.Box.Close(ctx)
}

// StartSession implements SessionBox when the pooled Box does.
func (b *pooled) StartSession(ctx context.Context, args []string) (Session, error) {
	sb, ok := b.Box.(SessionBox)
	if !ok {
		return nil, errors.New("sandbox: this backend cannot run session bots")
	}
	s, err := sb.StartSession(ctx, args)
	if err != nil {
		b.broken = true
	}
	return s, err
}
