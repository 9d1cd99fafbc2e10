package web

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/arenabots/arena/harness/event"
)

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
	// A form posted from a session carries its CSRF token in the body,
	// ahead of the file.
	csrf, checked := r.Context().Value(csrfInBody{}).(string)
	checked = !checked
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
		if part.FormName() == "csrf" {
			sent, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				return event.Submission{}, &event.UploadError{Code: "incomplete", Msg: "the upload was cut short: send it again", Err: err}
			}
			checked = checked || sameToken(string(sent), csrf)
			continue
		}
		if part.FormName() != "file" {
			continue
		}
		if !checked {
			return event.Submission{}, errCSRF
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
	d, err := s.teamData(r, p, csrf)
	if err != nil {
		return err
	}
	d.Token = token
	r = r.WithContext(contextWithCSRF(r, csrf))
	return s.render(w, r, p, http.StatusOK, "team", d.TeamName, d)
}
