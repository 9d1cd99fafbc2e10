package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/arenabots/arena/harness/event"
)

// challenge queues p's team's challenge of the rival a request names: the
// form field or JSON "rival", a team id, or 0 for the built-in random bot.
func (s *Server) challenge(r *http.Request, p *event.Principal) (event.Scrimmage, error) {
	if err := teamOnly(p); err != nil {
		return event.Scrimmage{}, err
	}
	var rival int64
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			Rival int64 `json:"rival"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return event.Scrimmage{}, &httpError{http.StatusBadRequest, "bad_request", `send {"rival": TEAM_ID} (0: the built-in random bot)`}
		}
		rival = body.Rival
	} else {
		v, err := strconv.ParseInt(r.PostFormValue("rival"), 10, 64)
		if err != nil || v < 0 {
			return event.Scrimmage{}, &httpError{http.StatusBadRequest, "bad_request", "name the rival team's id (0: the built-in random bot)"}
		}
		rival = v
	}
	sc, err := s.Store.AddScrimmage(r.Context(), s.Config, p.Team, rival)
	if err != nil {
		return sc, err
	}
	s.teamPages.changed(p.Team)
	s.WakePlayer()
	return sc, nil
}

func (s *Server) scrimmageForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if _, err := s.challenge(r, p); err != nil {
		return err
	}
	http.Redirect(w, r, "/team?notice=challenged", http.StatusSeeOther)
	return nil
}

func (s *Server) apiChallenge(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sc, err := s.challenge(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"scrimmage": sc})
	return nil
}

func (s *Server) apiScrimmages(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := teamOnly(p); err != nil {
		return err
	}
	list, err := s.Store.Scrimmages(r.Context(), p.Team, 100)
	if err != nil {
		return err
	}
	writeList(w, "scrimmages", list)
	return nil
}

func (s *Server) apiAdminScrimmages(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	list, err := s.Store.Scrimmages(r.Context(), 0, 200)
	if err != nil {
		return err
	}
	writeList(w, "scrimmages", list)
	return nil
}
