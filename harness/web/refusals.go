package web

import (
	"net/http"
	"sync"

	"github.com/arenabots/arena/harness/event"
)

// refusals keeps the reasons of the organizer's actions refused lately,
// for the page each refusal is redirected to: reloaded, it shows the reason
// again and posts nothing. Only the server's own reasons are shown, by an
// id the server made, never a text a link carries.
type refusals struct {
	mu    sync.Mutex
	byID  map[string]string
	order []string
}

// refusalsKept is how many reasons are kept, the oldest let go first.
const refusalsKept = 64

func (f *refusals) add(msg string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byID == nil {
		f.byID = map[string]string{}
	}
	id := event.NewToken()[:16]
	f.byID[id] = msg
	f.order = append(f.order, id)
	if len(f.order) > refusalsKept {
		delete(f.byID, f.order[0])
		f.order = f.order[1:]
	}
	return id
}

func (f *refusals) get(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byID[id]
}

// refuse answers a refused form of the organizer's page: a redirect to the
// page (at anchor, "" or "#..."), which says why.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, why, anchor string) error {
	http.Redirect(w, r, "/admin?refused="+s.refused.add(why)+anchor, http.StatusSeeOther)
	return nil
}
