package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Pool hands a bot's Box back out for its next match instead of creating a new
// one, which is most of what a short match costs.
//
// Nothing of a match survives in a Box, whatever the match runner does: when a
// pooled Box is closed, the pool resets it (Box.Reset kills every process of the
// bot, a session still running included, empties the game directory, /tmp and
// /dev/shm, and verifies that) and only then keeps it for the next match. A Box
// whose reset fails, that ever failed, that is returned after the pool was
// closed, or whose Close context is done, is destroyed instead.
//
// A Box of a backend whose Capabilities are not Reusable serves one match:
// the pool destroys it when it is closed, and opens a new one for the next.
//
// A reused Box keeps the labels of the match that created it. Pool is safe for
// concurrent use; each Box it hands out is, like any Box, for one user at a
// time. Close removes every idle Box.
type Pool struct {
	Backend
	// Log receives a debug line for each box opened, reused, reset or destroyed,
	// and a warning for each reset that failed; nil means slog.Default().
	Log *slog.Logger

	mu     sync.Mutex
	idle   map[string][]Box
	closed bool
	stats  PoolStats
	// kept orders the idle boxes, the longest idle first: the one a box
	// that found no room has deleted (shed).
	kept []Box
}

// PoolStats counts what a Pool did since it was made.
type PoolStats struct {
	Opened        int // Boxes opened on the backend
	Reused        int // Opens served by an idle Box instead
	ResetFailures int // Boxes destroyed because their Reset failed
}

// NewPool wraps a backend.
func NewPool(b Backend) *Pool { return &Pool{Backend: b, idle: map[string][]Box{}} }

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

func (p *Pool) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

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

// boxID names a Box in logs: its container ID where it has one.
func boxID(b Box) string {
	if x, ok := b.(interface{ ID() string }); ok {
		id := x.ID()
		return id[:min(12, len(id))]
	}
	return b.GameDir()
}

// Open implements Backend: an idle Box of the same program and limits, or a new
// one.
func (p *Pool) Open(ctx context.Context, s Spec) (Box, error) {
	key := poolKey(s)
	p.mu.Lock()
	if list := p.idle[key]; len(list) > 0 {
		b := list[len(list)-1]
		p.idle[key] = list[:len(list)-1]
		p.forget(b)
		p.stats.Reused++
		p.mu.Unlock()
		p.log().Debug("sandbox pool: reusing an idle box", "bot", s.Program.Name, "box", boxID(b))
		return &pooled{Box: b, pool: p, key: key, name: s.Program.Name, reusable: true}, nil
	}
	p.mu.Unlock()
	b, err := p.Backend.Open(WithRoomMaker(ctx, p.shed), s)
	if err != nil {
		return nil, err
	}
	// Read once the box is open: a backend that had to ask its engine what
	// it runs (docker's runtime) knows by now.
	reusable := p.Backend.Capabilities().Reusable
	p.mu.Lock()
	p.stats.Opened++
	p.mu.Unlock()
	p.log().Debug("sandbox pool: opened a new box", "bot", s.Program.Name, "box", boxID(b))
	return &pooled{Box: b, pool: p, key: key, name: s.Program.Name, reusable: reusable}, nil
}

// shed destroys the Box idle the longest, for a box that found no room
// (MakeRoom), and reports whether there was one.
func (p *Pool) shed(ctx context.Context) bool {
	p.mu.Lock()
	if len(p.kept) == 0 {
		p.mu.Unlock()
		return false
	}
	b := p.kept[0]
	for key, list := range p.idle {
		if i := slices.Index(list, b); i >= 0 {
			p.idle[key] = slices.Delete(list, i, i+1)
		}
	}
	p.forget(b)
	p.mu.Unlock()
	p.log().Debug("sandbox pool: destroying the box idle the longest to make room", "box", boxID(b))
	if err := b.Close(context.WithoutCancel(ctx)); err != nil {
		p.log().Warn("sandbox pool: destroying an idle box failed", "box", boxID(b), "err", err)
	}
	return true
}

// forget takes b out of the order of idle boxes; p.mu is held.
func (p *Pool) forget(b Box) {
	if i := slices.Index(p.kept, b); i >= 0 {
		p.kept = slices.Delete(p.kept, i, i+1)
	}
}

// Close removes every idle Box. Boxes in use are destroyed when they are
// returned.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = map[string][]Box{}
	p.kept = nil
	p.mu.Unlock()
	var first error
	for _, list := range idle {
		for _, b := range list {
			p.log().Debug("sandbox pool: destroying an idle box", "box", boxID(b))
			if err := b.Close(ctx); err != nil {
				p.log().Warn("sandbox pool: destroying an idle box failed", "box", boxID(b), "err", err)
				if first == nil {
					first = err
				}
			}
		}
	}
	return first
}

// errSessionOver is returned by a session used after its pooled Box was reset
// or closed: the Box may already serve another match.
var errSessionOver = fmt.Errorf("the session ended when its box was reset or closed: %w", ErrBoxClosed)

type pooled struct {
	Box
	pool   *Pool
	key    string
	name   string
	broken bool
	done   bool
	// reusable: the backend's Capabilities, when the Box was opened, let it
	// serve another match once reset.
	reusable bool
	// gen counts resets, so that a session of an earlier game cannot reach the
	// Box once it was reset.
	gen int
}

func (b *pooled) Run(ctx context.Context, t Turn) (Report, error) {
	if b.done {
		return Report{}, ErrBoxClosed
	}
	r, err := b.Box.Run(ctx, t)
	if err != nil || r.OOMKilled {
		// An OOM kill may have taken the agent with it; start afresh.
		b.broken = true
	}
	return r, err
}

func (b *pooled) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	if b.done {
		return nil, ErrBoxClosed
	}
	data, err := b.Box.ReadFile(ctx, name, max)
	if err != nil && ctx.Err() != nil {
		b.broken = true
	}
	return data, err
}

// Reset implements Box.
func (b *pooled) Reset(ctx context.Context) error {
	if b.done {
		return ErrBoxClosed
	}
	b.gen++
	err := b.Box.Reset(ctx)
	if err != nil {
		b.broken = true
	}
	return err
}

// Close resets a healthy Box and returns it to the pool; a Box that failed, or
// whose reset fails, is destroyed.
func (b *pooled) Close(ctx context.Context) error {
	if b.done {
		return nil
	}
	b.done = true
	b.gen++
	p := b.pool
	log := p.log().With("bot", b.name, "box", boxID(b.Box))
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	var why string
	switch {
	case b.broken:
		why = "it failed"
	case !b.reusable:
		why = "the backend's boxes are not reusable"
	case closed:
		why = "the pool is closed"
	case ctx.Err() != nil:
		why = "the match was interrupted"
	}
	if why == "" {
		start := time.Now()
		err := b.Box.Reset(ctx)
		if err == nil {
			p.mu.Lock()
			keep := !p.closed
			if keep {
				p.idle[b.key] = append(p.idle[b.key], b.Box)
				p.kept = append(p.kept, b.Box)
			}
			p.mu.Unlock()
			if keep {
				log.Debug("sandbox pool: box reset and kept for the next match", "took", time.Since(start))
				return nil
			}
			why = "the pool is closed"
		} else {
			p.mu.Lock()
			p.stats.ResetFailures++
			p.mu.Unlock()
			log.Warn("sandbox pool: reset failed; destroying the box", "err", err)
			why = "its reset failed"
		}
	}
	log.Debug("sandbox pool: destroying the box", "because", why)
	if err := b.Box.Close(ctx); err != nil {
		log.Warn("sandbox pool: destroying the box failed", "err", err)
		return err
	}
	return nil
}

// StartSession implements SessionBox when the pooled Box does.
func (b *pooled) StartSession(ctx context.Context, args []string) (Session, error) {
	if b.done {
		return nil, ErrBoxClosed
	}
	sb, ok := b.Box.(SessionBox)
	if !ok {
		return nil, errors.New("sandbox: this backend cannot run session bots")
	}
	s, err := sb.StartSession(ctx, args)
	if err != nil {
		var sf *StartFailure
		if !errors.As(err, &sf) {
			b.broken = true
		}
		return nil, err
	}
	return &pooledSession{s: s, box: b, gen: b.gen}, nil
}

// pooledSession is a session that stops working once its Box was reset or
// returned to the pool, so it cannot reach the Box's next match.
type pooledSession struct {
	s   Session
	box *pooled
	gen int
}

func (s *pooledSession) over() bool { return s.box.gen != s.gen }

func (s *pooledSession) Send(ctx context.Context, line string) error {
	if s.over() {
		return errSessionOver
	}
	err := s.s.Send(ctx, line)
	if err != nil {
		s.box.broken = true
	}
	return err
}

func (s *pooledSession) Ask(ctx context.Context, line string, timeout time.Duration) (Exchange, error) {
	if s.over() {
		return Exchange{}, errSessionOver
	}
	ex, err := s.s.Ask(ctx, line, timeout)
	if err != nil {
		s.box.broken = true
	}
	return ex, err
}

func (s *pooledSession) Stop(ctx context.Context) (Report, error) {
	if s.over() {
		return Report{}, errSessionOver
	}
	rep, err := s.s.Stop(ctx)
	if err != nil || rep.OOMKilled {
		s.box.broken = true
	}
	return rep, err
}
