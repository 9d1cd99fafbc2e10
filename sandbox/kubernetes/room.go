package kubernetes

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/arenabots/arena/sandbox"
)

// The room a cluster has for boxes is learnt, not read: arena's rights
// are the namespace's Pods only, and a node's free room changes with
// every Pod of anyone's. A game is admitted while the boxes admitted
// before it and its own are no more than the most that were seen to fit;
// a box that then finds no room (a ResourceQuota refused its Pod, or the
// scheduler found no node for it) says that the room is what the others
// hold, and the game waits for one of them to end. Before any box found no
// room, every game is admitted; now and then one is let through past the
// room learnt, to find out whether the cluster grew.

// probeEvery is how often a game is admitted past the room learnt, to
// see whether there is more now.
const probeEvery = 10 * time.Second

// room counts the boxes admitted, and the most that fit as last learnt.
type room struct {
	mu   sync.Mutex
	held int // boxes admitted and not released
	// most is how many boxes were seen to fit at once; 0 until a box
	// found no room.
	most int
	// probed is when a game was last admitted past most.
	probed time.Time
	// wake is closed, and replaced, whenever room may have been freed.
	wake chan struct{}
	now  func() time.Time
}

func newRoom() *room { return &room{wake: make(chan struct{}), now: time.Now} }

// admission is one game's hold on the room.
type admission struct {
	r    *room
	n    int
	once sync.Once
}

type admissionKey struct{}

// admitted is the admission ctx carries (Backend.Admit), or nil.
func admitted(ctx context.Context) *admission {
	a, _ := ctx.Value(admissionKey{}).(*admission)
	return a
}

// admit waits until n more boxes fit, as far as the room learnt says, and
// holds them.
func (r *room) admit(ctx context.Context, n int) (*admission, error) {
	for {
		r.mu.Lock()
		fits := r.most == 0 || r.held+n <= r.most || r.held == 0
		probe := !fits && r.now().Sub(r.probed) >= probeEvery
		if fits || probe {
			if probe {
				r.probed = r.now()
			}
			r.held += n
			r.mu.Unlock()
			return &admission{r: r, n: n}, nil
		}
		wake := r.wake
		r.mu.Unlock()
		t := time.NewTimer(probeEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// release gives the admission's room back, once.
func (a *admission) release() {
	a.once.Do(func() {
		r := a.r
		r.mu.Lock()
		r.held -= a.n
		r.wakeAll()
		r.mu.Unlock()
	})
}

// wakeAll wakes every game waiting for room; r.mu is held.
func (r *room) wakeAll() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// opened says that a's boxes all fit: the room is at least what is held.
func (a *admission) opened() {
	r := a.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.most != 0 && r.held > r.most {
		r.most = r.held
	}
}

// full says that a box of a found no room: the most that fit is what the
// other games hold. It reports whether other games hold any: if not, the
// game does not fit even alone, and waiting will not change that.
func (a *admission) full() (others bool) {
	r := a.r
	r.mu.Lock()
	defer r.mu.Unlock()
	rest := r.held - a.n
	if rest <= 0 {
		return false
	}
	// What was just learnt is as good as a probe.
	r.most, r.probed = rest, r.now()
	return true
}

// rooms is the backend's room, made on first use.
func (b *Backend) rooms() *room {
	b.roomOnce.Do(func() { b.room = newRoom() })
	return b.room
}

// Most is how many boxes were last seen to fit on the cluster at once,
// 0 before any found no room.
func (b *Backend) Most() int {
	r := b.rooms()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.most
}

// Admit implements sandbox.Backend: it waits until the game's n boxes fit
// in the room learnt so far (see room), and holds it for them.
func (b *Backend) Admit(ctx context.Context, n int, _ sandbox.Limits) (context.Context, func(), error) {
	a, err := b.rooms().admit(ctx, n)
	if err != nil {
		return ctx, func() {}, err
	}
	return context.WithValue(ctx, admissionKey{}, a), a.release, nil
}

// quotaExceeded says whether the API server refused a Pod for the
// namespace's ResourceQuota.
func quotaExceeded(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota")
}

// unschedulable is the scheduler's word that no node has room for the
// Pod (its PodScheduled condition), or "".
func unschedulable(p *corev1.Pod) string {
	if p == nil {
		return ""
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}
