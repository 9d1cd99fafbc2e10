package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// hub fans the submissions' state changes out to the pages that follow
// them, by team.
type hub struct {
	mu     sync.Mutex
	subs   map[int64]map[chan event.Submission]bool
	closed chan struct{}
	once   sync.Once
}

func newHub() *hub {
	return &hub{subs: map[int64]map[chan event.Submission]bool{}, closed: make(chan struct{})}
}

// subscribe follows team's submissions until cancel.
func (h *hub) subscribe(team int64) (<-chan event.Submission, func()) {
	c := make(chan event.Submission, 16)
	h.mu.Lock()
	if h.subs[team] == nil {
		h.subs[team] = map[chan event.Submission]bool{}
	}
	h.subs[team][c] = true
	h.mu.Unlock()
	return c, func() {
		h.mu.Lock()
		delete(h.subs[team], c)
		if len(h.subs[team]) == 0 {
			delete(h.subs, team)
		}
		h.mu.Unlock()
	}
}

// publish tells every follower of sub's team; a follower too slow to take
// it misses this change, not the final state (the page asks again).
func (h *hub) publish(sub event.Submission) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs[sub.Team] {
		select {
		case c <- sub:
		default:
		}
	}
}

// close ends every stream (the server is stopping).
func (h *hub) close() { h.once.Do(func() { close(h.closed) }) }

// teamEvents streams the state of the team's submissions as server-sent
// events: each change as {"id", "state", "summary", "active"}, and a comment
// every 20 s so proxies keep the connection.
func (s *Server) teamEvents(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if p.Team == 0 {
		return &httpError{http.StatusNotFound, "not_found", "the organizer has no submissions"}
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return fmt.Errorf("streaming is not supported by this connection")
	}
	c, cancel := s.streams.subscribe(p.Team)
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// The state now, so that a page loaded before a change misses none.
	subs, err := s.Store.Submissions(r.Context(), p.Team)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		// Every state, finished ones too: one may have finished between
		// the page and this stream.
		if err := sendEvent(w, sub); err != nil {
			return nil
		}
	}
	fl.Flush()
	ping := time.NewTicker(20 * time.Second)
	defer ping.Stop()
	// The stream lives only as long as the login that opened it: a logout,
	// a new token, a disabled team end it within a second.
	check := time.NewTicker(sessionCheck)
	defer check.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.streams.closed:
			return nil
		case <-check.C:
			if !s.stillSignedIn(r, p) {
				return nil
			}
			continue
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return nil
			}
		case sub := <-c:
			if !s.stillSignedIn(r, p) {
				return nil
			}
			// Active moves with a passed upload: send the team's view.
			if fresh, err := s.Store.Submission(r.Context(), sub.ID); err == nil {
				sub = fresh
			}
			if err := sendEvent(w, sub); err != nil {
				return nil
			}
		}
		fl.Flush()
	}
}

// sessionCheck is how often a team's stream checks that its login still
// holds.
const sessionCheck = 500 * time.Millisecond

// stillSignedIn says whether the request's credential (its session cookie
// or its token) still opens what it opened: p.
func (s *Server) stillSignedIn(r *http.Request, p *event.Principal) bool {
	again, _, _, err := s.principal(r)
	return err == nil && again != nil && again.Team == p.Team && again.Admin == p.Admin
}

type stateEvent struct {
	ID      int64  `json:"id"`
	State   string `json:"state"`
	Summary string `json:"summary,omitempty"`
	Active  bool   `json:"active"`
	Done    bool   `json:"done"`
}

func sendEvent(w http.ResponseWriter, sub event.Submission) error {
	data, err := json.Marshal(stateEvent{ID: sub.ID, State: string(sub.State), Summary: sub.Summary, Active: sub.Active, Done: event.Done(sub.State)})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "data: %s\n\n", data)
	return err
}

// securityHeaders sets what every answer carries: a Content-Security-Policy
// that runs no inline script and loads nothing from elsewhere (the game
// viewer sets its own, with its script's hash), and no sniffing.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
