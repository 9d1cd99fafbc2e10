package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
)

// The final as the server shows and runs it: the organizer closes uploads,
// starts the final, freezes and reveals the scoreboard; everyone watches the
// standings update as games finish.

// boards keeps the final's scoreboard as each audience sees it, and its
// part of the home page rendered. The watcher computes them again when the
// final's version changes (a game recorded, a freeze), off the pages' way: a
// page is served the last boards computed, and waits for a computation only
// when none was made yet.
type boards struct {
	// compute serialises the computations (each loads the whole final);
	// mu guards the rest and is held only to read or swap it.
	compute sync.Mutex
	mu      sync.Mutex
	version string          // the final's version the boards were computed at
	board   [2]*event.Board // [anyone, the organizer]
	// part is each board rendered as the home page and /standings show it.
	part [2]template.HTML
	ok   bool
	// subs are the pages following the standings, each told what changed.
	subs map[follower]bool
}

// follower is a page following the standings: told when they changed, and
// when the games playing did (each at most once until it reads it).
type follower struct{ standings, playing chan struct{} }

// maxFollowers caps the pages following the standings at once: each holds
// a connection, and anyone may open one.
const maxFollowers = 2000

// subscribe follows the standings; ok is false when maxFollowers follow
// them already.
func (b *boards) subscribe() (_ follower, cancel func(), ok bool) {
	c := follower{make(chan struct{}, 1), make(chan struct{}, 1)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[follower]bool{}
	}
	if len(b.subs) >= maxFollowers {
		b.mu.Unlock()
		return follower{}, nil, false
	}
	b.subs[c] = true
	b.mu.Unlock()
	return c, func() {
		b.mu.Lock()
		delete(b.subs, c)
		b.mu.Unlock()
	}, true
}

// board is the final's scoreboard as p sees it (nil before the final) and
// its part of the home page: the last computed, computed now only if none
// was yet.
func (s *Server) board(ctx context.Context, p *event.Principal) (*event.Board, template.HTML, error) {
	who := 0
	if p != nil && p.Admin {
		who = 1
	}
	b := &s.boards
	b.mu.Lock()
	board, part, ok := b.board[who], b.part[who], b.ok
	b.mu.Unlock()
	if ok {
		return board, part, nil
	}
	if _, err := s.computeBoards(ctx); err != nil {
		return nil, "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.board[who], b.part[who], nil
}

// computeBoards computes the boards again if the final's version changed
// since they were computed, one computation at a time; changed says it did.
func (s *Server) computeBoards(ctx context.Context) (changed bool, err error) {
	b := &s.boards
	b.compute.Lock()
	defer b.compute.Unlock()
	// The version is read first: a game recorded while the final loads
	// changes it again, so the next pass computes the boards with it.
	version, err := s.Store.FinalVersion(ctx)
	if err != nil {
		return false, err
	}
	b.mu.Lock()
	same := b.ok && b.version == version
	b.mu.Unlock()
	if same {
		return false, nil
	}
	anyone, organizer, err := s.Store.FinalBoards(ctx)
	if err != nil {
		return false, err
	}
	// Rendered once here, not for each page: the rows of a large final
	// take milliseconds.
	board := [2]*event.Board{anyone, organizer}
	var part [2]template.HTML
	for who, bd := range board {
		if part[who], err = drawn("home", "board", boardData{Board: bd, Admin: who == 1}); err != nil {
			return false, err
		}
	}
	b.mu.Lock()
	b.version, b.board, b.part, b.ok = version, board, part, true
	b.mu.Unlock()
	return true, nil
}

// refreshBoards computes the boards again if the final changed and, if it
// did, shows them: the visitors' home page is built again and the pages
// following the standings are told. changed says it did.
func (s *Server) refreshBoards(ctx context.Context) (changed bool, err error) {
	if changed, err = s.computeBoards(ctx); err != nil || !changed {
		return changed, err
	}
	s.homeChanged()
	s.teamPages.changedAll() // each says where its team stands
	s.boards.tell(false)
	return true, nil
}

// tell wakes the pages following the standings: they read their parts
// again, the standings' or, playing, the list of games playing.
func (b *boards) tell(playing bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for f := range b.subs {
		c := f.standings
		if playing {
			c = f.playing
		}
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// homeChanged drops the home page kept for visitors: the next is built
// again.
func (s *Server) homeChanged() {
	s.homeMu.Lock()
	s.homeAt = time.Time{}
	s.homeMu.Unlock()
}

// watchFinal refreshes the boards when the final's version changes, polled
// every so often, until ctx ends. A computation that took d is followed by
// a pause of max(every, 4d): a huge final (a 300-team one loads in about
// 0.7 s) takes at most a fifth of a core, its standings shown a few seconds
// late.
func (s *Server) watchFinal(ctx context.Context, every time.Duration) {
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		// A freeze set or lifted by another process (arena event).
		if err := s.loadFreeze(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error("read the scoreboard's freeze", "err", err)
		}
		changed, err := s.refreshBoards(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Error("watch the final", "err", err)
		}
		wait := every
		if changed {
			wait = max(every, 4*time.Since(start))
		}
		t.Reset(wait)
	}
}

// standingsEvents streams a message each time the standings change
// ("standings": the page asks for its parts again) or the games playing
// do ("playing": it asks for /playing).
func (s *Server) standingsEvents(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	fl, ok := w.(http.Flusher)
	if !ok {
		return fmt.Errorf("streaming is not supported by this connection")
	}
	c, cancel, ok := s.boards.subscribe()
	if !ok {
		w.Header().Set("Retry-After", "30")
		return &httpError{http.StatusServiceUnavailable, "busy", "too many pages follow the standings: the page reloads them itself in a while"}
	}
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": following the standings\n\n")
	fl.Flush()
	ping := time.NewTicker(20 * time.Second)
	defer ping.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return nil
		case <-s.streams.closed:
			return nil
		case <-ping.C:
			_, err = fmt.Fprint(w, ": ping\n\n")
		case <-c.standings:
			_, err = fmt.Fprint(w, "data: standings\n\n")
		case <-c.playing:
			_, err = fmt.Fprint(w, "data: playing\n\n")
		}
		if err != nil {
			return nil
		}
		fl.Flush()
	}
}

// boardData is the standings part of a page.
type boardData struct {
	Board *event.Board
	Admin bool
	// Part: the board is a part of the organizer's page's final section
	// (a smaller heading).
	Part bool
	// HTML is the board rendered as the home page shows it.
	HTML template.HTML
}

// standingsFragment is the final's standings as the home page shows them,
// for the page to refresh without a reload: nothing while uploads are
// open and no final was started, as the home page shows it.
func (s *Server) standingsFragment(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	board, part, err := s.board(r.Context(), p)
	if err != nil {
		return err
	}
	if board == nil {
		if _, closed, err := s.Store.Closed(r.Context()); err != nil {
			return err
		} else if !closed {
			part = ""
		}
	}
	pageHeader(w)
	_, err = io.WriteString(w, string(part))
	return err
}

// apiStandings is the final's scoreboard as the asker may see it: frozen for
// anyone but the organizer while the scoreboard is frozen; an empty board
// before the final.
func (s *Server) apiStandings(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	b, _, err := s.board(r.Context(), p)
	if err != nil {
		return err
	}
	if b == nil {
		b = &event.Board{Standings: []event.BoardRow{}, Games: map[string]int{}}
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// FinalStarter starts (or resumes) the final with run's options; it refuses
// when the final is already playing.
type FinalStarter func(run event.FinalRun) error

// finalOptions reads the final's options from a form or JSON request:
// format (one of event.FinalFormats; round-robin by default), top (how
// many of the ladder's teams qualify; 0 or none: every team), rounds (a
// Swiss final's, or a stages final's qualifier's; 0 or none: the default),
// advance and then (a stages final's second stage), budget (a rating
// final's games), games_per_pair (default 2), concurrency (default 1),
// playoff (the places played for when level: "1,16", none; empty: the
// default).
func finalOptions(r *http.Request) (event.FinalRun, error) {
	run := event.FinalRun{Shape: event.Shape{Format: tournament.RoundRobin, GamesPerPair: 2}, Concurrency: 1, MaxAttempts: 3}
	got, err := fields(r, "format", "rounds", "top", "advance", "then", "budget", "games_per_pair", "concurrency", "playoff")
	if err != nil {
		return run, err
	}
	if run.Playoff, err = tournament.ParsePlayoff(got["playoff"]); err != nil {
		return run, &httpError{http.StatusBadRequest, "bad_request", "playoff: " + err.Error()}
	}
	run.Format, run.Then = cmp.Or(got["format"], tournament.RoundRobin), got["then"]
	for _, f := range []struct {
		name     string
		to       *int
		min, max int
	}{{"games_per_pair", &run.GamesPerPair, 1, 100}, {"concurrency", &run.Concurrency, 1, 64}, {"rounds", &run.Rounds, 0, 100},
		{"top", &run.Top, 0, 100000}, {"advance", &run.Advance, 0, 100000}, {"budget", &run.Budget, 0, 100000000}} {
		v := got[f.name]
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < f.min || n > f.max {
			return run, &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("%s must be a number from %d to %d, got %q", f.name, f.min, f.max, v)}
		}
		*f.to = n
	}
	// A form sends every field; those of another format mean nothing.
	switch run.Format {
	case tournament.Swiss:
		run.Advance, run.Then, run.Budget = 0, "", 0
	case tournament.Stages:
		run.Budget = 0
	case tournament.Rating:
		run.Rounds, run.Advance, run.Then = 0, 0, ""
	default:
		run.Rounds, run.Advance, run.Then, run.Budget = 0, 0, "", 0
	}
	if err := run.Check(); err != nil {
		return run, &httpError{http.StatusBadRequest, "bad_request", err.Error()}
	}
	return run, nil
}

func (s *Server) startFinal(r *http.Request) error {
	run, err := finalOptions(r)
	if err != nil {
		return err
	}
	if s.StartFinal == nil {
		return &httpError{http.StatusConflict, "refused", "this server does not play games: run arena event final"}
	}
	return s.StartFinal(run)
}

// freezeTime reads the freeze's time: "at" as RFC 3339 or a form's
// date-time (UTC), now when empty.
func freezeTime(r *http.Request) (time.Time, error) {
	f, err := fields(r, "at")
	if err != nil {
		return time.Time{}, err
	}
	v := f["at"]
	if v == "" {
		return time.Now(), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("at must be a time like 2026-11-23T18:00 (UTC), got %q", v)}
}

// adminAction is an organizer's action on the final, answered by a redirect
// to the organizer's page (a form) or the board as JSON (the API). The boards
// and the home page are refreshed before the answer: the organizer's next
// page shows what the action changed. A refused action is answered on the
// organizer's page, with the reason at the top.
func (s *Server) adminAction(api bool, act func(r *http.Request) error) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
		if err := act(r); err != nil {
			var re *event.RefusedError
			if !api && errors.As(err, &re) {
				return s.refuse(w, r, re.Error(), "#final")
			}
			return err
		}
		if _, err := s.refreshBoards(r.Context()); err != nil {
			return err
		}
		s.homeChanged() // closing changes no board, but the home page
		if !api {
			http.Redirect(w, r, "/admin#final", http.StatusSeeOther)
			return nil
		}
		return s.apiStandings(w, r, p)
	}
}

func (s *Server) closeUploads(r *http.Request) error {
	_, err := s.Store.CloseUploads(r.Context())
	return err
}

func (s *Server) reopenUploads(r *http.Request) error { return s.Store.ReopenUploads(r.Context()) }

// closePage asks the organizer to confirm the close: who will play the
// final with which submission, and who will not.
func (s *Server) closePage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	look, err := s.Store.FinalOutlook(r.Context())
	if err != nil {
		return err
	}
	if look.Closed {
		http.Redirect(w, r, "/admin#final", http.StatusSeeOther)
		return nil
	}
	return s.render(w, r, p, http.StatusOK, "close", "Close uploads", look)
}

// closeForm closes uploads once the organizer confirmed it on closePage.
func (s *Server) closeForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if r.PostFormValue("confirm") != "yes" {
		http.Redirect(w, r, "/admin/close", http.StatusSeeOther)
		return nil
	}
	return s.adminAction(false, s.closeUploads)(w, r, p)
}

func (s *Server) freeze(r *http.Request) error {
	at, err := freezeTime(r)
	if err != nil {
		return err
	}
	if err := s.Store.Freeze(r.Context(), at); err != nil {
		return err
	}
	return s.loadFreeze(r.Context())
}

func (s *Server) reveal(r *http.Request) error {
	if err := s.Store.Reveal(r.Context()); err != nil {
		return err
	}
	return s.loadFreeze(r.Context())
}

// adminFinal fills the parts of the organizer's page about the final and
// the disputes.
func (s *Server) adminFinal(r *http.Request, d *adminData) error {
	ctx := r.Context()
	at, closed, err := s.Store.Closed(ctx)
	if err != nil {
		return err
	}
	if closed {
		d.ClosedAt = at
		if d.Entries, err = s.Store.FinalEntries(ctx); err != nil {
			return err
		}
	}
	if d.Run, d.Started, err = s.Store.FinalRun(ctx); err != nil {
		return err
	}
	if at, frozen, err := s.Store.Frozen(ctx); err != nil {
		return err
	} else if frozen {
		d.FrozenAt = at
	}
	open, err := s.Store.Disputes(ctx, 0, 0, true)
	if err != nil {
		return err
	}
	if d.Disputes, err = s.disputeRows(r, open); err != nil {
		return err
	}
	d.Final.Admin, d.Final.Part = true, true
	if d.Final.Board, _, err = s.board(ctx, &event.Principal{Admin: true}); err != nil {
		return err
	}
	d.Over = d.Final.Board != nil && !d.Run.Running() && d.Run.Error == "" && d.Started &&
		d.Final.Board.Games["done"] == d.Final.Board.Games["total"]
	if d.Final.Board != nil && !d.Run.Running() {
		d.Unplayed = d.Final.Board.Games["unplayed"]
	}
	teams, shape, atOnce := len(d.Outlook.Playing), event.Shape{GamesPerPair: 2}, 1
	if d.Started {
		teams, shape, atOnce = len(d.Entries), d.Run.Shape, d.Run.Concurrency
	}
	d.Estimate, err = s.Store.FinalEstimate(ctx, shape, teams, atOnce)
	return err
}

// estimateFragment is the final's estimate for the options of the
// organizer's form (as the query gives them), the paragraph the page shows
// beside it: the page's script asks for it as the form changes.
func (s *Server) estimateFragment(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	q := r.Clone(r.Context())
	q.Header.Del("Content-Type")
	q.PostForm, q.Body = r.URL.Query(), http.NoBody // the form's fields, as a query
	run, err := finalOptions(q)
	if err != nil {
		return err
	}
	ctx := r.Context()
	look, err := s.Store.FinalOutlook(ctx)
	if err != nil {
		return err
	}
	teams := len(look.Playing)
	if look.Closed {
		entries, err := s.Store.FinalEntries(ctx)
		if err != nil {
			return err
		}
		teams = len(entries)
	}
	est, err := s.Store.FinalEstimate(ctx, run.Shape, teams, run.Concurrency)
	if err != nil {
		return err
	}
	return writeFragment(w, "admin", "estimate", est)
}
