package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/event"
)

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	return s.render(w, r, p, http.StatusOK, "login", "Log in", "")
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	p, err := s.Store.Authenticate(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
	if errors.Is(err, event.ErrBadToken) {
		if !s.logins.failed(s.clientAddr(r)) {
			return s.render(w, r, nil, http.StatusTooManyRequests, "login", "Log in", errRateLimited.message)
		}
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
