// Package live follows the games being played, turn by turn, for the pages
// that show them as they happen: each game's steps as the viewer draws them
// (harness/view), kept in the two copies a watcher may be given, whole and
// without the sides' own output.
//
// It must never slow or block the game it follows (a turn's record is
// appended and its watchers woken; a watcher reads at its own pace), and
// never hand a side's own output (stderr, what it wrote out of turn) to
// anyone but that side and the organizer: which copy a watcher gets is
// chosen here, from who it is, not by the page.
package live

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/rules"
)

// Audience is what a watcher may see of the sides' own output.
type Audience int

const (
	// Everyone sees neither side's own output.
	Everyone Audience = iota
	// White sees White's own output, not Black's.
	White
	// Black sees Black's own output, not White's.
	Black
	// Organizer sees everything.
	Organizer
)

// Player is a side of a game: its team (0: a built-in bot) and the name it
// is shown under.
type Player struct {
	Team int64  `json:"-"`
	Name string `json:"name"`
}

// Meta is what a game is, known when it starts.
type Meta struct {
	// Kind is the event's kind of game (final, ladder, scrimmage).
	Kind         string `json:"kind"`
	White, Black Player
	// Round is the final's round the game belongs to (0: none), and
	// Playoff its playoff round (0: a game of the format's own).
	Round   int `json:"round,omitempty"`
	Playoff int `json:"playoff,omitempty"`
	// Private: only the sides' teams and the organizer may watch (a
	// scrimmage is a team's own test).
	Private bool `json:"-"`
}

// Involves says whether team plays a side of the game.
func (m Meta) Involves(team int64) bool {
	return team != 0 && (m.White.Team == team || m.Black.Team == team)
}

// Keep is how long an ended game stays, so that a watcher that reconnects
// or arrives late still reads its end.
const Keep = 2 * time.Minute

// Hub holds the games being played.
type Hub struct {
	mu    sync.Mutex
	games map[string]*Game
	// now is the clock (tests set it).
	now func() time.Time
	// changed is closed and replaced when a game starts or ends.
	changed chan struct{}
	// following counts the streams following games now.
	following atomic.Int64
	closed    chan struct{}
	once      sync.Once
}

// NewHub is an empty hub.
func NewHub() *Hub { return NewHubAt(time.Now) }

// NewHubAt is an empty hub on the clock now.
func NewHubAt(now func() time.Time) *Hub {
	return &Hub{games: map[string]*Game{}, now: now, changed: make(chan struct{}), closed: make(chan struct{})}
}

// Start adds a game about to be played; it follows the match as its
// observer.
func (h *Hub) Start(m Meta) *Game {
	var b [9]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("live: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	g := &Game{ID: hex.EncodeToString(b[:]), Meta: m, At: h.now(), hub: h, wake: make(chan struct{}), kick: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	h.games[g.ID] = g
	h.signal()
	return g
}

// Game is the game of that id, playing or ended lately.
func (h *Hub) Game(id string) (*Game, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	g, ok := h.games[id]
	return g, ok
}

// Playing are the games being played now, oldest first, with a channel
// closed at the next start or end of a game.
func (h *Hub) Playing() ([]*Game, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	var out []*Game
	for _, g := range h.games {
		if !g.Ended() {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *Game) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out, h.changed
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Follow counts a stream following games from now until done is called.
func (h *Hub) Follow() (done func()) {
	h.following.Add(1)
	var once sync.Once
	return func() { once.Do(func() { h.following.Add(-1) }) }
}

// Counts are the games playing now by kind, and the streams following
// games.
func (h *Hub) Counts() (playing map[string]int, following int) {
	games, _ := h.Playing()
	playing = map[string]int{}
	for _, g := range games {
		playing[g.Meta.Kind]++
	}
	return playing, int(h.following.Load())
}

// Closed is closed when the hub is: every stream ends (the server stops).
func (h *Hub) Closed() <-chan struct{} { return h.closed }

// Close ends every stream.
func (h *Hub) Close() { h.once.Do(func() { close(h.closed) }) }

// sweep drops the games ended more than Keep ago, and those whose match
// never started within Keep (it could not be set up); h.mu is held.
func (h *Hub) sweep() {
	now := h.now()
	for id, g := range h.games {
		g.mu.Lock()
		gone := g.ended && now.Sub(g.endAt) > Keep || g.head == nil && !g.ended && now.Sub(g.At) > Keep
		g.mu.Unlock()
		if gone {
			delete(h.games, id)
		}
	}
}

// signal wakes who waits for a game to start or end; h.mu is held.
func (h *Hub) signal() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Game is one game followed as it is played: its steps as the viewer draws
// them, the start position first.
type Game struct {
	ID   string
	Meta Meta
	// At is when the game started.
	At  time.Time
	hub *Hub

	// kick asks the broadcaster to wake the watchers: the match's
	// goroutine never waits for them (closing a channel wakes each of its
	// waiters, a thousand of them in half a millisecond).
	kick chan struct{}

	mu      sync.Mutex // guards what follows
	head    *view.Data // the match as its header gives it (no steps)
	legends view.Legends
	steps   []step
	ended   bool
	endAt   time.Time
	result  transcript.Result
	// wake is closed and replaced at each change.
	wake chan struct{}
}

// step is a recorded step and its two copies, encoded at the first read.
type step struct {
	s            view.Step
	whole, clean []byte
}

// Started is the match's start: its header and the start position.
func (g *Game) Started(h transcript.Header, st rules.State) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.head != nil || g.ended {
		return
	}
	go g.broadcast()
	g.head = view.Begin(h)
	var s view.Step
	s.Picture(st)
	g.legends.Share(&s)
	g.steps = append(g.steps, step{s: s})
	g.signal()
}

// Turn is a turn recorded, st the position after it.
func (g *Game) Turn(t transcript.Turn, st rules.State) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.head == nil || g.ended {
		return
	}
	lines := g.head.Lines
	s := view.NewStep(t, lines)
	s.Picture(st)
	g.legends.Share(&s)
	g.steps = append(g.steps, step{s: s})
	g.signal()
}

// Finished is the match's end.
func (g *Game) Finished(r transcript.Result) {
	g.mu.Lock()
	if g.ended {
		g.mu.Unlock()
		return
	}
	g.ended, g.endAt, g.result = true, g.hub.now(), r
	started := g.head != nil
	g.mu.Unlock()
	if started {
		close(g.kick) // the broadcaster wakes the watchers a last time
	}
	g.hub.mu.Lock()
	g.hub.signal()
	g.hub.mu.Unlock()
}

// signal asks the broadcaster to wake the game's watchers, at once.
func (g *Game) signal() {
	select {
	case g.kick <- struct{}{}:
	default: // a wake is asked for already: it reads this change too
	}
}

// broadcast wakes the game's watchers each time it is asked, and a last
// time when the game ended.
func (g *Game) broadcast() {
	wake := func() {
		g.mu.Lock()
		w := g.wake
		g.wake = make(chan struct{})
		g.mu.Unlock()
		close(w)
	}
	for range g.kick {
		wake()
	}
	wake()
}

// Ended says whether the game is over.
func (g *Game) Ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended
}

// Head is what the page shows before the first step: the game, the sides
// and the seed (nil before the match wrote its header).
type Head struct {
	Game  string            `json:"game"`
	White string            `json:"white"`
	Black string            `json:"black"`
	Seed  uint64            `json:"seed"`
	Kind  string            `json:"kind"`
	Round int               `json:"round,omitempty"`
	Lines bool              `json:"lines,omitempty"`
	Open  *transcript.Lines `json:"opening,omitempty"`
}

// Read is what a watcher who has the steps before from reads now: the
// steps from from on, encoded as the audience may see them, the game's
// head (nil before it starts), whether it ended and how, and a channel
// closed at the next change.
func (g *Game) Read(from int, a Audience) (head *Head, steps [][]byte, ended bool, res transcript.Result, wake <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.head != nil {
		head = &Head{Game: g.head.Game, White: g.head.White, Black: g.head.Black, Seed: g.head.Seed,
			Kind: g.Meta.Kind, Round: g.Meta.Round, Lines: g.head.Lines, Open: g.head.Opening}
	}
	for i := max(from, 0); i < len(g.steps); i++ {
		steps = append(steps, g.steps[i].encoded(a))
	}
	return head, steps, g.ended, g.result, g.wake
}

// Plies is how many turns were recorded.
func (g *Game) Plies() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(len(g.steps)-1, 0)
}

// encoded is the step as the audience may see it; g.mu is held.
func (s *step) encoded(a Audience) []byte {
	if s.whole == nil {
		s.whole = mustJSON(s.s)
		s.clean = s.whole
		if s.s.Own() {
			c := s.s
			c.Redact("")
			s.clean = mustJSON(c)
		}
	}
	switch {
	case a == Organizer,
		a == White && s.s.Side == transcript.WinnerWhite,
		a == Black && s.s.Side == transcript.WinnerBlack:
		return s.whole
	}
	return s.clean
}

// mustJSON encodes a step: a step is made of strings, numbers and maps of
// them, which encode.
func mustJSON(s view.Step) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("live: a step does not encode: " + err.Error())
	}
	return b
}

// Position is the game's last position as the audience sees it (the true
// board: a game's board is no side's own) and the turns so far; ok is
// false before the start position.
func (g *Game) Position() (board rules.Frame, plies int, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.steps) == 0 {
		return rules.Frame{}, 0, false
	}
	return g.steps[len(g.steps)-1].s.Frames["true"], len(g.steps) - 1, true
}
