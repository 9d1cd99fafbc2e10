package web

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arenabots/arena/harness/event"
	"github.com/arenabots/arena/harness/transcript"
	"github.com/arenabots/arena/harness/validate"
)

type eventInfo struct {
	Game   string       `json:"game"`
	Title  string       `json:"title"`
	Opens  *time.Time   `json:"opens,omitempty"`
	Closes *time.Time   `json:"closes,omitempty"`
	Open   bool         `json:"open"`
	Teams  []event.Team `json:"teams"`
}

// writeList answers a list under key, an empty one as [] (never null).
func writeList[T any](w http.ResponseWriter, key string, list []T) {
	if list == nil {
		list = []T{}
	}
	writeJSON(w, http.StatusOK, map[string]any{key: list})
}

func (s *Server) apiEvent(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	teams, err := s.Store.Teams(r.Context())
	if err != nil {
		return err
	}
	info := eventInfo{Game: s.Config.Game, Title: s.Config.Title, Open: s.Config.Open(time.Now()), Teams: []event.Team{}}
	if info.Title == "" {
		info.Title = s.Game.Title()
	}
	if !s.Config.Opens.IsZero() {
		info.Opens = &s.Config.Opens.Time
	}
	if !s.Config.Closes.IsZero() {
		info.Closes = &s.Config.Closes.Time
	}
	for _, t := range teams {
		if !t.Disabled {
			info.Teams = append(info.Teams, event.Team{ID: t.ID, Name: t.Name, Created: t.Created})
		}
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

func (s *Server) apiMe(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	out := struct {
		Admin bool        `json:"admin"`
		Team  *event.Team `json:"team,omitempty"`
	}{Admin: p.Admin}
	if p.Team != 0 {
		t, err := s.Store.Team(r.Context(), p.Team)
		if err != nil {
			return err
		}
		out.Team = &t
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) apiSubmissions(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := teamOnly(p); err != nil {
		return err
	}
	subs, err := s.Store.Submissions(r.Context(), p.Team)
	if err != nil {
		return err
	}
	writeList(w, "submissions", subs)
	return nil
}

func (s *Server) apiUpload(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := teamOnly(p); err != nil {
		return err
	}
	sub, err := s.upload(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"submission": sub})
	return nil
}

func (s *Server) apiSubmission(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sub, err := s.pathSubmission(r, p)
	if err != nil {
		return err
	}
	out := struct {
		Submission event.Submission `json:"submission"`
		Report     *validate.Report `json:"report"`
		Games      []event.Game     `json:"games"`
	}{Submission: sub, Games: []event.Game{}}
	if event.Done(sub.State) && sub.State != event.Errored {
		if out.Report, err = validate.LoadReport(s.Store.ValidationDir(sub.ID)); err != nil {
			return err
		}
		games, err := s.Store.GamesOfSubmission(r.Context(), sub.ID)
		if err != nil {
			return err
		}
		out.Games = append(out.Games, games...)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) apiReportText(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sub, err := s.pathSubmission(r, p)
	if err != nil {
		return err
	}
	if !event.Done(sub.State) {
		return &httpError{http.StatusConflict, "not_done", "the validation is " + string(sub.State) + ": the report follows when it is done"}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "private, no-store")
	if sub.State == event.Errored {
		_, err := w.Write([]byte(sub.Summary + "\n"))
		return err
	}
	data, err := os.ReadFile(filepath.Join(s.Store.ValidationDir(sub.ID), validate.ReportText))
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (s *Server) apiActivate(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	sub, err := s.activate(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"submission": sub})
	return nil
}

// apiGames lists games newest first, as the games page does: a team's own,
// or every team's for the organizer (?team= one team's); ?kind= one kind;
// ?page= (from 1) of gamesPerPage*4 games.
func (s *Server) apiGames(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	q := r.URL.Query()
	query := event.GameQuery{Team: p.Team, Kind: q.Get("kind"), Limit: 4 * gamesPerPage}
	if query.Kind != "" && !slices.Contains(event.GameKinds, query.Kind) {
		return &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("kind: want one of %s, got %q", strings.Join(event.GameKinds, ", "), query.Kind)}
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("page must be a number from 1, got %q", v)}
		}
		query.Offset = (n - 1) * query.Limit
	}
	if v := q.Get("team"); v != "" && p.Admin {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return &httpError{http.StatusBadRequest, "bad_request", fmt.Sprintf("team must be a team's number, got %q", v)}
		}
		query.Team = n
	}
	key, kept, total, err := s.teamList(r.Context(), "api", p.Team, event.TeamNames{}, query)
	if err != nil {
		return err
	}
	if kept == "" {
		games, total, err := s.listGames(r.Context(), key, total, query)
		if err != nil {
			return err
		}
		body, err := gamesJSON(games, total)
		if err != nil {
			return err
		}
		kept = string(body)
		s.keepList(key, kept)
	}
	writeJSONBytes(w, http.StatusOK, kept)
	return nil
}

func (s *Server) apiGame(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"game": g})
	return nil
}

func (s *Server) apiTranscript(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	g, err := s.ownGame(r, p)
	if err != nil {
		return err
	}
	path := filepath.Join(s.Store.MatchDir(g), transcript.FileName)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "private, no-store")
	keep, redact := ownSide(p, g)
	if !redact {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	}
	lines, err := transcript.ReadFile(path)
	if err != nil {
		return err
	}
	copy, err := transcript.Redact(lines, keep)
	if err != nil {
		return err
	}
	_, err = w.Write(copy)
	return err
}

func (s *Server) apiToken(w http.ResponseWriter, r *http.Request, p *event.Principal) error {
	if err := teamOnly(p); err != nil {
		return err
	}
	token, err := s.Store.NewTeamToken(r.Context(), p.Team)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
	return nil
}

func (s *Server) apiAdminTeams(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	teams, err := s.Store.Teams(r.Context())
	if err != nil {
		return err
	}
	writeList(w, "teams", teams)
	return nil
}

func (s *Server) apiDisable(disabled bool) func(http.ResponseWriter, *http.Request, *event.Principal) error {
	return func(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if err := s.Store.SetDisabled(r.Context(), id, disabled); err != nil {
			return err
		}
		t, err := s.Store.Team(r.Context(), id)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"team": t})
		return nil
	}
}

func (s *Server) apiQueue(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	return s.apiQueueView(w, r)
}

func (s *Server) apiRevalidate(w http.ResponseWriter, r *http.Request, _ *event.Principal) error {
	if err := s.revalidate(r); err != nil {
		return err
	}
	id, _ := pathID(r)
	sub, err := s.Store.Submission(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"submission": sub})
	return nil
}
