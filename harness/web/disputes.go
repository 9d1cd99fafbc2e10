package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/services"
)

// fields reads named fields of a request: a JSON object's (strings or
// numbers) or a form's.
func fields(r *http.Request, names ...string) (map[string]string, error) {
	out := map[string]string{}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		for _, n := range names {
			out[n] = formValue(r, n)
		}
		return out, nil
	}
	var body map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, &httpError{http.StatusBadRequest, "bad_request", "the body is not a JSON object: " + err.Error()}
	}
	for _, n := range names {
		switch v := body[n].(type) {
		case nil:
		case string:
			out[n] = v
		case json.Number:
			out[n] = v.String()
		default:
			return nil, &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("%q must be a string or a number", n)}
		}
	}
	return out, nil
}

// disputeRow is a dispute with what a page shows beside it.
type disputeRow struct {
	event.Dispute
	TeamName string
}

// fileDispute files p's team's dispute of the game in the path.
func (s *Server) fileDispute(r *http.Request, p *event.Principal) (event.Dispute, error) {
	if err := teamOnly(p); err != nil {
		return event.Dispute{}, err
	}
	g, err := s.ownGame(r, p)
	if err != nil {
		return event.Dispute{}, err
	}
	f, err := fields(r, "message")
	if err != nil {
		return event.Dispute{}, err
	}
	d, err := s.Store.FileDispute(r.Context(), p.Team, g, f["message"], services.Judge)
	if err != nil {
		return d, err
	}
	s.Log.Info("a dispute was filed", "dispute", d.ID, "game", g.ID, "team", p.Team)
	return disputeSeenBy(p, g, d), nil
}

func (s *Server) disputeForm(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	d, err := s.fileDispute(r, p)
	if err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/games/%d#disputes", d.Game), http.StatusSeeOther)
	return nil
}

func (s *Server) apiFileDispute(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	d, err := s.fileDispute(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"dispute": d})
	return nil
}

// apiDisputes lists the asker's team's disputes (every team's for the
// organizer).
func (s *Server) apiDisputes(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	team := p.Team
	if p.Admin {
		team = 0
	}
	list, err := s.Store.Disputes(r.Context(), team, 0, false)
	if err != nil {
		return err
	}
	for i, d := range list {
		g, err := s.Store.Game(r.Context(), d.Game)
		if err != nil {
			return err
		}
		list[i] = disputeSeenBy(p, g, d)
	}
	writeList(w, "disputes", list)
	return nil
}

// answer records the organizer's answer to the dispute in the path.
func (s *Server) answer(r *http.Request) (event.Dispute, error) {
	id, err := pathID(r)
	if err != nil {
		return event.Dispute{}, err
	}
	f, err := fields(r, "answer")
	if err != nil {
		return event.Dispute{}, err
	}
	d, err := s.Store.AnswerDispute(r.Context(), id, f["answer"])
	if err == nil {
		s.TeamChanged(d.Team)
	}
	return d, err
}

// rerun runs the turn a request names ("ply") of the disputed game again.
func (s *Server) rerun(r *http.Request) (event.Dispute, error) {
	id, err := pathID(r)
	if err != nil {
		return event.Dispute{}, err
	}
	f, err := fields(r, "ply")
	if err != nil {
		return event.Dispute{}, err
	}
	ply, err := strconv.Atoi(f["ply"])
	if err != nil || ply < 1 {
		return event.Dispute{}, &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("ply must be a turn number from 1 on, got %q", f["ply"])}
	}
	if s.Rerunner == nil {
		return event.Dispute{}, &httpError{http.StatusConflict, "refused", "this server does not run bots: use arena rerun"}
	}
	d, err := s.Rerunner.Rerun(r.Context(), id, ply)
	if err == nil {
		s.TeamChanged(d.Team)
	}
	return d, err
}

// disputeAction is an organizer's action on a dispute, answered by a
// redirect to the organizer's page (a form) or the dispute as JSON.
func (s *Server) disputeAction(api bool, act func(*http.Request) (event.Dispute, error)) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
		d, err := act(r)
		var re *event.RefusedError
		if !api && errors.As(err, &re) {
			// The organizer's page again, saying why (which turns can be
			// run again, when that is why).
			return s.refuse(w, r, re.Error(), "#dispute-"+r.PathValue("id"))
		}
		if err != nil {
			return err
		}
		if api {
			writeJSON(w, http.StatusOK, map[string]any{"dispute": d})
			return nil
		}
		http.Redirect(w, r, fmt.Sprintf("/admin#dispute-%d", d.ID), http.StatusSeeOther)
		return nil
	}
}

// disputeRows are disputes with their teams' names.
func (s *Server) disputeRows(r *http.Request, list []event.Dispute) ([]disputeRow, error) {
	if len(list) == 0 {
		return nil, nil
	}
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]disputeRow, len(list))
	for i, d := range list {
		out[i] = disputeRow{Dispute: d, TeamName: names.Team(d.Team)}
	}
	return out, nil
}
