package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arenabots/arena/sandbox"
)

// warmProgramBytes is the largest program a warm Pod takes: its program's
// directory is sized for it before the program is known. A larger one
// gets a Pod of its own.
const warmProgramBytes = 64 * sandbox.MiB

// warmPool keeps Pods running, attached and greeted for each shape of box
// asked for, so that an Open of that shape only sends the program. A warm
// Pod is handed out to one box, whose Pod it then is: nothing of a game was
// ever in it, and it is as clean as a new one because it is one. A
// Pod that waits longer than idle is deleted, and none is made again for
// its shape until a box of that shape is asked for. Warm Pods live in the
// room games leave (see room).
type warmPool struct {
	b    *Backend
	n    int
	idle time.Duration

	ctx    context.Context // the fills'; cancelled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	ready   map[sandbox.Limits][]warmBox
	filling map[sandbox.Limits]int
	closed  bool
}

type warmBox struct {
	bx    *box
	since time.Time
}

// warmPool is the backend's warm pool, made at the first Open; nil when
// Warm is 0.
func (b *Backend) warmPool() *warmPool {
	b.warmOnce.Do(func() {
		if b.Warm <= 0 {
			return
		}
		idle := b.WarmIdle
		if idle <= 0 {
			idle = time.Minute
		}
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), warmKey{}, true))
		w := &warmPool{b: b, n: b.Warm, idle: idle, ctx: ctx, cancel: cancel,
			ready: map[sandbox.Limits][]warmBox{}, filling: map[sandbox.Limits]int{}}
		r := b.rooms()
		r.mu.Lock()
		r.shed = w.shed
		r.mu.Unlock()
		w.wg.Add(1)
		go w.expire()
		b.warm = w
	})
	return b.warm
}

// take hands out a warm Pod of shape lim, or nil.
func (w *warmPool) take(lim sandbox.Limits) *box {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.ready[lim]
	if len(q) == 0 {
		return nil
	}
	bx := q[0].bx
	w.ready[lim] = q[1:]
	w.b.rooms().warmTaken()
	return bx
}

// fill starts as many Pods of shape lim as the pool lacks.
func (w *warmPool) fill(lim sandbox.Limits) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	r := w.b.rooms()
	for range w.n - len(w.ready[lim]) - w.filling[lim] {
		if !r.warmPlace() {
			return
		}
		w.filling[lim]++
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			bx, err := w.b.start(w.ctx, podName("warm"), lim, warmProgramBytes, nil)
			w.mu.Lock()
			w.filling[lim]--
			kept := err == nil && !w.closed && r.warmKept()
			if kept {
				w.ready[lim] = append(w.ready[lim], warmBox{bx: bx, since: time.Now()})
			}
			w.mu.Unlock()
			switch {
			case errors.Is(err, sandbox.ErrNoRoom):
				// The room is full: games have it.
				r.warmNoRoom()
				w.b.log().Debug("kubernetes: no room for a warm pod", "err", err)
			case err != nil:
				// The next Open of the shape tries again.
				r.warmGone()
				if w.ctx.Err() == nil {
					w.b.log().Warn("kubernetes: a warm pod did not start", "err", err)
				}
			case !kept:
				w.drop(context.Background(), bx)
			}
		}()
	}
}

// drop deletes a warm Pod no game will have, and gives its room back.
func (w *warmPool) drop(ctx context.Context, bx *box) {
	if err := bx.Close(ctx); err != nil {
		w.b.log().Warn("kubernetes: a warm pod could not be deleted; the next sweep will", "err", err)
	}
	w.b.rooms().warmGone()
}

// shed deletes every warm Pod waiting to be handed out: a game needs
// their room.
func (w *warmPool) shed() {
	w.mu.Lock()
	var all []*box
	for lim, q := range w.ready {
		for _, wb := range q {
			all = append(all, wb.bx)
		}
		w.ready[lim] = nil
	}
	w.mu.Unlock()
	for _, bx := range all {
		bx.p.log.Debug("kubernetes: a warm pod makes room for a game; deleting it")
		w.drop(w.ctx, bx)
	}
}

// expire deletes the Pods that waited longer than idle.
func (w *warmPool) expire() {
	defer w.wg.Done()
	t := time.NewTicker(w.idle / 4)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		var old []*box
		w.mu.Lock()
		for lim, q := range w.ready {
			keep := q[:0]
			for _, wb := range q {
				if time.Since(wb.since) > w.idle {
					old = append(old, wb.bx)
					continue
				}
				keep = append(keep, wb)
			}
			w.ready[lim] = keep
		}
		w.mu.Unlock()
		for _, bx := range old {
			bx.p.log.Debug("kubernetes: a warm pod waited too long; deleting it")
			w.drop(w.ctx, bx)
		}
	}
}

// close deletes every warm Pod, and those still starting once they have.
func (w *warmPool) close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	var all []*box
	for _, q := range w.ready {
		for _, wb := range q {
			all = append(all, wb.bx)
		}
	}
	w.ready = map[sandbox.Limits][]warmBox{}
	w.mu.Unlock()
	w.cancel()
	var first error
	for _, bx := range all {
		if err := bx.Close(ctx); err != nil && first == nil {
			first = err
		}
	}
	w.wg.Wait()
	return first
}

// waitWarm waits until a warm Pod of shape lim is ready, or the start
// timeout has passed.
func (b *Backend) waitWarm(ctx context.Context, lim sandbox.Limits) error {
	w := b.warmPool()
	if w == nil {
		return errors.New("no warm pool")
	}
	ctx, cancel := context.WithTimeout(ctx, b.StartTimeout)
	defer cancel()
	for {
		w.mu.Lock()
		n := len(w.ready[lim])
		w.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no warm pod was ready in %v", b.StartTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// handOut makes a warm Pod spec's box: the Pod is annotated with the box's
// labels (as a Pod opened for it is), and its agent is sent the program.
func (b *Backend) handOut(ctx context.Context, bx *box, spec sandbox.Spec, program []byte) error {
	if len(spec.Labels) > 0 {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": spec.Labels}})
		if err != nil {
			return err
		}
		if _, err := b.cs.CoreV1().Pods(b.place.Namespace).Patch(ctx, bx.p.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return sandbox.Faultf("annotate pod", err)
		}
	}
	bx.Exec = spec.Program.Entry
	if err := bx.Install(ctx, program, rlimits(spec.Limits), botID()); err != nil {
		return sandbox.Faultf("install the program", err)
	}
	return nil
}

// Close deletes the backend's warm Pods. The backend may not be used
// after.
func (b *Backend) Close(ctx context.Context) error {
	b.warmOnce.Do(func() {}) // no pool is made after this
	if b.warm == nil {
		return nil
	}
	return b.warm.close(ctx)
}
