package web

import (
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"os"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/validate"
)

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
	// Notice says what the organizer's action just did.
	Notice string
	Report *validate.Report
	First  *validate.Check
	Build  string
	// Games are the submission's games, drawn.
	Games template.HTML
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
	d.First = rep.First()
	for _, c := range rep.Checks {
		if c.Name == "build" && c.Evidence != nil {
			d.Build = c.Evidence.Output
		}
	}
	games, err := s.Store.GamesOfSubmission(r.Context(), sub.ID)
	if err != nil {
		return d, err
	}
	names, err := s.Store.Names(r.Context())
	if err != nil {
		return d, err
	}
	d.Games, err = drawGames(gameRows(games, sub.Team, names))
	return d, err
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
	if p.Admin {
		d.Notice = adminNotices[r.URL.Query().Get("notice")]
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
	return writeFragment(w, "submission", "report", d)
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
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": sub.Filename}))
	_, err = io.Copy(w, f)
	return err
}
