package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/roster"
)

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
	// Teams are a page of the teams (teamsPerPage, by name) whose name
	// holds Find, of TeamsTotal.
	Teams                 []event.Team
	Find                  string
	TeamsPage, TeamsPages int
	TeamsTotal            int
	TeamsFirst, TeamsLast int
	Queue                 []event.Submission
	Failures              []event.Submission
	Names                 event.TeamNames
	// Outlook is who the final plays and who it leaves out.
	Outlook event.Outlook
	// Audit are the organizer's last actions.
	Audit []event.AuditEntry
	// Workers are the worker machines enrolled in the event.
	Workers []event.EventWorker
	// Unplayed counts the final's games its last run left unplayed.
	Unplayed int
	// Estimate is what the final plays and how long it takes, from the
	// games played here.
	Estimate event.Estimate
	// HostReplays count the games played again, by kind: because the
	// host kept a bot waiting for a CPU past its turn's cap, or because
	// their sandbox failed (a Pod lost, a container gone).
	HostReplays map[string]event.Replays
	// Plays are what waits and what plays, where and for how long, and
	// what looks stuck: drawn with the page.
	Plays queueView
	// Refused is why the action just asked for was refused ("": none).
	Refused string
	// Notice says what the action just asked for did.
	Notice string
}

// adminNotices are the notices an action's redirect asks the organizer's
// page to show.
var adminNotices = map[string]string{
	"renamed":    "The team is renamed: its pages, games and standings show the new name; it plays under its bot name still.",
	"admitted":   "The submission is admitted: it plays as if it had passed (the team's page says so, with your reason).",
	"withdrawn":  "The admission is withdrawn: the submission plays no more.",
	"reopened":   "Uploads are open again: nothing is pinned; scrimmages and the ladder go on.",
	"readmitted": "The worker is admitted again: the queue lets it in within seconds.",
}

// teamsPerPage is how many teams a page of the organizer's table shows.
const teamsPerPage = 100

// teamsQuery reads the organizer's teams table's page (teams, from 1) and
// the name it looks for (find).
func teamsQuery(r *http.Request) (find string, page int, err error) {
	q := r.URL.Query()
	page = 1
	if v := q.Get("teams"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 {
			return "", 0, &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("teams must be a page number from 1, got %q", v)}
		}
	}
	find = strings.TrimSpace(q.Get("find"))
	if len(find) > 100 {
		return "", 0, &httpError{http.StatusBadRequest, "bad_request", "find: a team's name is 100 characters at most"}
	}
	return find, page, nil
}

// TeamsLink is the address of a page of the teams table, with the same
// name looked for.
func (d adminData) TeamsLink(page int) string {
	v := url.Values{}
	if d.Find != "" {
		v.Set("find", d.Find)
	}
	if page > 1 {
		v.Set("teams", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/admin#teams"
	}
	return "/admin?" + v.Encode() + "#teams"
}

func (s *Server) adminPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	q := r.URL.Query()
	csrf, _ := r.Context().Value(csrfKey{}).(string)
	// A page saying why a form was refused, or what it did, is drawn for
	// its asker; the others are kept a second, for every session.
	if q.Has("refused") || q.Has("notice") {
		body, err := s.adminBody(r, p)
		if err != nil {
			return err
		}
		return writePage(w, body)
	}
	body, err := s.adminPages.pages.get(r.URL.RawQuery, func() ([]byte, error) {
		return s.adminBody(r.WithContext(context.WithValue(r.Context(), csrfKey{}, csrfStandIn)), p)
	})
	if err != nil {
		return err
	}
	return writeWithCSRF(w, body, csrf)
}

// adminTTL is how long the organizer's page is kept: a validation or a game
// that ended shows a second later; what the organizer did shows at once
// (every form it posts drops the pages kept). What depends on the time
// (how long a game has been held, whether it looks stuck) is drawn with
// the page, from the time it is drawn: a second old at most.
const adminTTL = time.Second

// kept keeps values of the organizer's page for adminTTL at most, and not
// past a change (changed). A value kept too long, or from before a change,
// is drawn again once, by the first to ask: the others wait for that
// drawing, rather than each draw its own.
type kept[T any] struct {
	mu      sync.Mutex
	gen     uint64
	vals    map[string]keptValue[T]
	drawing map[string]chan struct{}
}

type keptValue[T any] struct {
	gen   uint64
	until time.Time
	v     T
}

// get is the value of key: kept, or drawn and kept.
func (k *kept[T]) get(key string, draw func() (T, error)) (T, error) {
	for {
		k.mu.Lock()
		if v, ok := k.vals[key]; ok && v.gen == k.gen && time.Now().Before(v.until) {
			k.mu.Unlock()
			return v.v, nil
		}
		if wait, ok := k.drawing[key]; ok {
			k.mu.Unlock()
			<-wait
			continue
		}
		if k.drawing == nil {
			k.drawing = map[string]chan struct{}{}
		}
		done := make(chan struct{})
		k.drawing[key] = done
		gen := k.gen
		k.mu.Unlock()
		v, err := draw()
		k.mu.Lock()
		delete(k.drawing, key)
		close(done)
		if err == nil && gen == k.gen { // not drawn from data read before a change
			if k.vals == nil || len(k.vals) > 64 {
				k.vals = map[string]keptValue[T]{}
			}
			k.vals[key] = keptValue[T]{gen: gen, until: time.Now().Add(adminTTL), v: v}
		}
		k.mu.Unlock()
		return v, err
	}
}

// changed drops every value kept.
func (k *kept[T]) changed() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
}

// adminPages are the organizer's pages kept, by their query, and who
// would play the final, which each of them shows.
type adminPages struct {
	pages   kept[[]byte]
	outlook kept[event.Outlook]
}

// changed drops what is kept: the organizer did something.
func (a *adminPages) changed() {
	a.pages.changed()
	a.outlook.changed()
}

// adminBody is the organizer's page drawn, with why a form was refused
// (?refused=ID) or what it did (?notice=...) when the address says.
func (s *Server) adminBody(r *http.Request, p *event.Principal) ([]byte, error) {
	d := adminData{Refused: s.refused.get(r.URL.Query().Get("refused")), Notice: adminNotices[r.URL.Query().Get("notice")]}
	var err error
	if d.Outlook, err = s.adminPages.outlook.get("", func() (event.Outlook, error) { return s.Store.FinalOutlook(r.Context()) }); err != nil {
		return nil, err
	}
	if d.Audit, err = s.Store.Audit(r.Context(), 50); err != nil {
		return nil, err
	}
	if d.Workers, err = s.Store.EventWorkers(); err != nil {
		return nil, err
	}
	if d.HostReplays, err = s.Store.HostReplayCounts(r.Context()); err != nil {
		return nil, err
	}
	if d.Find, d.TeamsPage, err = teamsQuery(r); err != nil {
		return nil, err
	}
	if d.Teams, d.TeamsTotal, err = s.Store.TeamsPage(r.Context(), d.Find, (d.TeamsPage-1)*teamsPerPage, teamsPerPage); err != nil {
		return nil, err
	}
	d.TeamsPages = max(1, (d.TeamsTotal+teamsPerPage-1)/teamsPerPage)
	d.TeamsFirst, d.TeamsLast = (d.TeamsPage-1)*teamsPerPage+1, (d.TeamsPage-1)*teamsPerPage+len(d.Teams)
	if d.TeamsPage > d.TeamsPages {
		return nil, &httpError{http.StatusNotFound, "not_found", fmt.Sprintf("there are %d pages of teams", d.TeamsPages)}
	}
	if d.Queue, err = s.Store.Queue(r.Context()); err != nil {
		return nil, err
	}
	if d.Failures, err = s.Store.RecentFailures(r.Context(), 30); err != nil {
		return nil, err
	}
	if d.Names, err = s.Store.Names(r.Context()); err != nil {
		return nil, err
	}
	if d.Scrimmages, err = s.Store.Scrimmages(r.Context(), 0, 30); err != nil {
		return nil, err
	}
	if d.Plays, err = s.queueOf(r.Context(), d.Queue, d.Names, time.Now().UTC()); err != nil {
		return nil, err
	}
	if err := s.adminFinal(r, &d); err != nil {
		return nil, err
	}
	return s.pageBytes(r, p, "admin", "Organizer", d)
}

func (s *Server) disableForm(disabled bool) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if err := s.Store.SetDisabled(r.Context(), id, disabled); err != nil {
			var re *event.RefusedError
			if errors.As(err, &re) {
				return s.refuse(w, r, re.Error(), "#teams")
			}
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

// renameForm gives a team another name, the one people read.
func (s *Server) renameForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if _, err := s.rename(r); err != nil {
		var re *event.RefusedError
		if errors.As(err, &re) {
			return s.refuse(w, r, re.Error(), "#teams")
		}
		return err
	}
	http.Redirect(w, r, "/admin?notice=renamed#teams", http.StatusSeeOther)
	return nil
}

func (s *Server) rename(r *http.Request) (event.Team, error) {
	id, err := pathID(r)
	if err != nil {
		return event.Team{}, err
	}
	f, err := fields(r, "name")
	if err != nil {
		return event.Team{}, err
	}
	t, err := s.Store.Rename(r.Context(), id, f["name"])
	if err == nil {
		s.renamed()
	}
	return t, err
}

// renamed drops what the server keeps of pages that show teams' names.
func (s *Server) renamed() {
	s.homeChanged()
	s.teamPages.changedAll()
}

func (s *Server) apiRename(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	t, err := s.rename(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"team": t})
	return nil
}

// admit lets a failed submission play, with the organizer's reason
// ("reason" of a form or a JSON body); withdraw takes that back.
func (s *Server) admit(r *http.Request, withdraw bool) (event.Submission, error) {
	id, err := pathID(r)
	if err != nil {
		return event.Submission{}, err
	}
	var sub event.Submission
	if withdraw {
		sub, err = s.Store.Withdraw(r.Context(), id)
	} else {
		f, ferr := fields(r, "reason")
		if ferr != nil {
			return event.Submission{}, ferr
		}
		sub, err = s.Store.Admit(r.Context(), id, f["reason"])
	}
	if err == nil {
		s.teamPages.changed(sub.Team)
		s.Changed(sub)
		s.homeChanged()
	}
	return sub, err
}

func (s *Server) admitForm(withdraw bool) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
		sub, err := s.admit(r, withdraw)
		if err != nil {
			var re *event.RefusedError
			if errors.As(err, &re) {
				return s.refuse(w, r, re.Error(), "#failures")
			}
			return err
		}
		notice := "admitted"
		if withdraw {
			notice = "withdrawn"
		}
		http.Redirect(w, r, fmt.Sprintf("/submissions/%d?notice=%s", sub.ID, notice), http.StatusSeeOther)
		return nil
	}
}

func (s *Server) apiAdmit(withdraw bool) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
		sub, err := s.admit(r, withdraw)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"submission": sub})
		return nil
	}
}

func (s *Server) apiAudit(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	list, err := s.Store.Audit(r.Context(), 500)
	if err != nil {
		return err
	}
	writeList(w, "audit", list)
	return nil
}

func (s *Server) apiOutlook(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	look, err := s.Store.FinalOutlook(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, look)
	return nil
}

// readmit lets a suspended worker in again.
func (s *Server) readmit(r *http.Request) error {
	name := r.PathValue("name")
	if roster.CheckName(name) != nil {
		return &httpError{http.StatusNotFound, "not_found", "no such worker"}
	}
	return s.Store.Readmit(r.Context(), name)
}

func (s *Server) readmitForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := s.readmit(r); err != nil {
		var re *event.RefusedError
		if errors.As(err, &re) {
			return s.refuse(w, r, re.Error(), "#workers")
		}
		return err
	}
	http.Redirect(w, r, "/admin?notice=readmitted#workers", http.StatusSeeOther)
	return nil
}

func (s *Server) apiReadmit(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := s.readmit(r); err != nil {
		return err
	}
	return s.apiWorkers(w, r, p)
}

// apiWorkers lists the enrolled workers, each with its suspension, and
// when workers play through this server, each one's health ("health").
func (s *Server) apiWorkers(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	list, err := s.Store.EventWorkers()
	if err != nil {
		return err
	}
	if list == nil {
		list = []event.EventWorker{}
	}
	health, err := s.workersHealth()
	if err != nil {
		return err
	}
	out := map[string]any{"workers": list}
	if health != nil {
		out["health"] = health
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
