package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/tournament"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/harness/view"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var funcs = template.FuncMap{
	"short": func(h string) string {
		if len(h) > 12 {
			return h[:12]
		}
		return h
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"bytes": func(n int64) string {
		switch {
		case n >= 1<<20:
			return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
		case n >= 1<<10:
			return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
		}
		return fmt.Sprintf("%d B", n)
	},
	"done": event.Done,
	"elo":  tournament.FormatElo,
}

// pages are the templates, each page with the layout.
var pages = func() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html"))
	out := map[string]*template.Template{}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" || base == "parts.html" {
			continue
		}
		out[strings.TrimSuffix(base, ".html")] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, n))
	}
	return out
}()

// pageData is what every page is rendered from.
type pageData struct {
	Title     string
	Event     event.Config
	GameTitle string
	Who       *event.Principal
	TeamName  string
	CSRF      string
	Data      any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, p *event.Principal, status int, page, title string, data any) error {
	body, err := s.pageBytes(r, p, page, title, data)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

// pageBytes renders a page with the layout.
func (s *Server) pageBytes(r *http.Request, p *event.Principal, page, title string, data any) ([]byte, error) {
	t := pages[page]
	if t == nil {
		return nil, fmt.Errorf("no page %q", page)
	}
	pd := pageData{Title: title, Event: s.Config, GameTitle: s.Game.Title(), Who: p, Data: data}
	if pd.Event.Title == "" {
		pd.Event.Title = s.Game.Title()
	}
	if csrf, ok := r.Context().Value(csrfKey{}).(string); ok {
		pd.CSRF = csrf
	}
	if p != nil {
		pd.TeamName = p.Name
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", pd); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// renderError is the page of an error: its sentence, and the way on.
func renderError(w http.ResponseWriter, he *httpError) {
	var buf bytes.Buffer
	err := pages["error"].ExecuteTemplate(&buf, "layout.html", pageData{Title: http.StatusText(he.status), Data: he.message,
		Event: event.Config{Title: "arena"}})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(he.status)
	if err != nil {
		fmt.Fprintf(w, "%d %s", he.status, template.HTMLEscapeString(he.message))
		return
	}
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) static(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	name := r.PathValue("file")
	data, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		return &httpError{http.StatusNotFound, "not_found", "no such file"}
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, err = w.Write(data)
	return err
}

type homeData struct {
	// ClosedAt is when the organizer closed uploads for the final.
	ClosedAt time.Time
	// Final is the final's scoreboard as the asker may see it.
	Final   boardData
	Ladder  []event.Standing
	Teams   []event.Team
	Rules   string
	Open    bool
	Closes  time.Time
	Opens   time.Time
	Enabled int
}

// homeTTL is how long the page a visitor who is not logged in gets is
// reused: it is the page asked for most, the same for everyone, and a team
// added shows a second later.
const homeTTL = time.Second

func (s *Server) home(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if p != nil {
		d, err := s.homeData(r, p)
		if err != nil {
			return err
		}
		return s.render(w, r, p, http.StatusOK, "home", "", d)
	}
	s.homeMu.Lock()
	defer s.homeMu.Unlock()
	if time.Since(s.homeAt) > homeTTL {
		d, err := s.homeData(r, nil)
		if err != nil {
			return err
		}
		if s.homePage, err = s.pageBytes(r, nil, "home", "", d); err != nil {
			return err
		}
		s.homeAt = time.Now()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, err := w.Write(s.homePage)
	return err
}

func (s *Server) homeData(r *http.Request, p *event.Principal) (homeData, error) {
	teams, err := s.Store.Teams(r.Context())
	if err != nil {
		return homeData{}, err
	}
	d := homeData{Rules: s.Game.Explain(), Open: s.Config.Open(time.Now()), Closes: s.Config.Closes.Time, Opens: s.Config.Opens.Time}
	if d.Final.Board, d.Final.HTML, err = s.board(r.Context(), p); err != nil {
		return homeData{}, err
	}
	d.Final.Admin = p != nil && p.Admin
	if s.Config.Ladder.Enabled {
		if d.Ladder, err = s.Store.Ladder(r.Context()); err != nil {
			return homeData{}, err
		}
	}
	if at, closed, err := s.Store.Closed(r.Context()); err != nil {
		return homeData{}, err
	} else if closed {
		d.Open, d.ClosedAt = false, at
	}
	for _, t := range teams {
		if !t.Disabled {
			d.Teams = append(d.Teams, event.Team{ID: t.ID, Name: t.Name})
		}
	}
	return d, nil
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	return s.render(w, r, p, http.StatusOK, "login", "Log in", "")
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	addr := s.clientAddr(r)
	if !s.logins.allow(addr) {
		return errRateLimited
	}
	p, err := s.Store.Authenticate(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
	if errors.Is(err, event.ErrBadToken) {
		s.logins.fail(addr)
		return s.render(w, r, nil, http.StatusUnauthorized, "login", "Log in", "That token is unknown, or its team is disabled.")
	}
	if err != nil {
		return err
	}
	secret, _, err := s.Store.NewSession(r.Context(), p)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(event.SessionTTL / time.Second)})
	to := "/team"
	if p.Admin {
		to = "/admin"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := s.Store.EndSession(r.Context(), c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

// teamPageGames is how many of its last games a team's page lists (the API
// lists more).
const teamPageGames = 10

type teamData struct {
	Team        event.Team
	Scrimmages  []event.Scrimmage
	Names       map[int64]string
	Submissions []event.Submission
	NewestFail  *event.Submission
	Games       []gameRow
	// Rating is the team's ladder rating over time (nil before a rated
	// game).
	Rating *ratingPlot
	// Pinned is the team's submission pinned for the final, once uploads
	// closed.
	Pinned    *event.FinalEntry
	Token     string // a token just made, shown once
	Notice    string
	MaxUpload int64
}

type gameRow struct {
	event.Game
	Me     string // "white" or "black"
	Rival  string
	Result string
}

func (s *Server) gameRows(games []event.Game, team int64) []gameRow {
	var out []gameRow
	for _, g := range games {
		row := gameRow{Game: g, Me: "white", Rival: g.Black.Name}
		if g.Black.Team == team && g.White.Team != team {
			row.Me, row.Rival = "black", g.White.Name
		}
		switch g.Winner {
		case row.Me:
			row.Result = "won"
		case transcript.WinnerDraw:
			row.Result = "draw"
		case "white", "black":
			row.Result = "lost"
		default:
			row.Result = "no result"
		}
		out = append(out, row)
	}
	return out
}

func (s *Server) teamData(r *http.Request, team int64) (teamData, error) {
	var d teamData
	var err error
	if d.Team, err = s.Store.Team(r.Context(), team); err != nil {
		return d, err
	}
	if d.Submissions, err = s.Store.Submissions(r.Context(), team); err != nil {
		return d, err
	}
	if len(d.Submissions) > 0 && d.Submissions[0].State == event.Failed {
		d.NewestFail = &d.Submissions[0]
	}
	games, err := s.Store.GamesOf(r.Context(), team, teamPageGames)
	if err != nil {
		return d, err
	}
	d.Games = s.gameRows(games, team)
	d.MaxUpload = int64(s.Config.Limits.UploadSize)
	history, err := s.Store.RatingHistory(r.Context(), team)
	if err != nil {
		return d, err
	}
	d.Rating = newRatingPlot(history)
	pinned, err := s.Store.FinalEntries(r.Context())
	if err != nil {
		return d, err
	}
	for i := range pinned {
		if pinned[i].Team == team {
			d.Pinned = &pinned[i]
		}
	}
	if d.Scrimmages, err = s.Store.Scrimmages(r.Context(), team, 10); err != nil {
		return d, err
	}
	if len(d.Scrimmages) > 0 {
		if d.Names, err = s.teamNames(r); err != nil {
			return d, err
		}
	}
	return d, nil
}

// teamNames are the teams' names by id, 0 the built-in random bot.
func (s *Server) teamNames(r *http.Request) (map[int64]string, error) {
	teams, err := s.Store.Teams(r.Context())
	if err != nil {
		return nil, err
	}
	names := map[int64]string{0: "the built-in random bot"}
	for _, t := range teams {
		names[t.ID] = t.Name
	}
	return names, nil
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
			return writePage(w, withCSRF(body, csrf))
		}
	}
	version := s.teamPages.version(p.Team)
	d, err := s.teamData(r, p.Team)
	if err != nil {
		return err
	}
	d.Notice = notice
	// Rendered with a stand-in for the session's CSRF token, so that one
	// rendering serves every session of the team.
	body, err := s.pageBytes(r.WithContext(context.WithValue(r.Context(), csrfKey{}, csrfStandIn)), p, "team", d.Team.Name, d)
	if err != nil {
		return err
	}
	if notice == "" {
		s.teamPages.put(p.Team, version, body)
	}
	return writePage(w, withCSRF(body, csrf))
}

// csrfStandIn stands for the CSRF token in a team page kept for reuse: it
// reads the same escaped or not.
const csrfStandIn = "csrfstandin0000000000000000000000000000000000000000000000000000"

func withCSRF(body []byte, csrf string) []byte {
	return bytes.ReplaceAll(body, []byte(csrfStandIn), []byte(csrf))
}

func writePage(w http.ResponseWriter, body []byte) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, err := w.Write(body)
	return err
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

func (s *Server) uploadForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := teamOnly(p); err != nil {
		return err
	}
	if _, err := s.upload(r, p); err != nil {
		return err
	}
	http.Redirect(w, r, "/team?notice=uploaded", http.StatusSeeOther)
	return nil
}

// upload stores the file of a multipart request's "file" field.
func (s *Server) upload(r *http.Request, p *event.Principal) (event.Submission, error) {
	max := int64(s.Config.Limits.UploadSize)
	r.Body = http.MaxBytesReader(nil, r.Body, max+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		return event.Submission{}, &httpError{http.StatusBadRequest, "bad_request", "send the file as multipart/form-data in a field named file"}
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return event.Submission{}, &httpError{http.StatusBadRequest, "bad_request", "the form has no file field: choose a file to upload"}
		}
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				return event.Submission{}, &event.TooLargeError{Max: max}
			}
			return event.Submission{}, &httpError{http.StatusBadRequest, "bad_request", "the upload is not a readable multipart form: " + err.Error()}
		}
		if part.FormName() != "file" {
			continue
		}
		if part.FileName() == "" {
			return event.Submission{}, &httpError{http.StatusBadRequest, "bad_request", "choose a file to upload"}
		}
		sub, err := s.Store.AddSubmission(r.Context(), s.Config, p.Team, part.FileName(), part)
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return event.Submission{}, &event.TooLargeError{Max: max}
		}
		if err != nil {
			return event.Submission{}, err
		}
		s.Log.Info("upload", "team", p.Team, "submission", sub.ID, "bytes", sub.Size, "sha256", sub.SHA256)
		s.Wake()
		s.Changed(sub)
		return sub, nil
	}
}

func (s *Server) activateForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if _, err := s.activate(r, p); err != nil {
		return err
	}
	http.Redirect(w, r, "/team?notice=activated", http.StatusSeeOther)
	return nil
}

func (s *Server) activate(r *http.Request, p *event.Principal) (event.Submission, error) {
	if err := teamOnly(p); err != nil {
		return event.Submission{}, err
	}
	id, err := pathID(r)
	if err != nil {
		return event.Submission{}, err
	}
	sub, err := s.ownSubmission(r, p, id)
	if err != nil {
		return event.Submission{}, err
	}
	if err := s.Store.Pin(r.Context(), p.Team, sub.ID); err != nil {
		if errors.Is(err, event.ErrNotFound) {
			return event.Submission{}, err
		}
		return event.Submission{}, &httpError{http.StatusConflict, "not_passed", err.Error()}
	}
	s.teamPages.changed(p.Team)
	return s.Store.Submission(r.Context(), id)
}

func (s *Server) tokenForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := teamOnly(p); err != nil {
		return err
	}
	token, err := s.Store.NewTeamToken(r.Context(), p.Team)
	if err != nil {
		return err
	}
	// The sessions of the old token ended: open one for this browser.
	secret, csrf, err := s.Store.NewSession(r.Context(), *p)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true, Secure: s.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: int(event.SessionTTL / time.Second)})
	d, err := s.teamData(r, p.Team)
	if err != nil {
		return err
	}
	d.Token = token
	r = r.WithContext(contextWithCSRF(r, csrf))
	return s.render(w, r, p, http.StatusOK, "team", d.Team.Name, d)
}

// ownSubmission is submission id if p may see it: 404 when there is none,
// 403 when it is another team's.
func (s *Server) ownSubmission(r *http.Request, p *event.Principal, id int64) (event.Submission, error) {
	sub, err := s.Store.Submission(r.Context(), id)
	if err != nil {
		return sub, err
	}
	if !owns(p, sub.Team) {
		return event.Submission{}, errForbidden
	}
	return sub, nil
}

// pathSubmission is the submission the request's path names, if p may see
// it (ownSubmission).
func (s *Server) pathSubmission(r *http.Request, p *event.Principal) (event.Submission, error) {
	id, err := pathID(r)
	if err != nil {
		return event.Submission{}, err
	}
	return s.ownSubmission(r, p, id)
}

// ownGame is game id if p played in it or is the organizer.
func (s *Server) ownGame(r *http.Request, p *event.Principal) (event.Game, error) {
	id, err := pathID(r)
	if err != nil {
		return event.Game{}, err
	}
	g, err := s.Store.Game(r.Context(), id)
	if err != nil {
		return g, err
	}
	if !p.Admin && !g.Involves(p.Team) {
		return event.Game{}, errForbidden
	}
	return g, nil
}

type reportData struct {
	Submission event.Submission
	Report     *validate.Report
	First      *validate.Check
	Build      string
	Games      []gameRow
}

func (s *Server) reportData(r *http.Request, sub event.Submission) (reportData, error) {
	d := reportData{Submission: sub}
	if !event.Done(sub.State) || sub.State == event.Errored {
		return d, nil
	}
	rep, err := validate.LoadReport(s.Store.ValidationDir(sub.ID))
	if err != nil {
		return d, err
	}
	d.Report = rep
	for i, c := range rep.Checks {
		if c.Status == validate.Fail && d.First == nil {
			d.First = &rep.Checks[i]
		}
		if c.Name == "build" && c.Evidence != nil {
			d.Build = c.Evidence.Output
		}
	}
	games, err := s.Store.GamesOfSubmission(r.Context(), sub.ID)
	if err != nil {
		return d, err
	}
	d.Games = s.gameRows(games, sub.Team)
	return d, nil
}

func (s *Server) submissionPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sub, err := s.pathSubmission(r, p)
	if err != nil {
		return err
	}
	d, err := s.reportData(r, sub)
	if err != nil {
		return err
	}
	return s.render(w, r, p, http.StatusOK, "submission", fmt.Sprintf("Submission %d", sub.ID), d)
}

// reportFragment is the report part of a submission's page, for the page to
// show once the validation is done without a reload.
func (s *Server) reportFragment(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sub, err := s.pathSubmission(r, p)
	if err != nil {
		return err
	}
	d, err := s.reportData(r, sub)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pages["submission"].ExecuteTemplate(&buf, "report", d); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(buf.Bytes())
	return err
}

func (s *Server) download(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sub, err := s.pathSubmission(r, p)
	if err != nil {
		return err
	}
	f, err := os.Open(s.Store.Path(sub))
	if err != nil {
		return err
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": sub.Filename}))
	_, err = io.Copy(w, f)
	return err
}

type gameData struct {
	Game     event.Game
	Disputes []disputeRow
	// CanDispute: the asker is a team that played the game.
	CanDispute bool
	MaxMessage int
}

func (s *Server) gamePage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	team := p.Team
	if p.Admin {
		team = 0
	}
	list, err := s.Store.Disputes(r.Context(), team, g.ID, false)
	if err != nil {
		return err
	}
	d := gameData{Game: g, CanDispute: !p.Admin && g.Involves(p.Team), MaxMessage: event.MaxDisputeMessage}
	if d.Disputes, err = s.disputeRows(r, list); err != nil {
		return err
	}
	return s.render(w, r, p, http.StatusOK, "game", fmt.Sprintf("Game %d", g.ID), d)
}

var (
	inlineBlock = regexp.MustCompile(`(?s)<(script|style)>(.*?)</(?:script|style)>`)
	anyScript   = regexp.MustCompile(`(?is)<script\b.*?</script>`)
	styleAttr   = regexp.MustCompile(`\sstyle="([^"]*)"`)
)

// gameView is the game's viewer page, as arena view writes it: its own
// script and style (its style attributes too) are allowed by their hashes,
// nothing else runs.
func (s *Server) gameView(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	d, err := view.Build(filepath.Join(s.Store.MatchDir(g), transcript.FileName))
	if err != nil {
		return err
	}
	page, err := view.HTML(d)
	if err != nil {
		return err
	}
	var scripts, styles []string
	for _, m := range inlineBlock.FindAllSubmatch(page, -1) {
		sum := sha256.Sum256(m[2])
		h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if string(m[1]) == "script" {
			scripts = append(scripts, h)
		} else {
			styles = append(styles, h)
		}
	}
	// The markup's style attributes, outside the scripts and the data.
	attrs := map[string]bool{}
	for _, m := range styleAttr.FindAllSubmatch(anyScript.ReplaceAll(page, nil), -1) {
		sum := sha256.Sum256([]byte(html.UnescapeString(string(m[1]))))
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !attrs[h] {
			attrs[h] = true
			if len(attrs) == 1 {
				styles = append(styles, "'unsafe-hashes'")
			}
			styles = append(styles, h)
		}
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src "+strings.Join(scripts, " ")+"; style-src "+
		strings.Join(styles, " ")+"; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write(page)
	return err
}

type adminData struct {
	ClosedAt time.Time
	Entries  []event.FinalEntry
	Run      event.FinalRun
	Started  bool
	// Over: the final played every game of its schedule.
	Over       bool
	FrozenAt   time.Time
	Final      boardData
	Disputes   []disputeRow
	Scrimmages []event.Scrimmage
	Teams      []event.Team
	Queue      []event.Submission
	Failures   []event.Submission
	Names      map[int64]string
}

func (s *Server) adminPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	var d adminData
	var err error
	if d.Teams, err = s.Store.Teams(r.Context()); err != nil {
		return err
	}
	if d.Queue, err = s.Store.Queue(r.Context()); err != nil {
		return err
	}
	if d.Failures, err = s.Store.RecentFailures(r.Context(), 30); err != nil {
		return err
	}
	if d.Names, err = s.teamNames(r); err != nil {
		return err
	}
	if d.Scrimmages, err = s.Store.Scrimmages(r.Context(), 0, 30); err != nil {
		return err
	}
	if err := s.adminFinal(r, &d); err != nil {
		return err
	}
	return s.render(w, r, p, http.StatusOK, "admin", "Organizer", d)
}

func (s *Server) disableForm(disabled bool) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if err := s.Store.SetDisabled(r.Context(), id, disabled); err != nil {
			return err
		}
		http.Redirect(w, r, "/admin", http.StatusSeeOther)
		return nil
	}
}

func (s *Server) revalidateForm(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	if err := s.revalidate(r); err != nil {
		return err
	}
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
	return nil
}

func (s *Server) revalidate(r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := s.Store.Submission(r.Context(), id); err != nil {
		return err
	}
	if err := s.Store.Revalidate(r.Context(), id); err != nil {
		return &httpError{http.StatusConflict, "busy", err.Error()}
	}
	s.Wake()
	return nil
}
