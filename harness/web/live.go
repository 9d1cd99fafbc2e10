package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/live"
	"github.com/arenabots/arena/harness/match"
	"github.com/arenabots/arena/harness/view"
	"github.com/arenabots/arena/rules"
)

// Watch follows a game this machine starts to play (services.Watch): the
// live pages show it from its first turn.
func (s *Server) Watch(kind string, white, black event.Side, round, playoff int) match.Observer {
	return s.Live.Start(live.Meta{Kind: kind, Round: round, Playoff: playoff, Private: kind == event.ScrimmageGame,
		White: live.Player{Team: white.Team, Name: white.Name}, Black: live.Player{Team: black.Team, Name: black.Name}})
}

// freezeState is the scoreboard's freeze as the live pages read it: read
// from the store once, then again whenever the organizer freezes or
// reveals (and each time the final's watcher looks).
type freezeState struct {
	mu    sync.Mutex
	known bool
	set   bool
	at    time.Time
}

// frozenAt says whether the scoreboard is frozen at now for anyone but the
// organizer: a freeze set for a time that has come.
func (s *Server) frozenAt(ctx context.Context, now time.Time) (bool, error) {
	f := &s.frozen
	f.mu.Lock()
	known, set, at := f.known, f.set, f.at
	f.mu.Unlock()
	if !known {
		if err := s.loadFreeze(ctx); err != nil {
			return false, err
		}
		return s.frozenAt(ctx, now)
	}
	return set && !now.Before(at), nil
}

// loadFreeze reads the freeze from the store.
func (s *Server) loadFreeze(ctx context.Context) error {
	at, set, err := s.Store.Frozen(ctx)
	if err != nil {
		return err
	}
	s.frozen.mu.Lock()
	changed := !s.frozen.known || s.frozen.set != set || !s.frozen.at.Equal(at)
	s.frozen.known, s.frozen.set, s.frozen.at = true, set, at
	s.frozen.mu.Unlock()
	if changed {
		s.visitorsPlaying.drop() // a freeze hides the final's games at once
	}
	return nil
}

// audience is what p may see of a live game: refused (not found) when p
// may not watch it at all. Anyone watches the ladder's and the final's
// games; a scrimmage only its teams; while the scoreboard is frozen, no
// one but the organizer watches the final's (a game's end tells a result).
// The sides' own output goes by ownSide's rule, the finished games'.
func (s *Server) audience(ctx context.Context, p *event.Principal, g *live.Game) (live.Audience, error) {
	if p != nil && p.Admin {
		return live.Organizer, nil
	}
	team := int64(0)
	if p != nil {
		team = p.Team
	}
	if g.Meta.Private && !g.Meta.Involves(team) {
		return 0, errNoLiveGame
	}
	if g.Meta.Kind == event.FinalGame {
		frozen, err := s.frozenAt(ctx, time.Now())
		if err != nil {
			return 0, err
		}
		if frozen {
			return 0, errFrozenGame
		}
	}
	keep, redact := sideOf(p, g.Meta.White.Team, g.Meta.Black.Team)
	switch {
	case !redact:
		return live.Organizer, nil
	case keep == "white":
		return live.White, nil
	case keep == "black":
		return live.Black, nil
	}
	return live.Everyone, nil
}

var (
	errNoLiveGame = &httpError{http.StatusNotFound, "not_found",
		"no such game is playing now: it may have ended (a team finds its games on its games page)"}
	errFrozenGame = &httpError{http.StatusNotFound, "frozen",
		"the scoreboard is frozen: the final's games are shown again when the organizer reveals it"}
)

// liveGame is the game of the path's id that p may watch, and what p sees.
func (s *Server) liveGame(r *http.Request, p *event.Principal) (*live.Game, live.Audience, error) {
	g, ok := s.Live.Game(r.PathValue("id"))
	if !ok {
		return nil, 0, errNoLiveGame
	}
	a, err := s.audience(r.Context(), p, g)
	return g, a, err
}

// firstStep is how long the page of a game waits for its first position
// (the match writes its header) before it answers that the game is
// starting.
const firstStep = 5 * time.Second

// livePage is a game being played, in the viewer: its turns so far, the
// rest as they are recorded.
func (s *Server) livePage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, a, err := s.liveGame(r, p)
	if err != nil {
		return err
	}
	head, steps, ended, res, wake := g.Read(0, a)
	if head == nil {
		select {
		case <-wake:
		case <-time.After(firstStep):
		case <-r.Context().Done():
			return r.Context().Err()
		}
		if head, steps, ended, res, _ = g.Read(0, a); head == nil {
			w.Header().Set("Retry-After", "2")
			return &httpError{http.StatusServiceUnavailable, "starting", "the game is starting: reload the page in a moment"}
		}
	}
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return err
	}
	d := &view.Data{Game: head.Game, Seed: head.Seed, Lines: head.Lines, Opening: head.Open, Consistent: true,
		White: withBot(names.Of(event.Side{Team: g.Meta.White.Team, Name: head.White}), head.White),
		Black: withBot(names.Of(event.Side{Team: g.Meta.Black.Team, Name: head.Black}), head.Black)}
	for _, raw := range steps {
		var st view.Step
		if err := json.Unmarshal(raw, &st); err != nil {
			return err
		}
		d.Steps = append(d.Steps, st)
	}
	if ended {
		d.Result = res
	} else {
		d.Live = fmt.Sprintf("/live/%s/events?from=%d", g.ID, len(steps))
	}
	return s.viewer(w, d)
}

// liveEvents streams a game's steps as server-sent events: each step with
// its number as its id ("step"), from the one after Last-Event-ID (a
// reconnect) or ?from, then its result ("end") when it ends. The stream
// ends with the game, when the asker's session ends, when the scoreboard
// freezes over a final's game, or when the server stops; a comment every
// 20 s keeps proxies from closing it.
func (s *Server) liveEvents(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, a, err := s.liveGame(r, p)
	if err != nil {
		return err
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return fmt.Errorf("streaming is not supported by this connection")
	}
	from, err := resumeFrom(r)
	if err != nil {
		return err
	}
	defer s.Live.Follow()()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return nil
	}
	ping := time.NewTicker(20 * time.Second)
	defer ping.Stop()
	for {
		_, steps, ended, res, wake := g.Read(from, a)
		for _, st := range steps {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: step\ndata: %s\n\n", from, st); err != nil {
				return nil
			}
			from++
		}
		if ended {
			data, err := json.Marshal(res)
			if err != nil {
				return err
			}
			// A client gone before the end is no error: the stream ends.
			if _, err := fmt.Fprintf(w, "event: end\ndata: %s\n\n", data); err == nil {
				fl.Flush()
			}
			return nil
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return nil
		case <-s.Live.Closed():
			return nil
		case <-wake:
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return nil
			}
		}
		// Who asks may have logged out, and the board may have frozen:
		// the page is told why its stream ends ("gone").
		if why := s.stopWatching(r, p, g); why != "" {
			data, err := json.Marshal(why)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "event: gone\ndata: %s\n\n", data); err == nil {
				fl.Flush()
			}
			return nil
		}
	}
}

// stopWatching says why the asker of a stream may no longer watch g ("":
// it may): its session, if it had one, ended, or the game is no longer one
// it may see (a freeze hides the final's).
func (s *Server) stopWatching(r *http.Request, p *event.Principal, g *live.Game) string {
	if p != nil && !p.Admin {
		if now, _, _, err := s.principal(r); err != nil || now == nil {
			return "your session ended: log in again to follow the game"
		}
	}
	if _, err := s.audience(r.Context(), p, g); err != nil {
		var he *httpError
		if errors.As(err, &he) {
			return he.message
		}
		return "the game can no longer be followed"
	}
	return ""
}

// resumeFrom is the step a stream starts at: the one after Last-Event-ID,
// else ?from, else the first.
func resumeFrom(r *http.Request) (int, error) {
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.Atoi(last)
		if err != nil || n < 0 {
			return 0, &httpError{http.StatusBadRequest, "bad_request", "Last-Event-ID is not a step number"}
		}
		return n + 1, nil
	}
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, &httpError{http.StatusBadRequest, "bad_request", "from is not a step number"}
		}
		return n, nil
	}
	return 0, nil
}

// liveRow is a game playing now, as a list shows it.
type liveRow struct {
	ID           string
	Kind         string
	Round        int
	Playoff      int
	White, Black string
	Plies        int
	Since        time.Time
}

// playing are the games playing now that p may watch, oldest first.
func (s *Server) playing(ctx context.Context, p *event.Principal) ([]liveRow, error) {
	games, _ := s.Live.Playing()
	if len(games) == 0 {
		return nil, nil
	}
	names, err := s.Store.Names(ctx)
	if err != nil {
		return nil, err
	}
	var out []liveRow
	for _, g := range games {
		if _, err := s.audience(ctx, p, g); err != nil {
			if _, refused := err.(*httpError); refused {
				continue
			}
			return nil, err
		}
		out = append(out, liveRow{ID: g.ID, Kind: g.Meta.Kind, Round: g.Meta.Round, Playoff: g.Meta.Playoff, Plies: g.Plies(), Since: g.At,
			White: names.Of(event.Side{Team: g.Meta.White.Team, Name: g.Meta.White.Name}),
			Black: names.Of(event.Side{Team: g.Meta.Black.Team, Name: g.Meta.Black.Name})})
	}
	return out, nil
}

// playingFragment is the home page's list of the games playing now, for
// the page to refresh without a reload. The visitors' list, the same for
// all of them and asked for by each page at once, is kept a second.
func (s *Server) playingFragment(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if p != nil {
		rows, err := s.playing(r.Context(), p)
		if err != nil {
			return err
		}
		return writeFragment(w, "home", "playing", rows)
	}
	body, err := s.visitorsPlaying.get(func() ([]byte, error) {
		rows, err := s.playing(r.Context(), nil)
		if err != nil {
			return nil, err
		}
		return fragment("home", "playing", rows)
	})
	if err != nil {
		return err
	}
	return writePage(w, body)
}

// keptPart is a part of a page kept a second (homeTTL) for everyone who is
// not logged in.
type keptPart struct {
	mu   sync.Mutex
	at   time.Time
	body []byte
	// gen counts the drops: a part drawn across one is not kept.
	gen uint64
}

// get is the part kept, or draw's, kept unless it was dropped meanwhile.
// No lock is held while it draws (drawing may drop it: a freeze read).
func (k *keptPart) get(draw func() ([]byte, error)) ([]byte, error) {
	k.mu.Lock()
	body, fresh, gen := k.body, time.Since(k.at) <= homeTTL, k.gen
	k.mu.Unlock()
	if fresh {
		return body, nil
	}
	body, err := draw()
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	if k.gen == gen {
		k.body, k.at = body, time.Now()
	}
	k.mu.Unlock()
	return body, nil
}

// drop has the part drawn anew at the next ask.
func (k *keptPart) drop() {
	k.mu.Lock()
	k.at = time.Time{}
	k.gen++
	k.mu.Unlock()
}

// playingEvery is how often at most the pages following the standings are
// told that the games playing changed.
const playingEvery = 2 * time.Second

// watchPlaying tells the pages following the standings (they refresh the
// list of games playing with them) when a game starts or ends, at most
// every playingEvery, until ctx ends; the visitors' home page is drawn
// anew.
func (s *Server) watchPlaying(ctx context.Context) {
	_, changed := s.Live.Playing()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		// Followed again before the pages are told: a change while they
		// are, or during the pause, is told after it.
		_, changed = s.Live.Playing()
		s.homeChanged()
		s.visitorsPlaying.drop()
		s.boards.tell(true)
		select {
		case <-ctx.Done():
			return
		case <-time.After(playingEvery):
		}
	}
}

// projectorData is the projector page: the final's board as the asker
// sees it.
type projectorData struct {
	Board boardData
}

// projectorPage is the final for a screen across a room: the standings
// with their rank sets, the bracket or the rounds (the home page's board,
// frozen as it is), and the boards of the games playing now.
func (s *Server) projectorPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	board, part, err := s.board(r.Context(), p)
	if err != nil {
		return err
	}
	d := projectorData{Board: boardData{Board: board, HTML: part, Admin: p != nil && p.Admin}}
	return s.render(w, r, p, http.StatusOK, "projector", "The final", d)
}

// liveBoard is a game of the final playing now, as the projector draws it.
type liveBoard struct {
	ID    string `json:"id"`
	Round int    `json:"round,omitempty"`
	// Playoff is its playoff round (0: a game of the format's own).
	Playoff int         `json:"playoff,omitempty"`
	White   string      `json:"white"`
	Black   string      `json:"black"`
	Plies   int         `json:"plies"`
	Board   rules.Frame `json:"board"`
}

// liveBoards are the games of the final playing now that p may watch, and
// whether the board is frozen for p (then none).
func (s *Server) liveBoards(ctx context.Context, p *event.Principal) (games []liveBoard, frozen bool, err error) {
	if p == nil || !p.Admin {
		if frozen, err = s.frozenAt(ctx, time.Now()); err != nil || frozen {
			return nil, frozen, err
		}
	}
	playing, _ := s.Live.Playing()
	var names event.TeamNames
	for _, g := range playing {
		if g.Meta.Kind != event.FinalGame {
			continue
		}
		if _, err := s.audience(ctx, p, g); err != nil {
			if _, refused := err.(*httpError); refused {
				continue
			}
			return nil, false, err
		}
		board, plies, ok := g.Position()
		if !ok {
			continue
		}
		if names.ByID == nil {
			if names, err = s.Store.Names(ctx); err != nil {
				return nil, false, err
			}
		}
		games = append(games, liveBoard{ID: g.ID, Round: g.Meta.Round, Playoff: g.Meta.Playoff, Plies: plies, Board: board,
			White: names.Of(event.Side{Team: g.Meta.White.Team, Name: g.Meta.White.Name}),
			Black: names.Of(event.Side{Team: g.Meta.Black.Team, Name: g.Meta.Black.Name})})
	}
	return games, false, nil
}

// boardsEvery is how often at most the projector is sent its boards.
const boardsEvery = 250 * time.Millisecond

// projectorEvents streams the boards of the final's games playing now as
// server-sent events ("boards": {"games", "frozen"}, the list whole), each
// time it changed, at most every boardsEvery; it ends when the server
// stops or the asker's session ends.
func (s *Server) projectorEvents(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	fl, ok := w.(http.Flusher)
	if !ok {
		return fmt.Errorf("streaming is not supported by this connection")
	}
	defer s.Live.Follow()()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(boardsEvery)
	defer tick.Stop()
	var last []byte
	for n := 0; ; n++ {
		games, frozen, err := s.liveBoards(r.Context(), p)
		if err != nil {
			return err
		}
		data, err := json.Marshal(map[string]any{"games": games, "frozen": frozen})
		if err != nil {
			return err
		}
		if !bytes.Equal(data, last) {
			if _, err := fmt.Fprintf(w, "event: boards\ndata: %s\n\n", data); err != nil {
				return nil
			}
			fl.Flush()
			last = data
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-s.Live.Closed():
			return nil
		case <-tick.C:
		}
		// Every 20 s: a comment for proxies, and who asks is still there.
		if n%80 == 79 {
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return nil
			}
			fl.Flush()
			if p != nil && !p.Admin {
				if now, _, _, err := s.principal(r); err != nil || now == nil {
					return nil
				}
			}
		}
	}
}
