package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/event"
)

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	return s.render(w, r, p, http.StatusOK, "login", "Log in", "")
}

func (s *Server) login(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	// A page elsewhere must not log a visitor's browser in as its own
	// team (the visitor would then upload into it): the login form is
	// refused unless this site's own page posted it.
	if !sameSite(r) {
		return errCrossSite
	}
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

var errCrossSite = &httpError{http.StatusForbidden, "csrf", "log in from this site's own login page: the form was posted from another site, or by a browser that does not say from where"}

// sameSite says whether a form was posted from this site's own page: the
// browser's Sec-Fetch-Site when it sends one, else Origin, else Referer, as
// the request's host. A post that says none of them is refused.
func sameSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return true
	case "":
	default:
		return false
	}
	from := r.Header.Get("Origin")
	if from == "" || from == "null" {
		from = r.Header.Get("Referer")
	}
	if from == "" || from == "null" {
		return false
	}
	u, err := url.Parse(from)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}
