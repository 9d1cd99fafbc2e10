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
//
// Warm Pods (warmPool) live in the room games leave: one is started only
// while no game waits and the room learnt has a place beside the games'
// boxes; when a warm Pod, or a game's, finds no room, the idle warm Pods
// are deleted and none is started or kept for probeEvery, so that games
// have the room (a game that found no room beside warm Pods alone waits
// for theirs to be freed, as a game alone does).

// probeEvery is how often a game is admitted past the room learnt, to
// see whether there is more now.
const probeEvery = 10 * time.Second

// room counts the boxes admitted, and the most that fit as last learnt.
type room struct {
	mu   sync.Mutex
	held int // boxes admitted and not released
	// warm is the warm pool's Pods, starting or waiting to be handed out.
	warm int
	// waiting is how many games wait to be admitted.
	waiting int
	// warmPaused is until when the warm pool starts and keeps no Pod: a
	// Pod found no room.
	warmPaused time.Time
	// shed deletes the warm pool's idle Pods; nil without a pool.
	shed func()
	// tight is set once a Pod found no room: from then on a box made anew
	// first has one of the caller's idle boxes deleted (sandbox.MakeRoom),
	// so that it does not find no room beside idle Pods.
	tight bool
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
		r.waiting++
		r.mu.Unlock()
		t := time.NewTimer(probeEvery)
		var err error
		select {
		case <-ctx.Done():
			err = context.Cause(ctx)
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// warmPlace holds a place for one warm Pod if the room has one beside the
// games' boxes and no game waits for room.
func (r *room) warmPlace() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting > 0 || r.now().Before(r.warmPaused) || (r.most != 0 && r.held+r.warm+1 > r.most) {
		return false
	}
	r.warm++
	return true
}

// warmGone gives back a warm Pod's place: deleted or failed. Room is
// freed.
func (r *room) warmGone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warm--
	r.wakeAll()
}

// warmTaken says that a warm Pod was handed out to a game, whose
// admission holds its place now: no room is freed.
func (r *room) warmTaken() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warm--
}

// warmNoRoom says that a warm Pod found no room: the room is what games
// and the other warm Pods hold, and the pool pauses.
func (r *room) warmNoRoom() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warm--
	if rest := r.held + r.warm; rest > 0 {
		r.most, r.probed = rest, r.now()
	}
	r.warmPaused = r.now().Add(probeEvery)
}

type warmKey struct{}

// giveWay says whether a Pod that found no room gives up at once
// (sandbox.ErrNoRoom) rather than wait: a warm Pod always (it was to use
// room no game needed); a game's not when an idle box of the caller's was
// deleted for it (sandbox.MakeRoom), else when other games or warm Pods
// hold room (admission.full).
func giveWay(ctx context.Context) bool {
	if ctx.Value(warmKey{}) != nil {
		return true
	}
	rooms := roomOf(ctx)
	if rooms != nil {
		rooms.mu.Lock()
		rooms.tight = true
		rooms.mu.Unlock()
	}
	if sandbox.MakeRoom(ctx) {
		// An idle box of the caller's (a Pool's Pod, kept for its bot's
		// next game) is deleted: its room is the game's to wait for.
		return false
	}
	a := admitted(ctx)
	return a != nil && a.full()
}

// roomOf is the room of ctx's admission, or nil.
func roomOf(ctx context.Context) *room {
	if a := admitted(ctx); a != nil {
		return a.r
	}
	return nil
}

// makeRoomFirst has one of the caller's idle boxes deleted before a Pod is
// made, once Pods were found to have no room (tight).
func makeRoomFirst(ctx context.Context) {
	r := roomOf(ctx)
	if r == nil {
		return
	}
	r.mu.Lock()
	tight := r.tight
	r.mu.Unlock()
	if tight {
		sandbox.MakeRoom(ctx)
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
// other games and the warm pool hold. It reports whether other games hold
// any: if not, the game does not fit even alone, and waiting for them will
// not change that. Warm Pods give way: the idle ones are deleted, and the
// pool pauses.
func (a *admission) full() (others bool) {
	r := a.r
	r.mu.Lock()
	games := r.held - a.n
	if games > 0 {
		// What was just learnt is as good as a probe.
		r.most, r.probed = games+r.warm, r.now()
	}
	shed := r.warm > 0 && r.shed != nil
	if shed {
		r.warmPaused = r.now().Add(probeEvery)
	}
	r.mu.Unlock()
	if shed {
		r.shed()
	}
	return games > 0
}

// warmKept says whether a warm Pod that has started is kept: not while
// the pool is paused.
func (r *room) warmKept() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.now().Before(r.warmPaused)
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
