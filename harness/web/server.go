package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/api"
	"github.com/arenabots/arena/harness/distrib"
	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/live"
	"github.com/arenabots/arena/harness/metrics"
	"github.com/arenabots/arena/harness/services"
	"github.com/arenabots/arena/rules"
)

// Server serves one event.
type Server struct {
	Store  *event.Store
	Config event.Config
	Game   rules.Game
	Log    *slog.Logger
	// Secure marks cookies Secure (the server speaks TLS).
	Secure bool
	// Metrics, when set, counts and times every request by its route.
	Metrics *metrics.Event
	// Proxies, when set, are the reverse proxies in front: the client's
	// address is taken from X-Forwarded-For and its scheme from
	// X-Forwarded-Proto as far as they are trusted (Proxies.client).
	Proxies *Proxies
	// Wake tells the validators an upload was queued; WakePlayer tells the
	// player a scrimmage was.
	Wake       func()
	WakePlayer func()
	// StartFinal starts the final on this server; nil refuses (the
	// organizer runs arena event final).
	StartFinal FinalStarter
	// Rerunner runs disputed turns again; nil refuses.
	Rerunner *services.Rerunner
	// Queue, when workers play, is the queue their games go through, and
	// Tally what their results came to: the organizer's page shows both.
	Queue *distrib.Queue
	Tally *services.Tally
	// Languages are how the event builds source ("How to submit" lists
	// them); nil: the built-in table.
	Languages langs.Languages
	// Live are the games this machine plays now, followed turn by turn.
	Live *live.Hub

	tools toolchains
	// PlaysOn says, when asked, where games play when no worker plays
	// them ("on this machine, in Docker containers"; nil: on this
	// machine): the sandbox's Where, which may change (a cluster's room).
	PlaysOn func() string
	// Arena is the arena binary the site offers for download (the team's
	// build, harness/server finds it; "": none offered).
	Arena string
	self  ownBinary

	boards boards

	logins  *limiter
	streams *hub

	teamPages *pageCache
	// lists are the teams' lists of games the pages and the API wrote.
	lists listCache
	// options are the organizer's list of teams, drawn.
	options teamOptions

	homeMu   sync.Mutex
	homeAt   time.Time
	homePage []byte

	// turns is the line of requests to read.
	turns *turns

	// refused keeps the reasons of the organizer's refused forms.
	refused refusals
	// started is when the server was made, to the second.
	started time.Time
	// adminPages keeps the organizer's page, a second at most.
	adminPages adminPages
	// frozen is the scoreboard's freeze, as the live pages read it.
	frozen freezeState
	// visitorsPlaying is the list of games playing visitors get.
	visitorsPlaying keptPart
}

// New is a server of the event in st configured by cfg.
func New(st *event.Store, cfg event.Config, log *slog.Logger) *Server {
	g, err := rules.Lookup(cfg.Game)
	if err != nil {
		panic(err) // event.ParseConfig refuses an unknown game
	}
	if log == nil {
		log = slog.Default()
	}
	return &Server{Store: st, Config: cfg, Game: g, Log: log, Wake: func() {}, WakePlayer: func() {}, started: time.Now().UTC().Truncate(time.Second),
		logins: newLimiter(10, 10*time.Minute), streams: newHub(), teamPages: newPageCache(10 * time.Second),
		turns: newTurns(answerSlots()), Live: live.NewHub()}
}

// TeamChanged drops what the server keeps of a team's pages (a game of
// its was recorded).
func (s *Server) TeamChanged(team int64) { s.teamPages.changed(team) }

// Changed tells the pages that follow a submission that its state changed.
func (s *Server) Changed(sub event.Submission) {
	s.teamPages.changed(sub.Team)
	s.streams.publish(sub)
}

// CloseStreams ends every event stream and live game the pages follow:
// the server is stopping, and its HTTP server's shutdown waits for them.
func (s *Server) CloseStreams() {
	s.streams.close()
	s.Live.Close()
}

// Follow keeps the pages abreast of the event until ctx ends: the final's
// boards (polled every second) and the list of games playing.
func (s *Server) Follow(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.watchPlaying(ctx)
	}()
	s.watchFinal(ctx, time.Second)
	<-done
}

// Access is who may ask for a route.
type Access int

// Accesses of routes.
const (
	// Public routes answer anyone.
	Public Access = iota
	// Member routes answer a logged-in team or the organizer; a handler
	// answers about an object only to its owner (or the organizer).
	Member
	// Organizer routes answer the organizer only.
	Organizer
)

// Route is one route of the server: its pattern (net/http's), who may ask,
// and whether it is part of the JSON API (errors as JSON) or a page.
type Route struct {
	Pattern string
	Access  Access
	API     bool
	// Direct routes answer at once, never in line (turns): those that
	// send their answer as they make it (an event stream, a file; never
	// held in memory), and the site's assets, in memory already.
	Direct bool
	handle func(w http.ResponseWriter, r *http.Request, p *event.Principal) error
}

// view: rt reads and is answered in its turn, drawn from one snapshot of
// the event (a GET that is not direct).
func (rt Route) view() bool {
	return !rt.Direct && strings.HasPrefix(rt.Pattern, http.MethodGet+" ")
}

// Routes lists every route the server answers.
func (s *Server) Routes() []Route {
	page := func(pattern string, a Access, h func(http.ResponseWriter, *http.Request, *event.Principal) error) Route {
		return Route{Pattern: pattern, Access: a, handle: h}
	}
	api := func(pattern string, a Access, h func(http.ResponseWriter, *http.Request, *event.Principal) error) Route {
		return Route{Pattern: pattern, Access: a, API: true, handle: h}
	}
	direct := func(rt Route) Route {
		rt.Direct = true
		return rt
	}
	return []Route{
		page("GET /{$}", Public, s.home),
		direct(page("GET /static/{file}", Public, s.static)),
		page("GET /login", Public, s.loginPage),
		page("GET /how-to-submit", Public, s.howTo),
		page("GET /how-to-submit/{starter}", Public, s.starter),
		direct(page("GET /download/arena", Public, s.downloadArena)),
		page("GET /download/arena.sha256", Public, s.downloadArenaSum),
		page("POST /login", Public, s.login),
		page("POST /logout", Member, s.logout),
		page("GET /team", Member, s.teamPage),
		page("POST /team/submissions", Member, s.uploadForm),
		page("POST /team/submissions/{id}/activate", Member, s.activateForm),
		page("POST /team/token", Member, s.tokenForm),
		direct(page("GET /team/events", Member, s.teamEvents)),
		page("POST /scrimmages", Member, s.scrimmageForm),
		page("GET /submissions/{id}", Member, s.submissionPage),
		page("GET /submissions/{id}/report", Member, s.reportFragment),
		direct(page("GET /submissions/{id}/download", Member, s.download)),
		page("GET /games", Member, s.gamesPage),
		page("GET /games/{id}", Member, s.gamePage),
		page("GET /games/{id}/view", Member, s.gameView),
		page("GET /games/{id}/proof", Member, s.gameProof),
		page("GET /live/{id}", Public, s.livePage),
		direct(page("GET /live/{id}/events", Public, s.liveEvents)),
		page("POST /games/{id}/disputes", Member, s.disputeForm),
		page("GET /admin", Organizer, s.adminPage),
		page("POST /admin/teams/{id}/disable", Organizer, s.disableForm(true)),
		page("POST /admin/teams/{id}/enable", Organizer, s.disableForm(false)),
		page("POST /admin/teams/{id}/rename", Organizer, s.renameForm),
		page("POST /admin/submissions/{id}/revalidate", Organizer, s.revalidateForm),
		page("POST /admin/submissions/{id}/admit", Organizer, s.admitForm(false)),
		page("POST /admin/submissions/{id}/withdraw", Organizer, s.admitForm(true)),
		page("POST /admin/disputes/{id}/rerun", Organizer, s.disputeAction(false, s.rerun)),
		page("POST /admin/disputes/{id}/answer", Organizer, s.disputeAction(false, s.answer)),
		page("GET /admin/close", Organizer, s.closePage),
		page("POST /admin/close", Organizer, s.closeForm),
		page("POST /admin/reopen", Organizer, s.adminAction(false, s.reopenUploads)),
		page("POST /admin/workers/{name}/readmit", Organizer, s.readmitForm),
		page("POST /admin/final", Organizer, s.adminAction(false, s.startFinal)),
		page("GET /admin/estimate", Organizer, s.estimateFragment),
		page("POST /admin/freeze", Organizer, s.adminAction(false, s.freeze)),
		page("POST /admin/reveal", Organizer, s.adminAction(false, s.reveal)),
		page("GET /standings", Public, s.standingsFragment),
		page("GET /deadline", Public, s.deadlineFragment),
		page("GET /playing", Public, s.playingFragment),
		page("GET /final/live", Public, s.projectorPage),
		direct(page("GET /final/live/events", Public, s.projectorEvents)),
		direct(page("GET /standings/events", Public, s.standingsEvents)),
		page("GET /log/checkpoint", Public, s.logCheckpoint),
		page("GET /log/tile/{path...}", Public, s.logTile),

		api("GET /api/v1/event", Public, s.apiEvent),
		api("GET /api/v1/standings", Public, s.apiStandings),
		api("GET /api/v1/me", Member, s.apiMe),
		api("GET /api/v1/submissions", Member, s.apiSubmissions),
		api("POST /api/v1/submissions", Member, s.apiUpload),
		api("GET /api/v1/submissions/{id}", Member, s.apiSubmission),
		api("GET /api/v1/submissions/{id}/report.txt", Member, s.apiReportText),
		api("POST /api/v1/submissions/{id}/activate", Member, s.apiActivate),
		api("POST /api/v1/scrimmages", Member, s.apiChallenge),
		api("GET /api/v1/scrimmages", Member, s.apiScrimmages),
		api("GET /api/v1/games", Member, s.apiGames),
		api("GET /api/v1/games/{id}", Member, s.apiGame),
		direct(api("GET /api/v1/games/{id}/transcript", Member, s.apiTranscript)),
		api("POST /api/v1/games/{id}/disputes", Member, s.apiFileDispute),
		api("GET /api/v1/disputes", Member, s.apiDisputes),
		api("POST /api/v1/token", Member, s.apiToken),
		api("GET /api/v1/admin/teams", Organizer, s.apiAdminTeams),
		api("POST /api/v1/admin/teams/{id}/disable", Organizer, s.apiDisable(true)),
		api("POST /api/v1/admin/teams/{id}/enable", Organizer, s.apiDisable(false)),
		api("POST /api/v1/admin/teams/{id}/rename", Organizer, s.apiRename),
		api("GET /api/v1/admin/queue", Organizer, s.apiQueue),
		api("GET /api/v1/admin/scrimmages", Organizer, s.apiAdminScrimmages),
		api("POST /api/v1/admin/submissions/{id}/revalidate", Organizer, s.apiRevalidate),
		api("POST /api/v1/admin/submissions/{id}/admit", Organizer, s.apiAdmit(false)),
		api("POST /api/v1/admin/submissions/{id}/withdraw", Organizer, s.apiAdmit(true)),
		api("GET /api/v1/admin/audit", Organizer, s.apiAudit),
		api("GET /api/v1/admin/outlook", Organizer, s.apiOutlook),
		api("GET /api/v1/admin/workers", Organizer, s.apiWorkers),
		api("POST /api/v1/admin/workers/{name}/readmit", Organizer, s.apiReadmit),
		api("POST /api/v1/admin/disputes/{id}/rerun", Organizer, s.disputeAction(true, s.rerun)),
		api("POST /api/v1/admin/disputes/{id}/answer", Organizer, s.disputeAction(true, s.answer)),
		api("POST /api/v1/admin/close", Organizer, s.adminAction(true, s.closeUploads)),
		api("POST /api/v1/admin/reopen", Organizer, s.adminAction(true, s.reopenUploads)),
		api("POST /api/v1/admin/final", Organizer, s.adminAction(true, s.startFinal)),
		api("POST /api/v1/admin/freeze", Organizer, s.adminAction(true, s.freeze)),
		api("POST /api/v1/admin/reveal", Organizer, s.adminAction(true, s.reveal)),
	}
}

// maxBody caps a request body that is not an upload.
const maxBody = 64 << 10

// Handler is the server's HTTP handler: every route behind its access check.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.Routes() {
		mux.Handle(rt.Pattern, s.guard(rt))
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, true, &httpError{http.StatusNotFound, "not_found", "no such API route: " + r.Method + " " + r.URL.Path})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, false, &httpError{http.StatusNotFound, "not_found", "no such page"})
	})
	return securityHeaders(mux)
}

// guard answers 401 to a route's anonymous caller and 403 to a team on an
// organizer's route before the handler runs; a form posted from a session
// must carry the session's CSRF token. A request to read (GET, HEAD) is
// answered in its turn, unless its route is direct.
func (s *Server) guard(rt Route) http.Handler {
	checked := s.check(rt)
	var h http.Handler = checked
	if rt.view() {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.turns.serve(w, r, checked) })
	}
	if s.Metrics != nil {
		h = measured(rt, h, s.Metrics)
	}
	return h
}

// check is guard's work: who asks, may they, the CSRF token, then the
// handler, its error answered.
func (s *Server) check(rt Route) http.HandlerFunc {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				s.Log.Error("a request panicked", "route", rt.Pattern, "panic", v)
				writeError(w, r, rt.API, &httpError{http.StatusInternalServerError, "internal", "the server failed on this request; the organizer has the log"})
			}
		}()
		p, csrf, viaCookie, err := s.principal(r)
		if err != nil {
			writeError(w, r, rt.API, err)
			return
		}
		if rt.Access != Public && p == nil {
			writeError(w, r, rt.API, errLogin)
			return
		}
		if rt.Access == Organizer && !p.Admin {
			writeError(w, r, rt.API, errForbidden)
			return
		}
		// No client holds a connection by sending its body slowly.
		r.Body = &paced{body: r.Body, rc: http.NewResponseController(w), start: time.Now()}
		ctx := context.WithValue(r.Context(), csrfKey{}, csrf)
		if viaCookie && r.Method != http.MethodGet && r.Method != http.MethodHead && rt.Pattern != "POST /login" {
			switch {
			case sameToken(r.Header.Get("X-CSRF-Token"), csrf):
			case rt.Pattern == uploadRoute && isMultipart(r):
				// The upload form carries its token in the body, ahead of
				// the file: upload checks it before it stores a byte.
				ctx = context.WithValue(ctx, csrfInBody{}, csrf)
			case !sameToken(formValue(r, "csrf"), csrf):
				writeError(w, r, rt.API, errCSRF)
				return
			}
		}
		if !strings.HasSuffix(rt.Pattern, "/submissions") {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		handle := rt.handle
		if rt.view() {
			// Every read of a view sees the event as it stood at the
			// first: the page agrees with itself. That first read comes
			// after the asker's, and after whatever a handler notes before
			// it reads (a kept page's version).
			handle = func(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
				return s.Store.Snapshot(r.Context(), func(ctx context.Context) error { return rt.handle(w, r.WithContext(ctx), p) })
			}
		}
		if p != nil && p.Admin && r.Method != http.MethodGet && r.Method != http.MethodHead {
			// The organizer's next look at its page shows what it did.
			defer s.adminPages.changed()
		}
		if err := handle(w, r.WithContext(ctx), p); err != nil {
			he := s.classify(err, rt)
			if rt.API || strings.HasPrefix(r.URL.Path, "/api/") {
				writeError(w, r, true, he)
				return
			}
			// A refusal on a page of the event's, the asker still logged
			// in, with the way back.
			if rerr := s.render(w, r.WithContext(ctx), p, he.status, "error", http.StatusText(he.status), he.message); rerr != nil {
				writeError(w, r, false, he)
			}
		}
	})
}

type csrfKey struct{}

func contextWithCSRF(r *http.Request, csrf string) context.Context {
	return context.WithValue(r.Context(), csrfKey{}, csrf)
}

// formValue reads a field of a URL-encoded form (a multipart one has none
// here: its fields come with its body).
func formValue(r *http.Request, name string) string {
	if isMultipart(r) {
		return ""
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	return r.PostFormValue(name)
}

func isMultipart(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data")
}

// uploadRoute is the upload form's route: the one form whose CSRF token is
// read from its multipart body.
const uploadRoute = "POST /team/submissions"

// csrfInBody carries the session's CSRF token to a handler that must find
// it in the body.
type csrfInBody struct{}

var errCSRF = &httpError{http.StatusForbidden, "csrf", "the form is stale or was not sent by this site: reload the page and try again"}

const sessionCookie = "arena_session"

// principal is who asks: a Bearer token, or a session cookie; nil for
// nobody. A Bearer token that is nobody's is an error (not anonymity).
func (s *Server) principal(r *http.Request) (*event.Principal, string, bool, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		token, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return nil, "", false, &httpError{http.StatusUnauthorized, "unauthorized", "the Authorization header must be \"Bearer TOKEN\""}
		}
		p, err := s.Store.Authenticate(r.Context(), strings.TrimSpace(token))
		if errors.Is(err, event.ErrBadToken) {
			if !s.logins.failed(s.clientAddr(r)) {
				return nil, "", false, errRateLimited
			}
			return nil, "", false, &httpError{http.StatusUnauthorized, "unauthorized", "the token is unknown or its team is disabled"}
		}
		if err != nil {
			return nil, "", false, err
		}
		return &p, "", false, nil
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, "", false, nil
	}
	p, csrf, err := s.Store.Session(r.Context(), c.Value)
	if errors.Is(err, event.ErrBadToken) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	return &p, csrf, true, nil
}

// clientAddr is the address a request came from: behind the trusted
// proxies, the right-most hop of X-Forwarded-For they did not add; else
// the peer.
func (s *Server) clientAddr(r *http.Request) string {
	return s.Proxies.client(peerOf(r), strings.Join(r.Header.Values("X-Forwarded-For"), ","))
}

// secure says whether the client reached us over TLS: our own, or a
// trusted proxy's (X-Forwarded-Proto). Cookies are Secure then.
func (s *Server) secure(r *http.Request) bool {
	return s.Secure || r.TLS != nil || (s.Proxies.fromProxy(peerOf(r)) && r.Header.Get("X-Forwarded-Proto") == "https")
}

// owns says whether p may see what team owns.
func owns(p *event.Principal, team int64) bool { return p.Admin || (team != 0 && p.Team == team) }

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, &httpError{http.StatusNotFound, "not_found", "no such id: " + r.PathValue("id")}
	}
	return id, nil
}

// httpError is an answer other than success: status, a stable code and a
// sentence for the user.
type httpError struct {
	status  int
	code    string
	message string
}

func (e *httpError) Error() string { return e.message }

var (
	errLogin       = &httpError{http.StatusUnauthorized, "unauthorized", "log in with your team's token"}
	errForbidden   = &httpError{http.StatusForbidden, "forbidden", "this is not yours to see"}
	errRateLimited = &httpError{http.StatusTooManyRequests, "rate_limited", "too many failed logins from this address: wait a few minutes (a valid token is always let in)"}
)

// classify turns a handler's error into an answer; errors of our own are
// logged and answered without their detail.
func (s *Server) classify(err error, rt Route) *httpError {
	var he *httpError
	var qe *event.QuotaError
	var re *event.RefusedError
	var tl *event.TooLargeError
	var mb *http.MaxBytesError
	var ue *event.UploadError
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &mb):
		return &httpError{http.StatusRequestEntityTooLarge, "too_large", "the request is larger than the server takes"}
	case errors.Is(err, errTooSlow):
		s.Log.Warn("a request's body came too slowly", "route", rt.Pattern)
		return &httpError{http.StatusRequestTimeout, "too_slow", fmt.Sprintf("the request's body came too slowly: send at least %d KiB a second", paceRate>>10)}
	case errors.As(err, &ue):
		s.Log.Warn("an upload was not stored", "route", rt.Pattern, "why", ue.Error())
		return &httpError{http.StatusBadRequest, ue.Code, ue.Error()}
	case errors.Is(err, event.ErrNotFound):
		return &httpError{http.StatusNotFound, "not_found", "not found"}
	case errors.As(err, &qe):
		return &httpError{http.StatusTooManyRequests, "quota", qe.Error()}
	case errors.As(err, &re):
		return &httpError{http.StatusConflict, "refused", re.Error()}
	case errors.As(err, &tl):
		return &httpError{http.StatusRequestEntityTooLarge, "too_large", tl.Error()}
	}
	s.Log.Error("request", "route", rt.Pattern, "err", err)
	return &httpError{http.StatusInternalServerError, "internal", "the server failed on this request; the organizer has the log"}
}

func writeError(w http.ResponseWriter, r *http.Request, asAPI bool, err error) {
	he, ok := err.(*httpError)
	if !ok {
		he = &httpError{http.StatusInternalServerError, "internal", "the server failed on this request"}
	}
	if asAPI || strings.HasPrefix(r.URL.Path, "/api/") {
		api.WriteError(w, he.status, he.code, he.message)
		return
	}
	renderError(w, he)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := jsonBytes(v)
	if err != nil {
		// Only a value JSON cannot hold fails here: a defect of the server.
		writeError(w, nil, true, &httpError{http.StatusInternalServerError, "internal", "the server failed to write its answer: " + err.Error()})
		return
	}
	writeJSONBytes(w, status, body)
}

// writeJSONBytes answers with body, JSON written by jsonBytes (as bytes,
// or as a string kept: neither is copied on the way).
func writeJSONBytes[T []byte | string](w http.ResponseWriter, status int, body T) {
	api.WriteJSONHeader(w, status)
	// The client is gone if this fails.
	if s, ok := any(body).(string); ok {
		_, _ = io.WriteString(w, s)
	} else {
		_, _ = w.Write([]byte(body))
	}
	_, _ = io.WriteString(w, "\n")
}

// sameToken compares a sent CSRF token with the session's in constant time;
// an empty one never matches.
func sameToken(sent, want string) bool {
	return sent != "" && want != "" && subtle.ConstantTimeCompare([]byte(sent), []byte(want)) == 1
}
