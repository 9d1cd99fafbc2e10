package web

import (
	"bytes"
	"context"
	"html/template"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
)

// teamPageGames is how many of its last games a team's page lists (the API
// lists more).
const teamPageGames = 10

type teamData struct {
	// queued: a version or a scrimmage of the team's waits in its queue,
	// its place shown.
	queued     bool
	TeamName   string
	Scrimmages []event.Scrimmage
	// ScrimmageRows are the rows of the scrimmages' table.
	ScrimmageRows []scrimmageRow
	Names         event.TeamNames
	Submissions   []event.Submission
	// Versions are the rows of the submissions' table.
	Versions   []versionRow
	NewestFail *event.Submission
	// Games are the team's newest games, drawn: GamesShown of GamesTotal
	// (the games list has them all).
	Games      template.HTML
	GamesShown int
	GamesTotal int
	// Rating is the team's ladder rating over time (nil before a rated
	// game).
	Rating *ratingPlot
	// Pinned is the team's submission pinned for the final, once uploads
	// closed.
	Pinned *event.FinalEntry
	// NotQualified: the final plays the ladder's top Top teams, and this
	// one is not among them.
	NotQualified bool
	Top          int
	Token        string // a token just made, shown once
	Notice       string
	// NoticeUntilDone: the notice waits for a validation's result, and
	// goes when it comes.
	NoticeUntilDone bool
	MaxUpload       int64
	// Closed is when uploads closed (zero while they are open).
	Closed time.Time
	// Require are the documents this event's submissions must hold.
	Require []string
	// Standing is where the team stands in the final (nil before it, or
	// out of it).
	Standing *finalStanding
}

// teamData is what p's team's page shows, its forms carrying csrf. It
// reads what the page shows and no more: a thousand teams' pages are drawn
// anew after each change of theirs.
func (s *Server) teamData(r *http.Request, p *event.Principal, csrf string) (teamData, error) {
	team := p.Team
	d := teamData{TeamName: p.Name} // read with the login
	var err error
	if d.Submissions, err = s.Store.Submissions(r.Context(), team); err != nil {
		return d, err
	}
	for _, sub := range d.Submissions {
		ahead := -1
		if sub.State == event.Queued {
			if ahead, err = s.Store.QueueAhead(r.Context(), sub.ID); err != nil {
				return d, err
			}
			d.queued = true
		}
		d.Versions = append(d.Versions, versionRow{Submission: sub, CSRF: csrf, Ahead: ahead})
	}
	if len(d.Submissions) > 0 && d.Submissions[0].State == event.Failed {
		d.NewestFail = &d.Submissions[0]
	}
	if d.Names, err = s.Store.Names(r.Context()); err != nil {
		return d, err
	}
	if d.Games, d.GamesTotal, err = s.gamesTable(r.Context(), team, d.Names, event.GameQuery{Team: team, Limit: teamPageGames}); err != nil {
		return d, err
	}
	d.GamesShown = min(d.GamesTotal, teamPageGames)
	d.MaxUpload, d.Require = int64(s.Config.Limits.UploadSize), s.Config.Validation.Require
	if at, closed, err := s.Store.Closed(r.Context()); err != nil {
		return d, err
	} else if closed {
		d.Closed = at
	}
	history, err := s.Store.RatingPlot(r.Context(), team)
	if err != nil {
		return d, err
	}
	d.Rating = newRatingPlot(history)
	// Submissions are pinned at the close, and the final's run says who
	// of the pinned plays.
	if !d.Closed.IsZero() {
		if pinned, ok, err := s.Store.FinalEntryOf(r.Context(), team); err != nil {
			return d, err
		} else if ok {
			d.Pinned = &pinned
		}
	}
	if d.Pinned != nil {
		board, _, err := s.board(r.Context(), p)
		if err != nil {
			return d, err
		}
		d.Standing = standingOf(board, p.Name)
		if run, started, err := s.Store.FinalRun(r.Context()); err != nil {
			return d, err
		} else if started && run.Top > 0 {
			players, err := s.Store.FinalPlayers(r.Context())
			if err != nil {
				return d, err
			}
			d.NotQualified, d.Top = !players[team], run.Top
		}
	}
	if d.Scrimmages, err = s.Store.Scrimmages(r.Context(), team, 10); err != nil {
		return d, err
	}
	ids := make([]int64, len(d.Scrimmages))
	for i, sc := range d.Scrimmages {
		ids[i] = sc.ID
	}
	games, err := s.Store.ScrimmageGames(r.Context(), ids...)
	if err != nil {
		return d, err
	}
	for _, sc := range d.Scrimmages {
		ahead := -1
		if sc.State == event.ScrimmageQueued {
			if ahead, err = s.Store.ScrimmageAhead(r.Context(), sc.ID); err != nil {
				return d, err
			}
			d.queued = true
		}
		d.ScrimmageRows = append(d.ScrimmageRows, newScrimmageRow(sc, gameRows(games[sc.ID], team, d.Names), d.Names, ahead))
	}
	return d, nil
}

func (s *Server) teamPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if p.Admin {
		http.Redirect(w, r, "/admin", http.StatusSeeOther)
		return nil
	}
	notice := ""
	switch r.URL.Query().Get("notice") {
	case "uploaded":
		notice = "Uploaded: the validation follows below."
	case "activated":
		notice = "That version is now your active submission."
	case "challenged":
		notice = "Challenge queued: its two games appear below when they are played."
	}
	csrf, _ := r.Context().Value(csrfKey{}).(string)
	if notice == "" {
		if body, ok := s.teamPages.get(p.Team); ok {
			return writeWithCSRF(w, body, csrf)
		}
	}
	version := s.teamPages.version(p.Team)
	d, err := s.teamData(r, p, csrfStandIn)
	if err != nil {
		return err
	}
	d.Notice, d.NoticeUntilDone = notice, r.URL.Query().Get("notice") == "uploaded"
	// Rendered with a stand-in for the session's CSRF token, so that one
	// rendering serves every session of the team.
	body, err := s.pageBytes(r.WithContext(context.WithValue(r.Context(), csrfKey{}, csrfStandIn)), p, "team", d.TeamName, d)
	if err != nil {
		return err
	}
	if notice == "" && !d.queued {
		// A page with a place in the queue is not kept: the place moves
		// with every team's validations, not with this team's changes.
		s.teamPages.put(p.Team, version, body)
	}
	return writeWithCSRF(w, body, csrf)
}

// versionRow is a submission's row of its team's table of versions (the
// template "version-row"), with the form that makes it active carrying
// CSRF. Ahead says where a queued submission stands in the validation
// queue: how many wait before it (-1: not queued).
type versionRow struct {
	event.Submission
	CSRF  string
	Ahead int
}

// scrimmageRow is a scrimmage's row of its team's table of scrimmages
// (the template "scrimmage-row"): both teams by name, and its games as
// the team sees them. Ahead says where a queued scrimmage stands in its
// queue (-1: not queued).
type scrimmageRow struct {
	ID                int64
	Challenger, Rival string
	Created           time.Time
	State             string
	Ahead             int
	Games             []gameRow
	Message           string
}

// newScrimmageRow is sc's row, with its games and the teams' names.
func newScrimmageRow(sc event.Scrimmage, games []gameRow, names event.TeamNames, ahead int) scrimmageRow {
	return scrimmageRow{ID: sc.ID, Challenger: names.Team(sc.Team), Rival: names.Team(sc.RivalTeam), Created: sc.Created,
		State: sc.State, Ahead: ahead, Games: games, Message: sc.Message}
}

// csrfStandIn stands for the CSRF token in a team page kept for reuse: it
// reads the same escaped or not.
const csrfStandIn = "csrfstandin0000000000000000000000000000000000000000000000000000"

// writeWithCSRF writes a kept team page to w with csrf in place of each
// stand-in: piece by piece, where a copy of the page with csrf in it would
// be the view's largest allocation.
func writeWithCSRF(w http.ResponseWriter, body []byte, csrf string) error {
	pageHeader(w)
	for {
		before, after, found := bytes.Cut(body, []byte(csrfStandIn))
		if _, err := w.Write(before); err != nil {
			return err
		}
		if !found {
			return nil
		}
		if _, err := io.WriteString(w, csrf); err != nil {
			return err
		}
		body = after
	}
}

func writePage(w http.ResponseWriter, body []byte) error {
	pageHeader(w)
	_, err := w.Write(body)
	return err
}

// pageHeader is the header of a page drawn for its asker: HTML, never
// stored by a browser or a proxy.
func pageHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
}

// pageCache keeps each team's page for a few seconds at most, and not past
// a change of the team's submissions or games (Server.Changed): the page a
// team asks for most, while its state rarely changes between two asks. Each
// page's time is drawn between half the TTL and the TTL, so that pages kept
// at once are not all made again at once.
type pageCache struct {
	mu      sync.Mutex
	ttl     time.Duration
	pages   map[int64]cachedPage
	changes map[int64]uint64
}

type cachedPage struct {
	version uint64
	until   time.Time
	body    []byte
}

func newPageCache(ttl time.Duration) *pageCache {
	return &pageCache{ttl: ttl, pages: map[int64]cachedPage{}, changes: map[int64]uint64{}}
}

// version is how many changes team has seen: a page rendered from data
// read after this call is stored under it.
func (c *pageCache) version(team int64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes[team]
}

func (c *pageCache) get(team int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pages[team]
	if !ok || p.version != c.changes[team] || time.Now().After(p.until) {
		return nil, false
	}
	return p.body, true
}

func (c *pageCache) put(team int64, version uint64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if version == c.changes[team] {
		keep := c.ttl/2 + rand.N(c.ttl/2+1)
		c.pages[team] = cachedPage{version: version, until: time.Now().Add(keep), body: body}
	}
}

// changed drops team's page.
func (c *pageCache) changed(team int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes[team]++
	delete(c.pages, team)
}

// teamOnly refuses the organizer a team's own action.
func teamOnly(p *event.Principal) error {
	if p.Team == 0 {
		return &httpError{http.StatusForbidden, "forbidden", "the organizer has no submissions: log in with a team's token"}
	}
	return nil
}

// changedAll drops every team's page (a name on them changed).
func (c *pageCache) changedAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for team := range c.pages {
		c.changes[team]++
	}
	clear(c.pages)
}
